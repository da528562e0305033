"""The report's section on a build folder (``papergym build``'s paper build or ``papergym
ares``' build), drawn from its ``card.json``: drops by step and reason, the criteria's weight
and dimension histograms, domains and personas, and LLM calls and tokens per kept instance by
step.

Weights and dimensions are counted from the build's instances when they are there (every
criterion; an ARES build's shards); an ARES build without them (offline mode) has its card's
weight histogram, and no dimensions.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from papergym.errors import BadInputError
from papergym.jsonl import iter_jsonl
from papergym.records import Instance
from papergym.report.charts import count_bars, finite, tagged
from papergym.report.kinds import CARD_FILE
from papergym.report.parts import Section

INSTANCES_FILE = "instances.jsonl"
"""A paper build's instances (papergym.export.run.INSTANCES_FILE)."""
ARES_SHARDS = "instances-*.jsonl"
"""An ARES LLM build's kept instances, one file a shard."""
TOP = 25
"""Most rows of a domains or personas chart; the rest are summed in one row."""


@dataclass(frozen=True)
class BuildDir:
    path: Path
    card: dict[str, Any]
    weights: Counter[str]
    dimensions: Counter[str]


def _label(value: float) -> str:
    return f"{value:g}"


def instance_files(path: Path) -> list[Path]:
    """A paper build's ``instances.jsonl``, else an ARES build's shards (``instances-N.jsonl``)."""
    if (path / INSTANCES_FILE).is_file():
        return [path / INSTANCES_FILE]
    return sorted(path.glob(ARES_SHARDS))


def load_build(path: Path) -> BuildDir:
    """The card and, when ``instances.jsonl`` is there, its criteria's weights and dimensions."""
    card_path = path / CARD_FILE
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BadInputError(card_path, f"not a build card: {error}") from None
    if not isinstance(card, dict) or not isinstance(card.get("stats"), dict):
        raise BadInputError(card_path, "not a build card: no stats")
    weights: Counter[str] = Counter()
    dimensions: Counter[str] = Counter()
    files = instance_files(path)
    for file in files:
        for instance in iter_jsonl(file, Instance):
            for criterion in instance.rubric.specific:
                weights[_label(criterion.weight)] += 1
                dimensions[criterion.dimension] += 1
    if not files:
        rubric = card["stats"].get("rubric") or {}
        histogram = (rubric.get("weights") or {}).get("histogram") or {}
        weights.update({str(k): int(v) for k, v in histogram.items()})
    return BuildDir(path, card, weights, dimensions)


def _counts(mapping: object) -> list[tuple[str, float]]:
    if not isinstance(mapping, Mapping):
        return []
    return [(str(k), v) for k, raw in mapping.items() if (v := finite(raw)) is not None]


def _top(rows: list[tuple[str, float]]) -> list[tuple[str, float]]:
    rows = sorted(rows, key=lambda row: -row[1])
    if len(rows) <= TOP:
        return rows
    return [*rows[:TOP], (f"{len(rows) - TOP} more", sum(v for _, v in rows[TOP:]))]


def _drops(stats: Mapping[str, Any]) -> list[tuple[str, float]]:
    by_reason = (stats.get("drops") or {}).get("by_reason") or {}
    return [
        (f"{step} · {reason}", count)
        for step, reasons in by_reason.items()
        for reason, count in _counts(reasons)
    ]


def _kept(card: Mapping[str, Any]) -> int:
    """The instances the usage is divided by: this run's, as the card's per-instance figures."""
    stats = card["stats"]
    if stats.get("recipe") == "ares":
        return int(stats.get("kept_this_run") or 0)
    return int(stats.get("instances") or 0)


def _per_kept(card: Mapping[str, Any]) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    usage = card.get("usage") or card["stats"].get("usage") or {}
    kept = _kept(card)
    stages = usage.get("by_stage") or {}
    if not kept or not isinstance(stages, Mapping):
        return [], []
    calls = [(s, (finite(v.get("calls")) or 0.0) / kept) for s, v in stages.items()]
    tokens = [
        (s, ((finite(v.get("tokens_in")) or 0.0) + (finite(v.get("tokens_out")) or 0.0)) / kept)
        for s, v in stages.items()
    ]
    return calls, tokens


def _by_number(counts: Counter[str]) -> list[tuple[str, float]]:
    """Weight labels in numeric order (-2 before -0.5 before 1)."""
    return sorted(((k, float(v)) for k, v in counts.items()), key=lambda row: finite_label(row[0]))


def finite_label(label: str) -> float:
    try:
        return float(label)
    except ValueError:
        return math.inf


def _chart(title: str, rows: list[tuple[str, float]], name: str, x_label: str) -> Markup:
    return Markup(tagged(count_bars(title, rows, x_label=x_label), name))


def build_section(build: BuildDir) -> Section:
    """Facts and charts of one build."""
    stats = build.card["stats"]
    ares = stats.get("recipe") == "ares"
    kept = stats.get("kept") if ares else stats.get("instances")
    section = Section(
        kind="build",
        title=f"{'ARES build' if ares else 'Paper build'}: {build.path}",
        facts=[
            ("kept instances", str(kept)),
            ("dropped", str(stats.get("dropped", (stats.get("drops") or {}).get("total")))),
            ("written by", f"papergym {build.card.get('papergym_version', 'unknown')}"),
        ],
    )
    calls, tokens = _per_kept(build.card)
    dimensions = [(k, float(v)) for k, v in sorted(build.dimensions.items())]
    charts: list[tuple[str, list[tuple[str, float]], str, str]] = [
        ("Drops by step and reason", _drops(stats), "build-drops", "dropped"),
        ("Criteria by weight", _by_number(build.weights), "build-weights", "criteria"),
        ("Criteria by dimension", dimensions, "build-dimensions", "criteria"),
        ("Domains", _top(_counts(stats.get("domains"))), "build-domains", "instances"),
        ("Personas", _top(_counts(stats.get("personas"))), "build-personas", "texts"),
        ("LLM calls per kept instance by step", calls, "build-calls", "calls"),
        ("Tokens per kept instance by step", tokens, "build-tokens", "tokens (in + out)"),
    ]
    empty = []
    for title, rows, name, x_label in charts:
        if rows:
            section.plots.append(_chart(title, rows, name, x_label))
        else:
            empty.append(title.lower())
    if empty:
        section.facts.append(("nothing recorded for", "; ".join(empty)))
    return section
