"""What ``papergym judge calibrate`` reports and writes: per criterion and overall, agreement
with the labels, Cohen's kappa with its interval and both base rates, and self-consistency."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from papergym.eval.records import Correlation, Estimate
from papergym.records import Record

CALIBRATION_FILE = "calibration.json"
"""The file ``judge calibrate`` writes in its output folder."""


class AgreementRow(Record):
    """A judge's verdicts against the labels on one criterion (or all of them)."""

    criterion: str = Field(description="instance_id/criterion_id, or 'overall'.")
    items: int = Field(description="Labels compared (unscored verdicts left out).")
    unscored: int = Field(description="Labels whose verdict the judge left unscored.")
    agreement: float | None
    judge_rate: float | None = Field(description="The judge's share of 'met'.")
    label_rate: float | None = Field(description="The labels' share of 'met' (the base rate).")
    kappa: Estimate = Field(description="Cohen's kappa with its bootstrap interval.")
    repeat_consistency: float | None = Field(
        description="Agreement of the judge with itself over repeated judgements (None: not run)."
    )
    order_consistency: float | None = Field(
        description="Agreement of the judge with itself over criterion orderings (None: not run)."
    )
    reliable: bool | None = Field(
        description="kappa at or above the threshold; None when kappa is undefined."
    )


class RubricCalibration(Record):
    """``judge calibrate`` of a rubric judge against criterion labels."""

    kind: Literal["rubric"] = "rubric"
    judge: str
    labels: str
    instances: str
    answers: int = Field(description="Distinct (instance, answer) pairs judged.")
    kappa_threshold: float
    repeats: int
    orderings: int
    resamples: int
    level: float
    seed: int
    overall: AgreementRow
    criteria: list[AgreementRow]
    by_note: list[AgreementRow] = Field(
        description="The labels grouped by their note (e.g. how a constructed answer was made)."
    )
    unreliable: list[str] = Field(description="Criteria with kappa below the threshold.")
    undetermined: list[str] = Field(
        description="Criteria whose kappa is undefined (labels and verdicts all one value)."
    )
    notes: list[str] = Field(default_factory=list)


class ReviewCalibration(Record):
    """``judge calibrate`` of a reviewer against human ratings."""

    kind: Literal["review"] = "review"
    reviewer: str
    labels: str
    predictions: str
    papers: int = Field(description="Rated papers the reviewer scored.")
    unscored: int = Field(description="Rated papers the reviewer left unscored or missed.")
    threshold: float = Field(description="Accept when a score is at least this.")
    kappa_threshold: float
    resamples: int
    level: float
    seed: int
    decision: AgreementRow = Field(description="The reviewer's decision vs the venue's.")
    mean_rating: AgreementRow = Field(
        description="The reviewer's decision vs the mean human rating >= threshold."
    )
    pearson: Correlation = Field(description="Score vs the mean human rating.")
    spearman: Correlation
    reviewer_consistency: float | None = Field(
        description="Decision agreement among the reviewer's simulated reviews of a paper "
        "(None: one prediction per paper, as the offline baseline)."
    )
    human_consistency: float | None = Field(
        description="The same among the human reviewers of a paper, for comparison."
    )
    notes: list[str] = Field(default_factory=list)
