"""The run folder and the pipeline: stages in order, each starting from the last one's weights.

Layout of a run folder::

    config.yaml                  the resolved configuration (defaults, file, overrides, --data)
    tiny-model/                  the in-process model, when model.name_or_path is ``tiny``
    1-opsd/                      one folder per stage, numbered in run order
        metrics.jsonl            one record per logged step (loss, reward, lengths, tokens/s...)
        checkpoints/checkpoint-N a resumable state, the last few kept
        final/                   the stage's weights, LoRA merged: the next stage starts here
        watch.jsonl              with ``watch.judge`` set: each evaluation as both judges saw it
        best/                    with ``watch.judge`` set: the weights at the watch's peak
        summary.json             written last; a stage with it is finished and is skipped
    2-grpo/ ...
    summary.json                 every stage's summary, and the final model's path

Running the same command again resumes: finished stages are skipped and an unfinished one
continues from its last checkpoint. A folder written by a different configuration is refused
(:data:`RUN_RECORD`, through :mod:`papergym.runfolder`).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from papergym.jsonl import write_text_atomic
from papergym.records import Instance
from papergym.runfolder import RunRecord, differences, resumes
from papergym.train.config import StageName, TrainConfig
from papergym.train.settings import WatchSettings

CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
IDENTITY_SECTIONS: tuple[str, ...] = (
    "model",
    "lora",
    "data",
    "seed",
    "stages",
    "opsd",
    "grpo",
    "sft",
    "reward",
    "cycle",
    "watch",
)
"""The top-level keys that change what training produces: a run folder is resumed only when
they are unchanged. The rest of the configuration (``llm``, ``serve``, ``build``, ``audit``,
often filled from ``PAPERGYM_*`` variables, the name, ``output_dir``) is recorded but does not
block a resume."""


class MetricsLog:
    """Append-only JSONL of training metrics; each record carries its stage and wall time."""

    def __init__(self, path: Path, stage: StageName) -> None:
        self.path = path
        self.stage = stage
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, step: int, **values: Any) -> None:
        record = {"stage": self.stage, "step": step, "time": round(time.time(), 3), **values}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, default=float) + "\n")

    def read(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines()]

    def trim(self, last_step: int) -> None:
        """Drop the records logged after ``last_step``, the step a resumed stage restarts from:
        its steps (and their evaluations) are logged again, so each appears once."""
        if not self.path.is_file():
            return
        lines = self.path.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line.strip() and json.loads(line)["step"] <= last_step]
        if len(kept) != len(lines):
            write_text_atomic(self.path, "".join(line + "\n" for line in kept))


@dataclass(frozen=True)
class StageContext:
    """What a stage needs: its settings, where to write, where to start, and the data."""

    config: TrainConfig
    stage: StageName
    stage_dir: Path
    init_model: str
    rows: dict[str, list[dict[str, Any]]]

    @property
    def checkpoints_dir(self) -> Path:
        return self.stage_dir / "checkpoints"

    @property
    def final_dir(self) -> Path:
        return self.stage_dir / "final"

    @property
    def metrics(self) -> MetricsLog:
        return MetricsLog(self.stage_dir / "metrics.jsonl", self.stage)

    def latest_checkpoint(self) -> Path | None:
        return latest_checkpoint(self.checkpoints_dir)


StepHook = Callable[[int, dict[str, Any]], None]
"""Called after each optimiser step with the step number and its logged values."""

StageRunner = Callable[[StageContext], dict[str, Any]]
"""Trains one stage, saves ``ctx.final_dir``, and returns its summary (steps, losses...)."""


def latest_checkpoint(folder: Path) -> Path | None:
    """The ``checkpoint-N`` with the largest N that is complete (has its state file)."""
    if not folder.is_dir():
        return None
    found = [
        (int(match.group(1)), path)
        for path in folder.iterdir()
        if (match := CHECKPOINT.match(path.name)) and path.is_dir() and _complete(path)
    ]
    return max(found)[1] if found else None


def _complete(checkpoint: Path) -> bool:
    return (checkpoint / "trainer_state.json").is_file()


def prune_checkpoints(folder: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest complete checkpoints."""
    found = sorted(
        (int(m.group(1)), p)
        for p in folder.iterdir()
        if (m := CHECKPOINT.match(p.name)) and _complete(p)
    )
    for _, path in found[:-keep]:
        shutil.rmtree(path, ignore_errors=True)


RUN_RECORD = RunRecord(
    "config.yaml", "run", hint="use another output_dir or the same config", limit=5
)
"""A run folder's record: the resolved configuration, of which :data:`IDENTITY_SECTIONS`
decide whether the folder resumes (:mod:`papergym.runfolder`)."""


def prepare_run_dir(config: TrainConfig) -> Path:
    """Create the run folder or accept it for resuming; refuse one from another configuration."""
    out = config.output_dir
    resolved = config.resolved()
    resumes(out, RUN_RECORD, _identity(resolved), recorded_identity=_recorded_identity)
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(RUN_RECORD.path(out), yaml.safe_dump(resolved, sort_keys=False))
    return out


def config_changes(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """``key: old → new`` for each dotted key of :data:`IDENTITY_SECTIONS` whose value differs,
    sorted; a key only one side has shows ``(unset)`` on the other."""
    return differences(_identity(previous), _identity(current))


def _identity(config: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in config.items() if key in IDENTITY_SECTIONS}


KEYS_ADDED_LATER: dict[tuple[str, str], Any] = {
    ("opsd", "loss_reduction"): "token",
    ("grpo", "importance_sampling_level"): "token",
}
"""Keys a run recorded before them lacks, with the behaviour such a run trained with: the
token mean and token-level ratios were all there was."""


def _recorded_identity(config: dict[str, Any]) -> dict[str, Any]:
    """A recorded run's identity; a run recorded before the ``watch`` section existed had no
    watch judge, which is the section's default, and one recorded before a key of
    :data:`KEYS_ADDED_LATER` trained as that key's value says (so such folders still resume
    under the defaults, and are refused, naming the key, under another value)."""
    identity = _identity(config)
    identity.setdefault("watch", WatchSettings().model_dump(mode="json"))
    for (section, key), value in KEYS_ADDED_LATER.items():
        recorded = identity.get(section)
        if isinstance(recorded, dict) and key not in recorded:
            identity[section] = {**recorded, key: value}
    return identity


def reference_users(config: TrainConfig) -> list[str]:
    """What in this run reads the reference answers, in words (foreign rubric data has none)."""
    users = []
    if "sft" in config.stages:
        users.append("the sft stage trains on")
    if "opsd" in config.stages and config.opsd.teacher_context == "reference":
        users.append("opsd.teacher_context=reference shows the teacher")
    return users


def stage_dir(run_dir: Path, index: int, stage: StageName) -> Path:
    return run_dir / f"{index}-{stage}"


def run_pipeline(
    config: TrainConfig,
    runners: dict[StageName, StageRunner],
    on_stage: Callable[[StageName, str], None] | None = None,
) -> dict[str, Any]:
    """Run ``config.stages`` in order; return the run summary (also saved as summary.json)."""
    # imported here: torch and peft take seconds, and `papergym --help` needs neither
    from papergym.train.data import training_rows
    from papergym.train.models import resolve_model_path

    # bad data fails before anything is written
    rows = training_rows(config.data, reference_needed_by=reference_users(config))
    run_dir = prepare_run_dir(config)
    current = resolve_model_path(config.model, run_dir)
    summaries: list[dict[str, Any]] = []
    for index, stage in enumerate(config.stages, start=1):
        ctx = StageContext(config, stage, stage_dir(run_dir, index, stage), current, rows)
        summary_path = ctx.stage_dir / "summary.json"
        if summary_path.is_file():
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
            if on_stage:
                on_stage(stage, "finished earlier; skipped")
        else:
            if on_stage:
                resume = ctx.latest_checkpoint()
                on_stage(stage, f"resuming from {resume.name}" if resume else "starting")
            started = time.perf_counter()
            summary = {"stage": stage, "init_model": current, **runners[stage](ctx)}
            summary["final_model"] = str(ctx.final_dir)
            summary["seconds"] = round(time.perf_counter() - started, 1)
            write_text_atomic(summary_path, json.dumps(summary, indent=1, default=float))
        summaries.append(summary)
        current = str(ctx.final_dir)
    result = {"run_dir": str(run_dir), "stages": summaries, "final_model": current}
    write_text_atomic(run_dir / "summary.json", json.dumps(result, indent=1, default=float))
    return result


def quiet_libraries() -> None:
    """Our progress bar and summary say what matters; the libraries' per-file bars ("Writing
    model shards"), info logs and deprecation warnings about their own internals do not.

    Every ``papergym train`` command and ``examples/train_cpu_demo.py`` call it.
    """
    import warnings

    import datasets
    from transformers.utils import logging as hf_logging

    datasets.disable_progress_bars()  # TRL maps a stage's few rows: no bar worth showing
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    warnings.filterwarnings(
        "ignore", message="`(is_)?gradient_checkpointing(_enable|_disable)?` is deprecated"
    )


@dataclass(frozen=True)
class HeldOut:
    """The held-out instances (``data.test_fraction``) both evaluations use; ``note`` says why
    there is no evaluation when one is asked for and nothing is held out."""

    instances: list[Instance]
    note: str | None


def held_out_split(config: TrainConfig) -> HeldOut:
    """The build's held-out split, read as training will read it."""
    from papergym.train.data import load_instances

    splits = load_instances(config.data)
    held_out = splits.get("test", [])
    if held_out or not (config.eval.steps or config.eval.final):
        return HeldOut(held_out, None)
    papers = len({item.paper_id for item in splits["train"]})
    why = (
        "data.test_fraction is not set"
        if config.data.test_fraction is None
        else f"data.test_fraction={config.data.test_fraction} held out no paper of the "
        f"{papers} in the build"
    )
    note = f"eval: no held-out split ({why}): no evaluation during or after training"
    return HeldOut(held_out, note)
