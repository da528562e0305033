"""``papergym review eval``'s numbers: a reviewer's predictions against the human reviewers of
the same papers, beside the constant, always-reject and single-human baselines, each metric with
a bootstrap interval over papers; and the surface-leak check.

A paper the reviewer did not score (missing from its predictions, or unscored there) counts
against it and stays in every denominator: its score is the end of the rating scale farthest
from the paper's mean human rating (the worst prediction there is) and its decision is the
wrong one. ``scored`` and ``unscored`` say how many papers that rule touched.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from papergym.eval.records import Estimate
from papergym.records import Record
from papergym.review.data import Prediction, RatedPaper
from papergym.review.leak import LeakCheck
from papergym.review.metrics import (
    IndexArray,
    auc,
    bootstrap,
    human_proxy_errors,
    macro_f1,
    mean_of,
    proxy_errors,
    spearman,
)
from papergym.review.offline import FittedPapers, text_hash
from papergym.review.records import VenueScale

UNSCORED_RULE = (
    "a paper missing from the predictions or unscored there gets the scale end farthest from "
    "its mean human rating and the wrong decision, and stays in every denominator"
)
HUMAN_DRAWS = 200
"""Random draws of one reviewer per paper averaged for the single human's AUC, Spearman and
macro-F1."""


class MetricRow(Record):
    """One system's (or baseline's) metrics on the evaluated papers."""

    system: str
    kind: Literal["system", "baseline", "human"]
    description: str
    papers: int
    scored: int
    unscored: int
    mse: Estimate
    mae: Estimate
    accuracy: Estimate
    auc: Estimate
    spearman: Estimate
    macro_f1: Estimate


PAPERS_FILE = "review-eval-papers.jsonl"
"""Each evaluated paper's ratings and the reviewer's score (:class:`PaperPoint`), written by
``review eval`` beside its summary for ``papergym report``'s ROC, reliability curve and
scatter."""


class PaperPoint(Record):
    """One evaluated paper as ``review eval`` saw it (``review-eval-papers.jsonl``): its human
    ratings and decision, and the evaluated reviewer's score and decision (None: unscored or
    missing, which the metrics count against the reviewer). ``papergym report`` draws the ROC,
    the reliability curve and the scatter from these."""

    paper_id: str
    ratings: tuple[float, ...]
    accepted: bool
    score: float | None
    decision: Literal["accept", "reject"] | None


def paper_points(
    papers: Sequence[RatedPaper], predictions: Mapping[str, Prediction]
) -> list[PaperPoint]:
    """A :class:`PaperPoint` per rated paper, in the ratings' order."""
    points = []
    for paper in papers:
        prediction = predictions.get(paper.paper_id)
        points.append(
            PaperPoint(
                paper_id=paper.paper_id,
                ratings=paper.ratings,
                accepted=paper.accepted,
                score=prediction.score if prediction is not None else None,
                decision=prediction.decision if prediction is not None else None,
            )
        )
    return points


class InSample(Record):
    """The evaluated papers the offline baseline was fitted on: its figures on them are
    in-sample (it has seen their ratings), not an estimate of how it does on new papers."""

    baseline: str = Field(description="The baseline file that wrote the reviews (its name).")
    papers: list[str] = Field(description="Ids of the in-sample papers.")
    by_text: int = Field(description="Papers matched by their text's hash.")
    by_anonymised_text: int = Field(description="Papers matched by their anonymised text's hash.")
    rule: str = Field(description="How texts are hashed.")


class ReviewEvalSummary(Record):
    """What ``papergym review eval`` reports (``summary.json``)."""

    version: str
    ratings: str
    papers_dir: str
    papers: int
    accepted: int
    human_ratings: int
    venue: str
    threshold: float = Field(description="Decision threshold on a score with no decision given.")
    mapping: str | None = Field(default=None, description="The external scale mapping used.")
    source: str = Field(description="The evaluated predictions: a reviews.jsonl or a CSV.")
    extra_predictions: int = Field(description="Predictions of papers not in the ratings.")
    unscored_rule: str = UNSCORED_RULE
    resamples: int
    level: float
    seed: int
    rows: list[MetricRow]
    in_sample: InSample | None = Field(
        default=None, description="Papers the evaluated baseline was fitted on, if any."
    )
    held_out_rows: list[MetricRow] = Field(
        default_factory=list,
        description="The rows again without the in-sample papers (empty when none is in-sample).",
    )
    notes: list[str] = Field(default_factory=list, description="Warnings printed with the table.")
    leak: LeakCheck | None = None


@dataclass(frozen=True)
class Bootstrap:
    resamples: int
    level: float
    seed: int

    def __call__(self, statistic: Callable[[IndexArray], float | None], n: int) -> Estimate:
        return bootstrap(statistic, n, resamples=self.resamples, level=self.level, seed=self.seed)


def _none(n: int, level: float) -> Estimate:
    return Estimate(value=None, n=n, level=level)


def _worst(paper: RatedPaper, scale: VenueScale) -> float:
    low, high = float(scale.low), float(scale.high)
    return low if abs(paper.mean_rating - low) >= abs(paper.mean_rating - high) else high


def _score_rows(
    name: str,
    kind: Literal["system", "baseline"],
    description: str,
    papers: Sequence[RatedPaper],
    scores: Sequence[float],
    decisions: Sequence[bool],
    unscored: int,
    boot: Bootstrap,
) -> MetricRow:
    errors = [proxy_errors(s, p.ratings) for s, p in zip(scores, papers, strict=True)]
    labels = np.asarray([p.accepted for p in papers])
    score_array = np.asarray(scores, dtype=float)
    means = np.asarray([p.mean_rating for p in papers], dtype=float)
    decided = np.asarray(decisions)
    n = len(papers)
    return MetricRow(
        system=name,
        kind=kind,
        description=description,
        papers=n,
        scored=n - unscored,
        unscored=unscored,
        mse=boot(mean_of([e[0] for e in errors]), n),
        mae=boot(mean_of([e[1] for e in errors]), n),
        accuracy=boot(mean_of([float(d == a) for d, a in zip(decided, labels, strict=True)]), n),
        auc=boot(lambda i: auc(score_array[i].tolist(), labels[i].tolist()), n),
        spearman=boot(lambda i: spearman(score_array[i].tolist(), means[i].tolist()), n),
        macro_f1=boot(lambda i: macro_f1(decided[i].tolist(), labels[i].tolist()), n),
    )


def system_row(
    name: str,
    description: str,
    papers: Sequence[RatedPaper],
    predictions: Mapping[str, Prediction],
    scale: VenueScale,
    threshold: float,
    boot: Bootstrap,
) -> MetricRow:
    """A reviewer's row: its scores and decisions (the threshold decides a score that comes
    without one); an unscored or missing paper counts against it (:data:`UNSCORED_RULE`)."""
    scores: list[float] = []
    decisions: list[bool] = []
    unscored = 0
    for paper in papers:
        prediction = predictions.get(paper.paper_id)
        if prediction is None or prediction.score is None:
            unscored += 1
            scores.append(_worst(paper, scale))
            decisions.append(not paper.accepted)
            continue
        scores.append(prediction.score)
        if prediction.decision is None:
            decisions.append(prediction.score >= threshold)
        else:
            decisions.append(prediction.decision == "accept")
    return _score_rows(name, "system", description, papers, scores, decisions, unscored, boot)


def constant_row(
    papers: Sequence[RatedPaper],
    value: float,
    threshold: float,
    boot: Bootstrap,
    *,
    name: str = "constant",
    source: str = "the mean human rating of the training papers",
) -> MetricRow:
    """Every paper predicted at ``value``: by default the mean human rating of the papers the
    evaluated reviewer was fitted on. The mean of the evaluated papers' own ratings is an
    oracle (it knows the test labels) and is named so ("oracle constant")."""
    n = len(papers)
    return _score_rows(
        name,
        "baseline",
        f"every paper predicted at {value:.3f}, {source}",
        papers,
        [value] * n,
        [value >= threshold] * n,
        0,
        boot,
    )


@dataclass(frozen=True)
class RowSet:
    """The rows ``review eval`` shows, for any set of papers (all of them, or the held-out
    ones): the evaluated system, the constant (and, asked or when no training mean is known,
    the oracle constant), always-reject and the single human."""

    system: str
    description: str
    predictions: Mapping[str, Prediction]
    scale: VenueScale
    threshold: float
    boot: Bootstrap
    constant: tuple[float, str] | None = None
    """The constant's rating and where it comes from; None: only the oracle constant."""
    oracle: bool = False

    def rows(self, papers: Sequence[RatedPaper]) -> list[MetricRow]:
        threshold, boot = self.threshold, self.boot
        system = system_row(
            self.system, self.description, papers, self.predictions, self.scale, threshold, boot
        )
        ratings = [r for p in papers for r in p.ratings]
        oracle = constant_row(
            papers, math.fsum(ratings) / len(ratings), threshold, boot, name="oracle constant",
            source="the mean of the evaluated papers' own ratings (an oracle: it knows them)",
        )  # fmt: skip
        constants = [oracle]
        if self.constant is not None:
            value, source = self.constant
            constants = [constant_row(papers, value, threshold, boot, source=source)]
            constants += [oracle] if self.oracle else []
        return [
            system,
            *constants,
            always_reject_row(papers, boot),
            human_row(papers, threshold, boot),
        ]


def always_reject_row(papers: Sequence[RatedPaper], boot: Bootstrap) -> MetricRow:
    """Every paper rejected; no score, so no score metrics."""
    n = len(papers)
    labels = [p.accepted for p in papers]
    rejected = [False] * n
    none = _none(n, boot.level)
    return MetricRow(
        system="always-reject",
        kind="baseline",
        description="every paper rejected (no score)",
        papers=n,
        scored=n,
        unscored=0,
        mse=none,
        mae=none,
        accuracy=boot(mean_of([float(not a) for a in labels]), n),
        auc=none,
        spearman=none,
        macro_f1=boot(lambda i: macro_f1([rejected[j] for j in i], [labels[j] for j in i]), n),
    )


def human_row(papers: Sequence[RatedPaper], threshold: float, boot: Bootstrap) -> MetricRow:
    """One human reviewer as a system. Proxy MSE/MAE: reviewer i's rating against the mean of
    the others, averaged over i (the same definition as every row). Accuracy: the share of a
    paper's reviewers whose own rating decides right at ``threshold``. AUC, Spearman (against
    the mean of the OTHER reviewers) and macro-F1: one reviewer drawn at random per paper,
    averaged over draws (the interval resamples papers and draws)."""
    n = len(papers)
    errors = [human_proxy_errors(p.ratings) for p in papers]
    right = [
        sum((r >= threshold) == p.accepted for r in p.ratings) / len(p.ratings) for p in papers
    ]
    ratings = [np.asarray(p.ratings, dtype=float) for p in papers]
    labels = np.asarray([p.accepted for p in papers])

    def drawn(
        measure: Callable[[np.ndarray, np.ndarray, np.ndarray], float | None],
    ) -> Callable[[IndexArray], float | None]:
        rng = np.random.default_rng(boot.seed + 1)

        def statistic(index: IndexArray) -> float | None:
            draws = HUMAN_DRAWS if index.size == n and bool(np.all(index == np.arange(n))) else 1
            values = []
            for _ in range(draws):
                picks = [int(rng.integers(0, len(ratings[j]))) for j in index]
                own = np.asarray([ratings[j][k] for j, k in zip(index, picks, strict=True)])
                others = np.asarray(
                    [
                        (ratings[j].sum() - ratings[j][k]) / (len(ratings[j]) - 1)
                        for j, k in zip(index, picks, strict=True)
                    ]
                )
                value = measure(own, others, labels[index])
                if value is not None:
                    values.append(value)
            return float(np.mean(values)) if values else None

        return statistic

    return MetricRow(
        system="single human",
        kind="human",
        description="one human reviewer's rating, measured by the same definitions",
        papers=n,
        scored=n,
        unscored=0,
        mse=boot(mean_of([e[0] for e in errors]), n),
        mae=boot(mean_of([e[1] for e in errors]), n),
        accuracy=boot(mean_of(right), n),
        auc=boot(drawn(lambda own, _, y: auc(own.tolist(), y.tolist())), n),
        spearman=boot(drawn(lambda own, others, _: spearman(own.tolist(), others.tolist())), n),
        macro_f1=boot(
            drawn(lambda own, _, y: macro_f1((own >= threshold).tolist(), y.tolist())), n
        ),
    )


def in_sample_papers(
    papers: Sequence[RatedPaper],
    texts: Mapping[str, str],
    fitted: FittedPapers,
    anonymised: Callable[[str], str],
    baseline: str,
) -> InSample:
    """The papers whose text, or anonymised text, hashes to one the baseline was fitted on.
    ``anonymised(paper_id)`` is asked only for papers whose text did not match."""
    raw = set(fitted.texts)
    clean = set(fitted.anonymised)
    found: list[str] = []
    by_text = 0
    for paper in papers:
        if text_hash(texts[paper.paper_id]) in raw:
            by_text += 1
            found.append(paper.paper_id)
        elif text_hash(anonymised(paper.paper_id)) in clean:
            found.append(paper.paper_id)
    return InSample(
        baseline=baseline,
        papers=found,
        by_text=by_text,
        by_anonymised_text=len(found) - by_text,
        rule=fitted.rule,
    )
