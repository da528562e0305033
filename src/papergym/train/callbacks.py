"""What the TRL stages share: their logs in our metrics JSONL, and a clean log on resume.

``transformers.Trainer`` hands every log dict (loss, learning rate, and whatever the TRL trainer
adds: reward, KL, completion lengths, ``num_tokens``...) to its callbacks' ``on_log``.
:class:`MetricsCallback` writes each one as a record of the stage's ``metrics.jsonl``, so every
stage of a run, ours or TRL's, is monitored the same way.

A resumed stage restarts from its last checkpoint, which may be older than the last logged step
(a crash between a log and the next save). :func:`trim_metrics` drops the records past the
checkpoint first, so each step appears once in the file, from the timeline that continued.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
from transformers import (
    PrinterCallback,
    ProgressCallback,
    Trainer,
    TrainerCallback,
    TrainerControl,
    TrainerState,
    TrainingArguments,
)

from papergym.jsonl import write_text_atomic
from papergym.train.config import GRPOSettings, SFTSettings
from papergym.train.models import (
    load_model,
    load_tokenizer,
    lora_config,
    save_merged,
    torch_dtype,
)
from papergym.train.run import MetricsLog, StageContext, StepHook

T = TypeVar("T", bound=Trainer)

"""Called after each logged step with the step and its record (a CLI progress bar...)."""

TOKENS_PER_SECOND = "tokens_per_second"
_END_OF_TRAINING = "train_runtime"
"""A key only the trainer's final summary log has."""


class MetricsCallback(TrainerCallback):
    """Writes each trainer log (at its global step) to ``metrics``; generic over TRL trainers.

    ``rename`` maps the trainer's metric names to ours (e.g. ``completions/mean_length`` →
    ``completion_length``, as OPSD names it); other keys are written as the trainer named
    them. ``on_step`` sees each record after it is written. Non-finite numbers are written as
    ``null``: TRL reports a mean with no valid values (every reward unscored) as NaN or None,
    and strict JSON readers reject NaN. The trainer's end-of-training log (runtime, mean loss)
    is not a step and is not written; the stage summary covers it.

    When a log holds ``token_key`` (a running token count, as both TRL trainers log it as
    ``num_tokens``), the record also gets ``tokens_per_second``: tokens added since the previous
    log divided by the wall time between the two, so it includes everything the step did
    (generation and judging too, for GRPO). What the count covers is the trainer's choice.
    """

    def __init__(
        self,
        metrics: MetricsLog,
        rename: Mapping[str, str] | None = None,
        token_key: str = "num_tokens",
        on_step: StepHook | None = None,
    ) -> None:
        self.metrics = metrics
        self.rename = dict(rename or {})
        self.token_key = token_key
        self.on_step = on_step
        self._clock = time.perf_counter()
        self._tokens = 0.0

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        # On resume the state is already restored here, so a count that carries across
        # sessions (GRPO's num_input_tokens_seen) starts from its saved value; SFT's count
        # restarts at 0 each session and leaves the state's at 0, which matches too.
        self._clock = time.perf_counter()
        self._tokens = float(state.num_input_tokens_seen or 0)

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not logs or _END_OF_TRAINING in logs or not state.is_world_process_zero:
            return
        values = {self.rename.get(key, key): _finite(value) for key, value in logs.items()}
        rate = self._tokens_per_second(logs.get(self.token_key))
        if rate is not None:
            values[TOKENS_PER_SECOND] = rate
        self.metrics.write(state.global_step, **values)
        if self.on_step is not None:
            self.on_step(state.global_step, values)

    def _tokens_per_second(self, count: Any) -> float | None:
        now = time.perf_counter()
        elapsed, self._clock = now - self._clock, now
        if not isinstance(count, int | float) or not math.isfinite(count):
            return None
        # A count below the previous one restarted (a new session): all of it is new.
        added = count - self._tokens if count >= self._tokens else count
        self._tokens = float(count)
        return round(added / elapsed, 2) if elapsed > 0 else None


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def trim_metrics(metrics: MetricsLog, last_step: int) -> None:
    """Drop the records logged after ``last_step`` (the step a resumed run restarts from)."""
    if not metrics.path.is_file():
        return
    lines = metrics.path.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.strip() and json.loads(line)["step"] <= last_step]
    if len(kept) != len(lines):
        write_text_atomic(metrics.path, "".join(line + "\n" for line in kept))


def resume_point(ctx: StageContext) -> Path | None:
    """The checkpoint to continue from (None: start afresh), with the metrics trimmed to it.

    Trimming to step 0 on a fresh start drops the records of an attempt that died before its
    first checkpoint, which the new attempt logs again.
    """
    checkpoint = ctx.latest_checkpoint()
    step = 0
    if checkpoint is not None:
        state = json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
        step = int(state["global_step"])
    trim_metrics(ctx.metrics, step)
    return checkpoint


def stage_summary(ctx: StageContext, steps: int, resumed: Path | None) -> dict[str, Any]:
    """What every stage's summary holds (the keys OPSD's has too), over the stage's whole log."""
    records = ctx.metrics.read()
    rate = mean_of(records, TOKENS_PER_SECOND)
    return {
        "steps": steps,
        "mean_loss": mean_of(records, "loss"),
        "last_loss": last_of(records, "loss"),
        "tokens_per_second": round(rate, 2) if rate is not None else None,
        "resumed_from": resumed.name if resumed else None,
    }


def mean_of(records: list[dict[str, Any]], key: str) -> float | None:
    """The mean of ``key`` over the records that have a number for it (None if none do)."""
    values = [r[key] for r in records if isinstance(r.get(key), int | float)]
    return sum(values) / len(values) if values else None


def last_of(records: list[dict[str, Any]], key: str) -> float | None:
    """The last number logged for ``key`` (None if none was)."""
    values = [r[key] for r in records if isinstance(r.get(key), int | float)]
    return values[-1] if values else None


def trainer_args(ctx: StageContext, settings: SFTSettings | GRPOSettings) -> dict[str, Any]:
    """The TrainingArguments both TRL stages share, spelled out so a TRL default change cannot
    move a run: schedule, checkpoints, logging, seed and precision."""
    on_gpu = torch.cuda.is_available()
    return {
        "output_dir": str(ctx.checkpoints_dir),
        "max_steps": settings.steps,
        "learning_rate": settings.learning_rate,
        "lr_scheduler_type": "constant",  # as OPSD and verl's default: no decay to 0 by step N
        "save_strategy": "steps",
        "save_steps": settings.save_every,
        "save_total_limit": settings.keep_checkpoints,
        "logging_steps": 1,
        "report_to": "none",
        "disable_tqdm": True,
        "seed": ctx.config.seed,
        "use_cpu": not on_gpu,
        # TRL defaults bf16 to True; mixed precision only where the weights are bf16 on a GPU.
        "bf16": on_gpu and torch_dtype(ctx.config.model.dtype) == torch.bfloat16,
        "fp16": False,
    }


def without_console_logs(trainer: T) -> T:
    """Our metrics log and progress bar replace the per-step dicts TRL would print."""
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return trainer


def train_and_save(trainer: Trainer, ctx: StageContext, resume: Path | None) -> int:
    """Train (from ``resume`` when given), save the merged model to ``ctx.final_dir``; returns
    the global step reached."""
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    # The tokenizer as loaded, not as the trainer may have adjusted it (padding side...).
    model = trainer.accelerator.unwrap_model(trainer.model)
    save_merged(model, load_tokenizer(ctx.init_model), ctx.final_dir)
    return trainer.state.global_step


def trainer_inputs(ctx: StageContext, callbacks: Sequence[TrainerCallback]) -> dict[str, Any]:
    """What both TRL trainers are built from: the stage's model and tokenizer, our callbacks,
    and the LoRA config when LoRA is on."""
    lora = ctx.config.lora
    return {
        "model": load_model(ctx.init_model, ctx.config.model.dtype),
        "processing_class": load_tokenizer(ctx.init_model),
        "callbacks": list(callbacks),
        "peft_config": lora_config(lora) if lora.enabled else None,
    }
