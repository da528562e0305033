"""The report's sections on ``papergym review`` outputs (the reviewer's scores and decisions)
and ``papergym review eval`` outputs: the ROC, a reliability curve and predicted against mean
human rating, with every baseline's AUC, Spearman and MAE beside, each with its interval.

The pictures need each paper's score (``review-eval-papers.jsonl``, written by ``review eval``
beside its summary); a folder from before that file existed gets the forest plots only. A paper
the reviewer left unscored is not drawn (it has no score to place); the table and the forest
plots count it against the reviewer, as ``review eval`` does.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from papergym.report import plots
from papergym.report.charts import XY, Axes, Curve, count_bars, tagged, xy_plot
from papergym.report.parts import Section, Table, fmt_estimate, point
from papergym.review.evaluation import PAPERS_FILE, MetricRow, PaperPoint, ReviewEvalSummary
from papergym.review.records import VENUES, PaperReview

RELIABILITY_BINS = 5


@dataclass(frozen=True)
class ReviewDir:
    """A ``papergym review`` output: every paper's reviews."""

    path: str
    reviews: list[PaperReview]


@dataclass(frozen=True)
class ReviewEvalDir:
    """A ``papergym review eval`` output: the summary and, when written, each paper's point."""

    path: str
    summary: ReviewEvalSummary
    papers: list[PaperPoint]


# ------------------------------------------------------------------------------ scoring rules


def roc_points(scores: Sequence[float], labels: Sequence[bool]) -> list[XY]:
    """The ROC curve (false positive rate, true positive rate) of ``scores`` for ``labels``,
    one point per distinct score from the highest down (tied scores move together), from
    (0, 0) to (1, 1); empty when either class is absent."""
    positives = sum(labels)
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        return []
    by_score: dict[float, list[int]] = {}
    for score, label in zip(scores, labels, strict=True):
        counts = by_score.setdefault(score, [0, 0])
        counts[0 if label else 1] += 1
    curve, true_pos, false_pos = [(0.0, 0.0)], 0, 0
    for score in sorted(by_score, reverse=True):
        true_pos += by_score[score][0]
        false_pos += by_score[score][1]
        curve.append((false_pos / negatives, true_pos / positives))
    return curve


def reliability(pairs: Sequence[XY], low: float, high: float, bins: int) -> list[XY]:
    """Mean x and mean y of the (predicted, human) pairs in each of ``bins`` equal-width bins
    of x over [low, high]; empty bins are left out."""
    width = (high - low) / bins
    grouped: dict[int, list[XY]] = {}
    for x, y in pairs:
        index = min(bins - 1, max(0, math.floor((x - low) / width)))
        grouped.setdefault(index, []).append((x, y))
    return [
        (math.fsum(x for x, _ in grouped[i]) / len(grouped[i]),
         math.fsum(y for _, y in grouped[i]) / len(grouped[i]))
        for i in sorted(grouped)
    ]  # fmt: skip


def human_pairs(papers: Sequence[PaperPoint]) -> list[XY]:
    """Each human rating against the mean of the same paper's other ratings (papers with at
    least two): the single-human baseline's (predicted, human) pairs."""
    pairs = []
    for paper in papers:
        if len(paper.ratings) < 2:
            continue
        total = math.fsum(paper.ratings)
        for rating in paper.ratings:
            pairs.append((rating, (total - rating) / (len(paper.ratings) - 1)))
    return pairs


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


# ------------------------------------------------------------------------------------ sections


def review_section(directory: ReviewDir) -> Section:
    """A review run: its papers' scores as a histogram and its decisions."""
    reviews = directory.reviews
    scored = [r.score for r in reviews if r.score is not None]
    models = sorted({r.reviewer_model for r in reviews})
    decisions = Counter(r.decision or "unscored" for r in reviews)
    section = Section(
        kind="review",
        title=f"Reviews: {directory.path}",
        facts=[
            ("papers", str(len(reviews))),
            ("reviewer", ", ".join(models)),
            ("scored", f"{len(scored)} ({len(reviews) - len(scored)} unscored)"),
            ("reviews", str(sum(len(r.reviews) for r in reviews))),
            ("decisions", ", ".join(f"{k}: {v}" for k, v in sorted(decisions.items()))),
        ],
    )
    histogram = Counter(round(score, 1) for score in scored)
    section.plots.append(
        Markup(
            tagged(
                count_bars(
                    "Papers by score (mean rating)",
                    [(f"{score:g}", float(n)) for score, n in sorted(histogram.items())],
                    x_label="papers",
                ),
                "review-scores",
            )
        )
    )
    section.plots.append(
        Markup(
            tagged(
                count_bars("Decisions", [(k, float(v)) for k, v in sorted(decisions.items())]),
                "review-decisions",
            )
        )
    )
    return section


def _rows_table(summary: ReviewEvalSummary) -> Table:
    return Table(
        "The reviewer and its baselines",
        ["system", "kind", "papers", "unscored", "AUC", "Spearman", "MAE", "accuracy"],
        [
            [
                r.system,
                r.kind,
                str(r.papers),
                str(r.unscored),
                fmt_estimate(r.auc),
                fmt_estimate(r.spearman),
                fmt_estimate(r.mae),
                fmt_estimate(r.accuracy),
            ]
            for r in summary.rows
        ],
        note=f"{summary.level:.0%} bootstrap intervals over papers. {summary.unscored_rule}.",
    )


def _forest(rows: Sequence[MetricRow], metric: str, reference: float, chart: str) -> Markup:
    points = [(r.system, point(getattr(r, metric))) for r in rows]
    title = {"auc": "AUC", "spearman": "Spearman ρ with the mean human rating", "mae": "MAE"}
    x_range = (0.0, 1.0) if metric == "auc" else None
    svg = plots.forest_plot(
        f"{title[metric]}: the reviewer and every baseline",
        points,
        reference=reference,
        x_range=x_range,
        x_label={"auc": "AUC (dashed: chance)", "spearman": "ρ", "mae": "mean absolute error"}[
            metric
        ],
    )
    return Markup(tagged(svg, chart))


def _picture_plots(directory: ReviewEvalDir) -> list[Markup]:
    """The ROC, reliability curve and scatter of the scored papers, the single human beside."""
    summary, papers = directory.summary, directory.papers
    scored = [p for p in papers if p.score is not None]
    system = summary.rows[0].system if summary.rows else "reviewer"
    labels = [p.accepted for p in scored]
    human = human_pairs(papers)
    pooled_scores = [rating for p in papers for rating in p.ratings]
    pooled_labels = [p.accepted for p in papers for _ in p.ratings]
    roc = [
        Curve(system, roc_points([p.score for p in scored if p.score is not None], labels), 0),
        Curve("single human (all reviews)", roc_points(pooled_scores, pooled_labels), 1),
        Curve("always-reject", [(0.0, 0.0)], 2, dots=True),
    ]
    venue = VENUES.get(summary.venue)
    ratings = [r for p in papers for r in p.ratings]
    low = float(venue.low) if venue else min(ratings, default=0.0)
    high = float(venue.high) if venue else max(ratings, default=1.0)
    pairs = [(p.score, _mean(p.ratings)) for p in scored if p.score is not None]
    scale = Axes(
        x_label="predicted rating",
        y_label="mean human rating",
        x_range=(low, high),
        y_range=(low, high),
        diagonal=True,
    )
    return [
        Markup(tagged(xy_plot(
            "ROC: accept decision (dashed: chance, any constant)",
            [c for c in roc if c.points],
            Axes("false positive rate", "true positive rate", (0.0, 1.0), (0.0, 1.0), True),
        ), "review-roc")),
        Markup(tagged(xy_plot(
            "Reliability: mean human rating by predicted rating (dashed: perfect)",
            [
                Curve(system, reliability(pairs, low, high, RELIABILITY_BINS), 0),
                Curve("single human", reliability(human, low, high, RELIABILITY_BINS), 1),
            ],
            scale,
        ), "review-reliability")),
        Markup(tagged(xy_plot(
            "Predicted against mean human rating",
            [Curve(system, pairs, 0, dots=True), Curve("single human", human, 1, dots=True)],
            scale,
        ), "review-scatter")),
    ]  # fmt: skip


def review_eval_section(directory: ReviewEvalDir) -> Section:
    """A review eval: the table of every row, the pictures, and AUC, Spearman and MAE of the
    reviewer and each baseline as forest plots."""
    summary = directory.summary
    section = Section(
        kind="review-eval",
        title=f"Reviewer evaluation: {directory.path}",
        facts=[
            ("predictions", summary.source),
            ("ratings", summary.ratings),
            ("papers", f"{summary.papers} ({summary.accepted} accepted)"),
            ("human ratings", str(summary.human_ratings)),
            ("venue, threshold", f"{summary.venue}, {summary.threshold:g}"),
            ("written by", f"papergym {summary.version}"),
        ],
        notes=list(summary.notes),
    )
    section.tables.append(_rows_table(summary))
    unscored = sum(1 for p in directory.papers if p.score is None)
    if directory.papers:
        section.plots.extend(_picture_plots(directory))
        if unscored:
            section.notes.append(
                f"{unscored} unscored paper(s) are not drawn in the ROC, reliability curve and "
                "scatter; the table and the forest plots count them against the reviewer."
            )
    else:
        section.notes.append(
            f"No {PAPERS_FILE} (written by `papergym review eval` since it existed): no ROC, "
            "reliability curve or scatter, only the forest plots."
        )
    section.plots.append(_forest(summary.rows, "auc", 0.5, "review-auc"))
    section.plots.append(_forest(summary.rows, "spearman", 0.0, "review-spearman"))
    section.plots.append(_forest(summary.rows, "mae", 0.0, "review-mae"))
    return section
