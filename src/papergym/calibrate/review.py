"""A reviewer measured against human ratings: its accept/reject decision against the venue's
and against "the mean human rating is at least the threshold" (agreement, Cohen's kappa), the
correlation of its score with the mean human rating, and how often its simulated reviewers of
one paper agree on the decision, beside the same figure for the human reviewers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from papergym.calibrate.agreement import self_agreement
from papergym.calibrate.records import CALIBRATION_FILE, ReviewCalibration
from papergym.calibrate.rubric import agreement_row
from papergym.calibrate.settings import CalibrateSection
from papergym.eval.records import Correlation
from papergym.eval.stats import correlation
from papergym.jsonl import read_jsonl, write_text_atomic
from papergym.review.data import (
    LinearScale,
    Prediction,
    RatedPaper,
    read_predictions,
    read_ratings,
    read_reviews_file,
)
from papergym.review.records import PaperReview, VenueScale

OOF_SCALE = "1:10"
"""A predictions CSV (``review fit --oof``) holds scores on the ICLR range already."""


BASELINE_NOTE = (
    "the offline baseline wrote these reviews: on papers it was fitted on (the shipped one was "
    "fitted on the ICLR 2022 set) its figures are in-sample; calibrate `review fit --oof` "
    "predictions for an estimate on new papers"
)


def read_reviewer(path: Path, scale: VenueScale) -> tuple[dict[str, Prediction], str, bool]:
    """Each paper's prediction, the reviewer's name, and whether it is the offline baseline,
    from a ``papergym review`` reviews.jsonl or a predictions CSV with columns paper_id, score
    and decision (as ``review fit --oof`` writes)."""
    if path.suffix.lower() == ".csv":
        mapping = LinearScale.parse(OOF_SCALE)
        found = read_predictions(
            path,
            id_column="paper_id",
            score_column="score",
            decision_column="decision",
            mapping=mapping,
            scale=scale,
        )
        return found, path.stem, False
    reviews = read_reviews_file(path, scale)
    name = ", ".join(reviews.reviewer_models) or path.stem
    return reviews.predictions, name, reviews.baseline


def simulated_ratings(path: Path) -> dict[str, list[float]]:
    """Each paper's simulated reviewers' ratings in a reviews.jsonl (none for a CSV or the
    offline baseline, which predicts one score per paper)."""
    if path.suffix.lower() == ".csv":
        return {}
    return {r.paper_id: [float(x.rating) for x in r.reviews] for r in read_jsonl(path, PaperReview)}


def decision_consistency(ratings: Sequence[Sequence[float]], threshold: float) -> float | None:
    """Decision agreement among the raters of each paper (rating ≥ threshold), averaged over
    the papers that have two or more; None when none has."""
    width = max((len(r) for r in ratings), default=0)
    runs: list[list[bool | None]] = [
        [r[k] >= threshold if k < len(r) else None for r in ratings] for k in range(width)
    ]
    return self_agreement(runs) if width >= 2 else None


def calibrate_reviewer(
    ratings_file: Path,
    predictions_file: Path,
    scale: VenueScale,
    threshold: float,
    section: CalibrateSection,
    out: Path | None = None,
) -> ReviewCalibration:
    """Measure the reviewer whose predictions ``predictions_file`` holds against the human
    ratings of ``ratings_file`` (see the module); written to ``out`` when given."""
    rated = read_ratings(ratings_file, scale)
    predictions, reviewer, baseline = read_reviewer(predictions_file, scale)
    missing = Prediction(None, None)
    scored = [p for p in rated if predictions.get(p.paper_id, missing).score is not None]
    report = _report(rated, scored, predictions, threshold, section)
    simulated = simulated_ratings(predictions_file)
    report = report.model_copy(
        update={
            "reviewer": reviewer,
            "labels": str(ratings_file),
            "predictions": str(predictions_file),
            "reviewer_consistency": decision_consistency(
                [simulated.get(p.paper_id, []) for p in scored], threshold
            ),
            "notes": [BASELINE_NOTE] if baseline else [],
        }
    )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / CALIBRATION_FILE, report.model_dump_json(indent=1) + "\n")
    return report


def _report(
    rated: list[RatedPaper],
    scored: list[RatedPaper],
    predictions: Mapping[str, Prediction],
    threshold: float,
    section: CalibrateSection,
) -> ReviewCalibration:
    scores = [float(predictions[p.paper_id].score or 0.0) for p in scored]
    decided = [
        (predictions[p.paper_id].decision or ("accept" if s >= threshold else "reject")) == "accept"
        for p, s in zip(scored, scores, strict=True)
    ]
    human_means = [p.mean_rating for p in scored]
    no_runs: tuple[list[list[bool | None]], list[list[bool | None]]] = ([], [])
    return ReviewCalibration(
        reviewer="",
        labels="",
        predictions="",
        papers=len(scored),
        unscored=len(rated) - len(scored),
        threshold=threshold,
        kappa_threshold=section.kappa_threshold,
        resamples=section.resamples,
        level=section.level,
        seed=section.seed,
        decision=agreement_row(
            "venue decision", decided, [p.accepted for p in scored], no_runs, section
        ),
        mean_rating=agreement_row(
            "mean rating",
            decided,
            [m >= threshold for m in human_means],
            no_runs,
            section,
        ),
        pearson=_correlation(scores, human_means, "pearson", section),
        spearman=_correlation(scores, human_means, "spearman", section),
        reviewer_consistency=None,
        human_consistency=decision_consistency([p.ratings for p in scored], threshold),
    )


def _correlation(
    x: Sequence[float],
    y: Sequence[float],
    method: Literal["pearson", "spearman"],
    section: CalibrateSection,
) -> Correlation:
    return correlation(
        x, y, method, resamples=section.resamples, level=section.level, seed=section.seed
    )
