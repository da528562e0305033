"""What the TRL stages (SFT, GRPO) share besides their metrics callback: the trainer's inputs and
arguments, where a stage resumes, training and saving the merged model, and the stage summary.

A resumed stage restarts from its last checkpoint, which may be older than the last logged step
(a crash between a log and the next save). :func:`resume_point` trims the metrics past the
checkpoint first (:func:`trim_metrics`), so each step appears once in the file, from the
timeline that continued.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
from transformers import PrinterCallback, ProgressCallback, Trainer, TrainerCallback

from papergym.reward.reward import RubricReward
from papergym.train.callbacks import TOKENS_PER_SECOND, EvalCallback
from papergym.train.config import GRPOSettings, SFTSettings
from papergym.train.evaluation import step_evaluator
from papergym.train.models import (
    load_model,
    load_tokenizer,
    lora_config,
    save_merged,
    torch_dtype,
)
from papergym.train.run import MetricsLog, StageContext
from papergym.train.watch import build_watch, watch_summary, watch_tracker

T = TypeVar("T", bound=Trainer)


def trim_metrics(metrics: MetricsLog, last_step: int) -> None:
    """Drop the records logged after ``last_step`` (the step a resumed run restarts from)."""
    metrics.trim(last_step)


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
        **watch_summary(ctx.stage_dir, records),
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


def eval_callbacks(
    ctx: StageContext, reward: RubricReward | None = None, watch: RubricReward | None = None
) -> list[TrainerCallback]:
    """The held-out evaluation every ``eval.steps`` steps, when it is on and something is held
    out; ``reward`` defaults to the one ``config.reward`` describes, ``watch`` to the one
    ``config.watch`` does (none when ``watch.judge`` is none)."""
    if not ctx.config.eval.steps or not ctx.rows.get("test"):
        return []
    evaluator = step_evaluator(
        ctx.config,
        ctx.stage,
        ctx.rows,
        load_tokenizer(ctx.init_model),
        reward,
        watch or build_watch(ctx.config),
    )
    if evaluator is None:
        return []
    tracker = watch_tracker(evaluator, ctx.config.watch, ctx.stage_dir, ctx.metrics)
    return [EvalCallback(evaluator, ctx.metrics, ctx.config.eval.steps, tracker=tracker)]
