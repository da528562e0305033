"""Leakage rates and the most-leaked criteria, as a model (``--json``; the command line prints
it as tables: :mod:`papergym.cli.audit`).

Rate = leaked / scored for one method. Unscored judge verdicts (``leaked=None``) are left out of
the denominator and counted on their own: counting them as "not leaked" would make a failing
judge look like a clean dataset. Rates are given per dataset, and within a dataset per
dimension and per origin where the format records them, so that e.g. question-derived criteria
can be compared with answer-derived ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from papergym.audit.formats import AuditCriterion, AuditDataset, Method

METHODS: tuple[Method, ...] = ("overlap", "judge")
Grouping = Literal["all", "dataset", "dimension", "origin"]
NONE_VALUE = "(none)"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MethodRate(_Model):
    """One method's verdicts over a group of criteria."""

    leaked: int
    scored: int = Field(description="Criteria with a leaked/not-leaked verdict (the denominator).")
    unscored: int = Field(description="Criteria whose verdict could not be scored (left out).")
    rate: float | None = Field(description="leaked / scored; None when nothing was scored.")


class RateRow(_Model):
    """Leakage of one group of criteria: a dataset, or a dimension or origin within it."""

    dataset: str
    by: Grouping
    value: str
    criteria: int
    overlap: MethodRate | None = None
    judge: MethodRate | None = None


class LeakedCriterion(_Model):
    """A criterion among the most leaked, with the question it leaks from."""

    dataset: str
    item_id: str
    criterion: int = Field(description="1-based position in its item's rubric.")
    text: str
    question: str = Field(description="The start of the question.")
    score: float | None = Field(description="The overlap screen's similarity.")
    overlap: bool | None = None
    judge: bool | None = None
    reason: str = ""


class DatasetSummary(_Model):
    path: str
    format: str
    items: int
    criteria: int


class AuditReport(_Model):
    """Everything ``papergym audit`` found; printed as tables, or as this model with ``--json``."""

    datasets: list[DatasetSummary]
    methods: list[Method]
    thresholds: dict[str, float] = Field(default_factory=dict)
    rates: list[RateRow]
    top: list[LeakedCriterion]
    usage: list[dict[str, Any]] | None = None
    written: list[str] = Field(default_factory=list)

    def row(self, dataset: str, by: Grouping = "dataset", value: str | None = None) -> RateRow:
        """The rate row of ``dataset`` (or of one of its dimensions/origins)."""
        wanted = dataset if value is None and by == "dataset" else value
        for row in self.rates:
            if row.dataset == dataset and row.by == by and row.value == wanted:
                return row
        raise KeyError((dataset, by, value))

    def judge_scored_nothing(self) -> bool:
        """Whether the judge ran but scored none of the criteria (its rate would mean nothing)."""
        if "judge" not in self.methods:
            return False
        totals = [r.judge for r in self.rates if r.by == "dataset" and r.judge is not None]
        return sum(t.scored for t in totals) == 0 and sum(t.unscored for t in totals) > 0


# --- the maths --------------------------------------------------------------------------------


def method_rate(criteria: Iterable[AuditCriterion], method: Method) -> MethodRate | None:
    """Leaked, scored and unscored counts for ``method``; ``None`` if it judged none of them."""
    verdicts = [v for c in criteria if (v := c.verdict(method)) is not None]
    if not verdicts:
        return None
    leaked = sum(1 for v in verdicts if v.leaked is True)
    scored = sum(1 for v in verdicts if v.leaked is not None)
    return MethodRate(
        leaked=leaked,
        scored=scored,
        unscored=len(verdicts) - scored,
        rate=leaked / scored if scored else None,
    )


def rate_row(dataset: str, by: Grouping, value: str, criteria: Sequence[AuditCriterion]) -> RateRow:
    return RateRow(
        dataset=dataset,
        by=by,
        value=value,
        criteria=len(criteria),
        overlap=method_rate(criteria, "overlap"),
        judge=method_rate(criteria, "judge"),
    )


def _grouped(
    dataset: str, by: Literal["dimension", "origin"], criteria: Sequence[AuditCriterion]
) -> list[RateRow]:
    """Rows per value of ``by``; none when the dataset does not record it."""
    values = [getattr(c, by) for c in criteria]
    if all(v is None for v in values):
        return []
    groups: dict[str, list[AuditCriterion]] = {}
    for criterion, value in zip(criteria, values, strict=True):
        groups.setdefault(value or NONE_VALUE, []).append(criterion)
    return [rate_row(dataset, by, key, groups[key]) for key in sorted(groups)]


def snippet(text: str, width: int = 160) -> str:
    """The start of ``text`` on one line, cut at a word with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    return flat[:width].rsplit(" ", 1)[0] + "…"


def most_leaked(datasets: Sequence[AuditDataset], top: int) -> list[LeakedCriterion]:
    """The ``top`` criteria with the highest overlap score (judge-leaked first on ties)."""
    found: list[LeakedCriterion] = []
    for dataset in datasets:
        for item in dataset.items:
            for position, criterion in enumerate(item.criteria, start=1):
                overlap = criterion.verdict("overlap")
                judge = criterion.verdict("judge")
                found.append(
                    LeakedCriterion(
                        dataset=dataset.name,
                        item_id=item.id,
                        criterion=position,
                        text=criterion.text,
                        question=snippet(item.question),
                        score=overlap.score if overlap else None,
                        overlap=overlap.leaked if overlap else None,
                        judge=judge.leaked if judge else None,
                        reason=judge.reason if judge else (overlap.reason if overlap else ""),
                    )
                )
    found.sort(key=lambda c: (-(c.score or 0.0), c.judge is not True))
    return found[: max(top, 0)]


def build_report(
    datasets: Sequence[AuditDataset],
    *,
    top: int = 10,
    thresholds: dict[str, float] | None = None,
) -> AuditReport:
    """Rates per dataset (and overall when there are several), per dimension, per origin."""
    rates: list[RateRow] = []
    everything: list[AuditCriterion] = []
    for dataset in datasets:
        criteria = [c for item in dataset.items for c in item.criteria]
        everything += criteria
        rates.append(rate_row(dataset.name, "dataset", dataset.name, criteria))
        rates += _grouped(dataset.name, "dimension", criteria)
        rates += _grouped(dataset.name, "origin", criteria)
    if len(datasets) > 1:
        rates.append(rate_row("all", "all", "all", everything))
    methods = [m for m in METHODS if any(c.verdict(m) for c in everything)]
    return AuditReport(
        datasets=[
            DatasetSummary(
                path=d.name,
                format=d.format.value,
                items=len(d.items),
                criteria=sum(len(i.criteria) for i in d.items),
            )
            for d in datasets
        ],
        methods=methods,
        thresholds=dict(thresholds or {}),
        rates=rates,
        top=most_leaked(datasets, top),
    )
