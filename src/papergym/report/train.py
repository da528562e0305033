"""The report's section on train runs (``papergym train`` any stage, pipelines, ``write-sft``,
``cycle``): curves of loss, reward, ``eval/reward`` with its interval band, the watch judge's
score and length over steps, every run given overlaid in one colour each.

A pipeline's stages follow each other on the x axis (a dashed line where each begins); a cycle
run is drawn over its rounds (a round's training loss, its papers' mean reward, the watch's mean
score, their mean length).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from papergym.errors import BadInputError
from papergym.report.charts import Axes, Curve, finite, tagged, xy_plot
from papergym.report.kinds import (
    METRICS_FILE,
    ROUND_METRICS_FILE,
    round_folders,
    stage_folders,
)
from papergym.report.parts import Section, Table, fmt_value

CYCLE_KEYS = {
    "train_loss": "loss",
    "mean_score": "reward",
    "watch_mean_score": "eval/watch_reward",
    "words": "words",
}
"""A cycle round's numbers (``round-N/metrics.json``) → the names a stage logs."""


@dataclass(frozen=True)
class StageLog:
    """One stage's logged records, in step order (a cycle run: one per round)."""

    name: str
    records: list[dict[str, Any]]


@dataclass(frozen=True)
class TrainRun:
    path: Path
    stages: list[StageLog]
    cycle: bool


@dataclass(frozen=True)
class CurveSpec:
    """A chart of one logged value (and its interval's keys), by name."""

    chart: str
    title: str
    key: str
    y_label: str
    band: tuple[str, str] | None = None


CURVES = (
    CurveSpec("train-loss", "Training loss", "loss", "loss"),
    CurveSpec("train-reward", "Training reward", "reward", "reward"),
    CurveSpec(
        "train-eval-reward",
        "Held-out reward (eval/reward, band: interval)",
        "eval/reward",
        "eval/reward",
        ("eval/reward_low", "eval/reward_high"),
    ),
    CurveSpec(
        "train-watch",
        "Watch judge's score (band: interval)",
        "eval/watch_reward",
        "watch score",
        ("eval/watch_reward_low", "eval/watch_reward_high"),
    ),
    CurveSpec("train-length", "Completion length (tokens)", "completion_length", "tokens"),
    CurveSpec("train-words", "Length in words", "words", "words"),
)


def _read_records(path: Path) -> list[dict[str, Any]]:
    """A stage's ``metrics.jsonl``: one JSON object with a numeric ``step`` a line."""
    records = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInputError(path, f"cannot be read: {error}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise BadInputError(path, f"line {number} is not JSON") from None
        if not isinstance(record, dict) or finite(record.get("step")) is None:
            raise BadInputError(path, f"line {number} has no numeric step")
        records.append(record)
    return sorted(records, key=lambda r: float(r["step"]))


def _read_round(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BadInputError(path, f"not a round's metrics: {error}") from None
    if not isinstance(data, dict) or finite(data.get("round")) is None:
        raise BadInputError(path, "not a round's metrics: no round number")
    record = {"step": data["round"]}
    record.update({ours: data.get(theirs) for theirs, ours in CYCLE_KEYS.items()})
    return record


def load_train_run(path: Path) -> TrainRun:
    """A run folder (or one stage folder) with every stage's records, or a cycle run's
    rounds."""
    rounds = round_folders(path)
    if rounds:
        records = [_read_round(folder / ROUND_METRICS_FILE) for folder in rounds]
        return TrainRun(path, [StageLog("cycle", records)], cycle=True)
    stages = [StageLog(f.name, _read_records(f / METRICS_FILE)) for f in stage_folders(path)]
    return TrainRun(path, stages, cycle=False)


def _run_label(run: TrainRun, runs: Sequence[TrainRun]) -> str:
    names = [r.path.name for r in runs]
    return run.path.name if names.count(run.path.name) == 1 else str(run.path)


def _stage_curves(
    spec: CurveSpec, run_index: int, label: str, run: TrainRun
) -> tuple[list[Curve], list[tuple[float, str]]]:
    """The run's curves for ``spec``, its stages one after the other on the x axis."""
    curves: list[Curve] = []
    marks: list[tuple[float, str]] = []
    offset = 0.0
    for stage in run.stages:
        points = [
            (offset + float(r["step"]), y) for r in stage.records if (y := finite(r.get(spec.key)))
        ]
        band = []
        if spec.band is not None:
            low_key, high_key = spec.band
            band = [
                (offset + float(r["step"]), low, high)
                for r in stage.records
                if (low := finite(r.get(low_key))) is not None
                and (high := finite(r.get(high_key))) is not None
            ]
        if len(run.stages) > 1:
            marks.append((offset, stage.name))
        if points or band:
            first = not any(c.legend for c in curves)
            curves.append(Curve(label, points, run_index, band=band, legend=first))
        offset += max((float(r["step"]) for r in stage.records), default=0.0)
    return curves, marks


def _chart(spec: CurveSpec, runs: Sequence[TrainRun]) -> Markup | None:
    curves: list[Curve] = []
    marks: list[tuple[float, str]] = []
    for index, run in enumerate(runs):
        run_curves, run_marks = _stage_curves(spec, index, _run_label(run, runs), run)
        curves.extend(run_curves)
        marks.extend(run_marks if len(runs) == 1 else [])
    if not curves:
        return None
    cycle = any(r.cycle for r in runs)
    x_label = (
        "round" if all(r.cycle for r in runs) else "step" + (" (cycle: round)" if cycle else "")
    )
    axes = Axes(x_label=x_label, y_label=spec.y_label, marks=marks)
    return Markup(tagged(xy_plot(spec.title, curves, axes), spec.chart))


def _last(stage: StageLog, key: str) -> float | None:
    values = [v for r in stage.records if (v := finite(r.get(key))) is not None]
    return values[-1] if values else None


def _summary_table(runs: Sequence[TrainRun]) -> Table:
    rows = []
    for run in runs:
        for stage in run.stages:
            reward = _last(stage, "eval/reward")
            low, high = _last(stage, "eval/reward_low"), _last(stage, "eval/reward_high")
            held_out = fmt_value(reward)
            if reward is not None and low is not None and high is not None:
                held_out += f" [{fmt_value(low)}, {fmt_value(high)}]"
            rows.append(
                [
                    _run_label(run, runs),
                    stage.name,
                    str(len(stage.records)),
                    fmt_value(_last(stage, "loss")),
                    fmt_value(_last(stage, "reward")),
                    held_out,
                    fmt_value(_last(stage, "eval/watch_reward")),
                ]
            )
    return Table(
        "Last logged values",
        ["run", "stage", "records", "loss", "reward", "eval/reward", "watch"],
        rows,
        note="A cycle run has one record per finished round. n/a: the stage did not log it.",
    )


def train_section(runs: Sequence[TrainRun]) -> Section:
    """One section for every train run given, their curves overlaid."""
    names = ", ".join(str(run.path) for run in runs)
    section = Section(
        kind="train",
        title=f"Training: {names}",
        facts=[
            ("runs", str(len(runs))),
            ("stages", "; ".join(", ".join(s.name for s in r.stages) for r in runs)),
        ],
    )
    section.tables.append(_summary_table(runs))
    missing = []
    for spec in CURVES:
        chart = _chart(spec, runs)
        if chart is None:
            missing.append(spec.key)
        else:
            section.plots.append(chart)
    if missing:
        section.facts.append(("not logged by any run", ", ".join(missing)))
    return section
