"""CycleResearcher's iterative preference training (SPEC §5): ``papergym train cycle``.

Each round tells the same short story. The round takes a fresh share of the writing inputs
(``cycle.input_fraction``, a third by default, unused inputs first). The current policy writes
``cycle.samples`` papers for each at ``cycle.temperature``. The reviewer scores every paper
through ``ReviewReward``; a second, independent reviewer (``cycle.watch``) scores them too. For
each input the best-reviewed paper becomes *chosen* and the worst *rejected*; inputs whose
papers tie or could not be scored give no pair, and are counted. The policy then trains on the
pairs, SimPO plus α·NLL on the chosen text (TRL's CPO trainer, ``loss_type="simpo"``,
``cpo_alpha`` = α; or plain SFT on the chosen papers, the comparison), and the next round
starts from the new weights.

The watch is there because a policy trained against one reviewer can learn what that reviewer
likes rather than better papers (the paper warns of it): when the reward's scores rise while
the watch's agreement falls, the run is hacking its reviewer.

Layout of a run folder::

    config.yaml              the resolved configuration
    tiny-model/              the in-process model, when model.name_or_path is ``tiny``
    round-1/
        papers.jsonl         every generated paper with its scores (written once scored)
        pairs.jsonl          the preference pairs; skips.jsonl: inputs without one, and why
        final/               the weights after the round (LoRA merged)
        metrics.json         written last: a round with it is finished
    summary.json             every round's metrics and the final model

A killed run resumes at the first unfinished round; papers already generated and scored there
are kept, and its training restarts from the round's start. Asking for more ``cycle.rounds``
continues a finished run (round k samples the same inputs whatever the total); any other change
of the configuration is refused.
"""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import yaml

from papergym.errors import BadInputError, PaperGymError
from papergym.jsonl import read_jsonl, write_jsonl, write_text_atomic
from papergym.review.reward import endpoint_failed
from papergym.settings.models import PaperGymConfig
from papergym.train.cycle_records import (
    CycleInput,
    Pair,
    Paper,
    Skip,
    round_inputs,
    round_metrics,
    select_pair,
)
from papergym.train.cycle_reviewers import PaperScorer
from papergym.train.progress import PhaseHook
from papergym.train.settings import CycleSettings

PREPARE_KIND = "write-prepare"
RoundHook = Callable[[int, str], None]
"""Told ``(round, what is happening)``: the command prints it."""
PhaseFactory = Callable[[str, int, str], PhaseHook]
"""``(name, total, unit)`` → the hook a phase of a round reports its progress to
(:meth:`papergym.train.progress.ProgressReport.phase`)."""


# --- data --------------------------------------------------------------------------------------


def load_inputs(settings: CycleSettings) -> list[CycleInput]:
    """The training split of ``cycle.data`` (a ``papergym write prepare`` folder) as inputs.

    A folder another command wrote is refused in one line, before anything is written.
    """
    from papergym.write.data import load_write_data

    if settings.data is None:
        raise BadInputError(None, "no data: give --data DATA, a `papergym write prepare` folder")
    data = load_write_data(settings.data)
    rows = data.split("train")
    if not rows:
        raise BadInputError(settings.data, "holds no training prompts (every prompt is test)")
    inputs = [
        CycleInput(id=r.id, prompt=r.prompt, system=r.system or None, keys=r.keys) for r in rows
    ]
    return inputs[: settings.max_inputs] if settings.max_inputs else inputs


def messages_of(item: CycleInput, system_prompt: str | None = None) -> list[dict[str, str]]:
    """The input as chat messages: its own system message, else ``data.system_prompt``."""
    system = item.system or system_prompt
    head = [{"role": "system", "content": system}] if system else []
    return [*head, {"role": "user", "content": item.prompt}]


# --- generation --------------------------------------------------------------------------------


def generate_papers(
    model_path: str,
    inputs: Sequence[CycleInput],
    settings: CycleSettings,
    *,
    seed: int,
    dtype: str = "auto",
    system_prompt: str | None = None,
    samples: int | None = None,
    on_batch: PhaseHook | None = None,
) -> list[list[tuple[str, int]]]:
    """``samples`` papers (default ``cycle.samples``) per input from the policy at
    ``model_path``, as ``(text, tokens)``, batched ``generation_batch_size`` inputs a call;
    ``on_batch`` is told the papers written so far after each call."""
    from papergym.train.models import load_model, load_tokenizer
    from papergym.train.opsd import encode_prompts, left_pad, stop_token_ids

    count = samples or settings.samples
    tokenizer = load_tokenizer(model_path)
    model = load_model(model_path, dtype)
    model.train(False)
    stops = stop_token_ids(model, tokenizer)
    papers: list[list[tuple[str, int]]] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for start in range(0, len(inputs), settings.generation_batch_size):
            batch = inputs[start : start + settings.generation_batch_size]
            encoded = encode_prompts(tokenizer, [messages_of(i, system_prompt) for i in batch])
            ids, mask = left_pad(encoded, tokenizer.pad_token_id)
            with torch.no_grad():
                out = model.generate(  # type: ignore[operator]
                    input_ids=ids.to(model.device),
                    attention_mask=mask.to(model.device),
                    do_sample=True,
                    temperature=settings.temperature,
                    top_p=settings.top_p,
                    top_k=0,
                    max_new_tokens=settings.max_new_tokens,
                    num_return_sequences=count,
                    pad_token_id=tokenizer.pad_token_id,
                )
            completions = out[:, ids.shape[1] :].tolist()
            for row in range(len(batch)):
                group = completions[row * count : (row + 1) * count]
                papers.append([_decoded(tokenizer, c, stops) for c in group])
            if on_batch is not None:
                on_batch(len(papers) * count, {})
    return papers


def clip_prompts(
    model_path: str, inputs: Sequence[CycleInput], max_tokens: int | None
) -> list[CycleInput]:
    """The inputs with each prompt cut to ``max_tokens`` tokens at its end (None: as given)."""
    if max_tokens is None:
        return list(inputs)
    from papergym.train.models import load_tokenizer

    tokenizer = load_tokenizer(model_path)
    clipped = []
    for item in inputs:
        ids = tokenizer(item.prompt, add_special_tokens=False)["input_ids"]
        if len(ids) > max_tokens:
            item = item.model_copy(update={"prompt": str(tokenizer.decode(ids[:max_tokens]))})
        clipped.append(item)
    return clipped


def _decoded(tokenizer: Any, tokens: list[int], stops: set[int]) -> tuple[str, int]:
    """The text up to the first end token, and how many tokens it took (the end included)."""
    end = next((i for i, t in enumerate(tokens) if t in stops), None)
    kept = tokens if end is None else tokens[:end]
    text = tokenizer.decode(kept, skip_special_tokens=True)
    return str(text).strip(), len(kept) + (0 if end is None else 1)


# --- scoring -----------------------------------------------------------------------------------


class ReviewerUnreachable(PaperGymError):
    """The reviewer's endpoint never answered for some papers of a round: the round is not
    finished (its papers are not saved), and the same command retries it."""

    def __init__(self, number: int, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__(f"round {number}: {len(reasons)} paper(s) not reviewed: {reasons[0]}")


def score_papers(
    runner: asyncio.Runner,
    inputs: Sequence[CycleInput],
    generated: Sequence[Sequence[tuple[str, int]]],
    reward: PaperScorer,
    watch: PaperScorer | None,
    phase: PhaseFactory | None = None,
    name: str = "reviewing",
) -> list[Paper]:
    """Every generated paper with the reward's score and, when there is a watch, its score;
    ``phase`` gets the progress of each reviewer (``name``, ``name`` + " (watch)")."""
    texts = [text for group in generated for text, _ in group]

    def hook(label: str) -> PhaseHook | None:
        return phase(label, len(texts), "papers") if phase is not None else None

    scores = runner.run(_score_all(reward, texts, hook(name)))
    watched = (
        runner.run(_score_all(watch, texts, hook(f"{name} (watch)")))
        if watch is not None
        else [None] * len(texts)
    )
    papers: list[Paper] = []
    index = 0
    for item, group in zip(inputs, generated, strict=True):
        for sample, (text, tokens) in enumerate(group):
            score, seen = scores[index], watched[index]
            papers.append(
                Paper(
                    input_id=item.id,
                    sample=sample,
                    text=text,
                    tokens=tokens,
                    words=len(text.split()),
                    score=score.value,
                    rating=score.rating,
                    reason=score.reason,  # a partial score's too: it may name a failure
                    watch_score=seen.value if seen is not None else None,
                )
            )
            index += 1
    return papers


async def _score_all(
    scorer: PaperScorer | None, texts: Sequence[str], on_scored: PhaseHook | None = None
) -> list[Any]:
    """The scores of ``texts``, reviewed concurrently (the scorer bounds how many at once);
    ``on_scored`` is told the count done as each one finishes."""
    assert scorer is not None
    if on_scored is None:
        return list(await scorer.ascore_many(texts))
    done = 0

    async def one(text: str) -> Any:
        nonlocal done
        (score,) = await scorer.ascore_many([text])
        done += 1
        on_scored(done, {})
        return score

    return list(await asyncio.gather(*(one(text) for text in texts)))


def pairs_of(
    inputs: Sequence[CycleInput], papers: Sequence[Paper]
) -> tuple[list[Pair], list[Skip]]:
    """One pair per input whose papers give one; the rest as skips with their reason."""
    pairs: list[Pair] = []
    skips: list[Skip] = []
    for item in inputs:
        chosen = select_pair(item, [p for p in papers if p.input_id == item.id])
        (pairs if isinstance(chosen, Pair) else skips).append(chosen)  # type: ignore[arg-type]
    return pairs, skips


# --- training ----------------------------------------------------------------------------------


def train_round(
    config: PaperGymConfig,
    init_model: str,
    pairs: Sequence[Pair],
    round_dir: Path,
    seed: int,
    phase: Callable[[int], PhaseHook] | None = None,
) -> dict[str, Any]:
    """Train one round on ``pairs`` from ``init_model``; save merged weights to round/final.

    ``phase`` is given the number of optimiser steps when training starts and returns the
    hook each step's logged values (loss...) go to."""
    from datasets import Dataset

    from papergym.train.callbacks import StepHookCallback
    from papergym.train.models import load_model, load_tokenizer, lora_config, save_merged

    settings = config.cycle
    system = config.data.system_prompt
    checkpoints = round_dir / "checkpoints"
    shutil.rmtree(checkpoints, ignore_errors=True)  # a killed round trains again from its start
    common = _trainer_args(config, checkpoints, seed)
    tokenizer = load_tokenizer(init_model)
    inputs: dict[str, Any] = {
        "model": load_model(init_model, config.model.dtype),
        "processing_class": tokenizer,
        "peft_config": lora_config(config.lora) if config.lora.enabled else None,
        "callbacks": [StepHookCallback(phase)] if phase is not None else [],
    }
    if settings.loss == "sft":
        from trl.trainer.sft_config import SFTConfig
        from trl.trainer.sft_trainer import SFTTrainer

        rows = [
            {
                "prompt": _pair_messages(p, system),
                "completion": [{"role": "assistant", "content": p.chosen}],
            }
            for p in pairs
        ]
        args = SFTConfig(
            **common, max_length=settings.max_length, completion_only_loss=True, packing=False
        )
        trainer: Any = SFTTrainer(**inputs, args=args, train_dataset=Dataset.from_list(rows))
    else:
        from papergym.train.cpo_import import cpo_classes

        trainer_class, config_class = cpo_classes()
        rows = [
            {
                "prompt": _pair_messages(p, system),
                "chosen": [{"role": "assistant", "content": p.chosen}],
                "rejected": [{"role": "assistant", "content": p.rejected}],
            }
            for p in pairs
        ]
        args = config_class(
            **common,
            loss_type="simpo",
            beta=settings.beta,
            simpo_gamma=settings.gamma,
            cpo_alpha=settings.nll_weight,
            max_length=settings.max_length,
            remove_unused_columns=False,  # the pair collator needs every column
        )
        trainer = trainer_class(**inputs, args=args, train_dataset=Dataset.from_list(rows))
    from papergym.train.trl_stage import without_console_logs

    without_console_logs(trainer)
    result = trainer.train()
    save_merged(trainer.accelerator.unwrap_model(trainer.model), tokenizer, round_dir / "final")
    shutil.rmtree(checkpoints, ignore_errors=True)
    logged = [r for r in trainer.state.log_history if "loss" in r]
    return {
        "steps": trainer.state.global_step,
        "train_loss": result.training_loss,
        "last_loss": logged[-1]["loss"] if logged else None,
        "nll_loss": logged[-1].get("nll_loss") if logged else None,
    }


def _pair_messages(pair: Pair, system_prompt: str | None) -> list[dict[str, str]]:
    item = CycleInput(id=pair.input_id, prompt=pair.prompt, system=pair.system)
    return messages_of(item, system_prompt)


def _trainer_args(config: PaperGymConfig, output: Path, seed: int) -> dict[str, Any]:
    """Every TrainingArguments setting that matters, so a TRL default change cannot move a run."""
    from papergym.train.models import torch_dtype

    settings = config.cycle
    on_gpu = torch.cuda.is_available()
    return {
        "output_dir": str(output),
        "max_steps": settings.steps or -1,
        "num_train_epochs": settings.epochs,
        "learning_rate": settings.learning_rate,
        "lr_scheduler_type": "constant_with_warmup",
        "warmup_steps": settings.warmup_ratio,
        "per_device_train_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.gradient_accumulation_steps,
        "gradient_checkpointing": settings.gradient_checkpointing,
        "save_strategy": "no",  # rounds are the unit of resumption
        "logging_steps": 1,
        "report_to": "none",
        "disable_tqdm": True,
        "seed": seed,
        "use_cpu": not on_gpu,
        "bf16": on_gpu and torch_dtype(config.model.dtype) == torch.bfloat16,
        "fp16": False,
    }


# --- the loop ----------------------------------------------------------------------------------


def round_dir(run_dir: Path, number: int) -> Path:
    return run_dir / f"round-{number}"


def run_cycle(
    config: PaperGymConfig,
    reward: PaperScorer,
    watch: PaperScorer | None,
    on_round: RoundHook | None = None,
    phase: PhaseFactory | None = None,
) -> dict[str, Any]:
    """Run ``cycle.rounds`` rounds (skipping finished ones); returns the run summary.

    ``on_round`` hears what each round is doing; ``phase`` gets the progress within it:
    papers written, papers reviewed, training steps."""
    from papergym.train.models import resolve_model_path
    from papergym.train.run import prepare_run_dir

    settings = config.cycle
    inputs = load_inputs(settings)  # bad data fails before anything is written
    by_id = {item.id: item for item in inputs}
    if len(by_id) != len(inputs):
        raise BadInputError(settings.data, "prompts.jsonl repeats an input id")
    refuse_foreign_run_dir(config.output_dir)
    # absolute: each round records the weights it ends with, and a resume from another working
    # folder must find them
    run_dir = prepare_run_dir(_as_recorded_rounds(config)).resolve()
    write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(config.resolved(), sort_keys=False))
    current = resolve_model_path(config.model, run_dir)
    plan = round_inputs(list(by_id), settings.rounds, settings.input_fraction, config.seed)
    rounds: list[dict[str, Any]] = []
    with asyncio.Runner() as runner:
        for number, ids in enumerate(plan, start=1):
            folder = round_dir(run_dir, number)
            done = folder / "metrics.json"
            if done.is_file():
                metrics = json.loads(done.read_text(encoding="utf-8"))
                _tell(on_round, number, "finished earlier; skipped")
            else:
                chosen = [by_id[i] for i in ids]
                metrics = play_round(
                    config, runner, number, folder, current, chosen, reward, watch, on_round, phase
                )
            rounds.append(metrics)
            current = metrics["model"]
    summary = {"run_dir": str(run_dir), "rounds": rounds, "final_model": current}
    write_text_atomic(run_dir / "summary.json", json.dumps(summary, indent=1, default=float))
    return summary


RUN_ENTRIES = frozenset({"config.yaml", "summary.json", "tiny-model"})
"""What a run folder holds besides its ``round-N`` folders."""


def refuse_foreign_run_dir(out: Path) -> None:
    """Refuse a folder another command wrote (a review or build folder has a config.yaml too,
    which would otherwise be read as a run with a different configuration)."""
    if not out.is_dir():
        return
    foreign = sorted(
        entry.name
        for entry in out.iterdir()
        if entry.name not in RUN_ENTRIES
        and not (entry.name.startswith("round-") and entry.name[6:].isdigit())
    )
    if foreign:
        shown = ", ".join(foreign[:3]) + (
            f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        )
        raise BadInputError(
            out, f"holds {shown}: not a `papergym train cycle` run folder; use another -o"
        )


def _as_recorded_rounds(config: PaperGymConfig) -> PaperGymConfig:
    """``config`` with the run folder's recorded ``cycle.rounds``: asking for more (or fewer)
    rounds continues a run, as round k samples the same inputs whatever the total."""
    recorded = config.output_dir / "config.yaml"
    if not recorded.is_file():
        return config
    try:
        previous = (yaml.safe_load(recorded.read_text(encoding="utf-8")) or {})["cycle"]["rounds"]
    except (KeyError, TypeError, yaml.YAMLError):
        return config  # prepare_run_dir says what is wrong with the folder
    if not isinstance(previous, int) or previous < 1:
        return config
    cycle = config.cycle.model_copy(update={"rounds": previous})
    return config.model_copy(update={"cycle": cycle})


def play_round(
    config: PaperGymConfig,
    runner: asyncio.Runner,
    number: int,
    folder: Path,
    current: str,
    inputs: Sequence[CycleInput],
    reward: PaperScorer,
    watch: PaperScorer | None,
    on_round: RoundHook | None,
    phase: PhaseFactory | None = None,
) -> dict[str, Any]:
    """One round: sample, review, pair, train; ``metrics.json`` is written last."""
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    full = {item.id: item.prompt for item in inputs}
    inputs = clip_prompts(current, inputs, config.cycle.max_prompt_tokens)
    clipped = sum(1 for item in inputs if item.prompt != full[item.id])
    papers_file = folder / "papers.jsonl"
    if papers_file.is_file():
        papers = read_jsonl(papers_file, Paper)
        _tell(on_round, number, f"{len(papers)} papers generated and scored earlier; kept")
    else:
        _tell(
            on_round,
            number,
            f"writing {config.cycle.samples} papers for each of {len(inputs)} inputs",
        )
        generated = generate_papers(
            current,
            inputs,
            config.cycle,
            seed=config.seed * 1000 + number,
            dtype=config.model.dtype,
            system_prompt=config.data.system_prompt,
            on_batch=_phase(phase, f"round {number} writing", len(inputs) * config.cycle.samples),
        )
        _tell(on_round, number, "reviewing")
        papers = score_papers(
            runner, inputs, generated, reward, watch, phase, f"round {number} reviewing"
        )
        if failed := [p.reason for p in papers if p.reason and endpoint_failed(p.reason)]:
            raise ReviewerUnreachable(number, failed)  # not unscored: never saved as a result
        write_jsonl(papers_file, papers)
    pairs, skips = pairs_of(inputs, papers)
    write_jsonl(folder / "pairs.jsonl", pairs)
    write_jsonl(folder / "skips.jsonl", skips)
    metrics: dict[str, Any] = {
        "round": number,
        "init_model": current,
        "clipped_prompts": clipped,
        **round_metrics(papers, pairs, skips),
    }
    if pairs:
        _tell(on_round, number, f"training on {len(pairs)} pairs ({config.cycle.loss})")
        training = (
            functools.partial(_training_phase, phase, f"round {number} training")
            if phase is not None
            else None
        )
        seed = config.seed * 1000 + number
        metrics.update(train_round(config, current, pairs, folder, seed, training))
        metrics["model"] = str(folder / "final")
    else:
        _tell(on_round, number, "no pair to train on; the weights stay as they were")
        metrics.update({"steps": 0, "train_loss": None, "last_loss": None, "nll_loss": None})
        metrics["model"] = current
    metrics["seconds"] = round(time.perf_counter() - started, 1)
    write_text_atomic(folder / "metrics.json", json.dumps(metrics, indent=1, default=float))
    return metrics


def _training_phase(phase: PhaseFactory, name: str, total: int) -> PhaseHook:
    return phase(name, total, "step")


def _phase(phase: PhaseFactory | None, name: str, total: int) -> PhaseHook | None:
    return phase(name, total, "papers") if phase is not None else None


def _tell(hook: RoundHook | None, number: int, what: str) -> None:
    if hook is not None:
        hook(number, what)
