"""The pieces ``papergym report`` is built from: the folders it reads, the tables, examples
and sections it shows (the same in the page and the Markdown), and how numbers are written
in their cells."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from papergym.eval import compare_records as cr
from papergym.eval import plots
from papergym.eval import records as er


@dataclass(frozen=True)
class EvalDir:
    path: Path
    summary: er.EvalSummary
    answers: list[er.EvalAnswer]
    scores: list[er.EvalScore]
    questions: dict[str, er.EvalQuestion] = field(default_factory=dict)


@dataclass(frozen=True)
class CompareDir:
    path: Path
    summary: cr.CompareSummary
    verdicts: list[cr.CompareVerdict]


ReportInput = EvalDir | CompareDir


@dataclass
class Table:
    """A table shown the same way in the page and in the Markdown: cells are plain text."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Example:
    """One question with each system's answer and the judge's verdicts."""

    instance_id: str
    systems: list[ExampleAnswer]
    question: str = ""


@dataclass
class ExampleAnswer:
    system: str
    answer: str
    cut: bool
    words: int
    score: str
    verdicts: Table | None


@dataclass
class Section:
    """One input folder's part of the report."""

    kind: str  # "eval" or "compare"
    title: str
    facts: list[tuple[str, str]]
    tables: list[Table] = field(default_factory=list)
    plots: list[Markup] = field(default_factory=list)
    detail_tables: list[Table] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------ formatting


def fmt_value(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def fmt_estimate(estimate: er.Estimate, digits: int = 3) -> str:
    """``0.612 [0.550, 0.671] n=40``: the value, its interval and its denominator."""
    if estimate.value is None:
        return f"n/a (n={estimate.n})"
    text = fmt_value(estimate.value, digits)
    if estimate.low is not None and estimate.high is not None:
        text += f" [{fmt_value(estimate.low, digits)}, {fmt_value(estimate.high, digits)}]"
    return f"{text} n={estimate.n}"


def fmt_correlation(correlation: er.Correlation) -> str:
    text = fmt_value(correlation.r, 2)
    if correlation.low is not None and correlation.high is not None:
        text += f" [{fmt_value(correlation.low, 2)}, {fmt_value(correlation.high, 2)}]"
    return f"{text} n={correlation.n}"


def fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason}: {count}" for reason, count in sorted(counts.items()))


def point(estimate: er.Estimate) -> plots.Point:
    return plots.Point(estimate.value, estimate.low, estimate.high)
