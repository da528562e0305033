"""The pieces ``papergym report`` is built from: the folders it reads (and reading them), the
tables, examples and sections it shows (the same in the page and the Markdown), and how
numbers are written in their cells."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from markupsafe import Markup
from pydantic import BaseModel, ValidationError

from papergym.errors import BadInputError
from papergym.eval import records as er
from papergym.eval.compare import records as cr
from papergym.jsonl import read_jsonl
from papergym.report import plots
from papergym.sources.files import refuse_link_out

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class BrowserMarkup:
    """A sample browser's two places in the page: its container and index (in its section)
    and its details blocks (at the end of the body, after the script)."""

    index: Markup
    details: Markup


@dataclass(frozen=True)
class EvalDir:
    path: Path
    summary: er.EvalSummary
    answers: list[er.EvalAnswer]
    scores: list[er.EvalScore]
    questions: dict[str, er.EvalQuestion] = field(default_factory=dict)
    judge_usage: list[er.EvalJudgeUsage] = field(default_factory=list)


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

    kind: str  # "eval", "compare", "train", "review", "review-eval" or "build"
    title: str
    facts: list[tuple[str, str]]
    tables: list[Table] = field(default_factory=list)
    plots: list[Markup] = field(default_factory=list)
    detail_tables: list[Table] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    browser: BrowserMarkup | None = None  # the sample browser (eval and compare folders)


# ---------------------------------------------------------------------------------------- input


def read_summary(path: Path, model: type[M]) -> M:
    """A JSON summary file as ``model``; a one-line :class:`BadInputError` naming it else."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise BadInputError(path, "not UTF-8 text") from None
    except OSError as error:
        raise BadInputError(path, f"cannot be read: {error.strerror or error}") from None
    try:
        return model.model_validate_json(text)
    except ValidationError as error:
        first = str(error).splitlines()[0]
        raise BadInputError(path, f"not a valid {model.__name__}: {first}") from None


_read_summary = read_summary


def load_input(path: Path) -> ReportInput:
    """Read an EVAL_DIR or a CMP_DIR; anything else is a one-line :class:`BadInputError`."""
    if not path.exists():
        raise BadInputError(path, "no such folder")
    if not path.is_dir():
        raise BadInputError(
            path, "not a folder: give a `papergym eval` or `papergym compare` folder"
        )
    files = (
        er.SUMMARY_FILE,
        cr.VERDICTS_FILE,
        er.SCORES_FILE,
        er.ANSWERS_FILE,
        er.QUESTIONS_FILE,
        er.JUDGE_USAGE_FILE,
    )
    for name in files:  # what the report shows, to whoever it is sent to
        if (path / name).exists():
            refuse_link_out(path / name, path)
    has_summary = (path / er.SUMMARY_FILE).is_file()
    if has_summary and (path / cr.VERDICTS_FILE).is_file():
        return CompareDir(
            path=path,
            summary=_read_summary(path / cr.SUMMARY_FILE, cr.CompareSummary),
            verdicts=read_jsonl(path / cr.VERDICTS_FILE, cr.CompareVerdict),
        )
    if has_summary and (path / er.SCORES_FILE).is_file():
        answers_path = path / er.ANSWERS_FILE
        questions_path = path / er.QUESTIONS_FILE  # absent in folders from before it existed
        questions = (
            {q.instance_id: q for q in read_jsonl(questions_path, er.EvalQuestion)}
            if questions_path.is_file()
            else {}
        )
        return EvalDir(
            path=path,
            summary=_read_summary(path / er.SUMMARY_FILE, er.EvalSummary),
            answers=read_jsonl(answers_path, er.EvalAnswer) if answers_path.is_file() else [],
            scores=read_jsonl(path / er.SCORES_FILE, er.EvalScore),
            questions=questions,
            judge_usage=read_jsonl(path / er.JUDGE_USAGE_FILE, er.EvalJudgeUsage)
            if (path / er.JUDGE_USAGE_FILE).is_file()
            else [],
        )
    raise BadInputError(
        path,
        f"neither an eval folder ({er.SUMMARY_FILE} and {er.SCORES_FILE} from `papergym eval`) "
        f"nor a compare folder ({cr.SUMMARY_FILE} and {cr.VERDICTS_FILE} from `papergym compare`)",
    )


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
