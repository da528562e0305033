"""What ``papergym review`` shows: ``reviews.md`` (every paper's reviews, readable) and the
summary of a run. Pure functions of the records."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from papergym.review.records import PaperReview, Review

BASELINE_NOTE = (
    "Reviewed by the offline baseline: a linear model fitted on human ratings predicts each "
    "paper's mean rating from its text. It writes no reviews; it is a baseline, not a reviewer."
)


def reviewer_label(records: Sequence[PaperReview]) -> str:
    """Who reviewed: "NAME (offline baseline)" or "LLM reviewer MODEL", from the records."""
    models = sorted({r.reviewer_model for r in records}) or ["-"]
    baseline = any(r.baseline for r in records)
    names = ", ".join(models)
    return f"{names} (offline baseline)" if baseline else f"LLM reviewer {names}"


def _number(value: float | None) -> str:
    return "unscored" if value is None else f"{value:.2f}"


def _review_lines(review: Review) -> list[str]:
    lines = [
        f"### Reviewer {review.reviewer} (seed {review.seed}): rating {review.rating}, "
        f"confidence {review.confidence}",
        "",
        f"Soundness {review.soundness}, presentation {review.presentation}, contribution "
        f"{review.contribution} (of 4).",
        "",
        f"**Summary.** {review.summary}",
    ]
    for title, items in (
        ("Strengths", review.strengths),
        ("Weaknesses", review.weaknesses),
        ("Questions", review.questions),
    ):
        if items:
            lines += ["", f"**{title}.**", *(f"- {item}" for item in items)]
    return [*lines, ""]


def paper_markdown(record: PaperReview) -> str:
    """One paper's section of ``reviews.md``."""
    decision = record.decision or "no decision"
    lines = [
        f"## {record.paper_id}",
        "",
        f"Score {_number(record.score)} · {decision} (accept at >= {record.threshold:g}) · "
        f"{len(record.reviews)} review(s) scored, {len(record.unscored)} unscored"
        + (" · baseline" if record.baseline else ""),
        "",
        f"Source: `{record.source}`",
    ]
    if record.removed:
        kinds = Counter(r.kind for r in record.removed)
        shown = ", ".join(f"{kind} ×{n}" if n > 1 else kind for kind, n in sorted(kinds.items()))
        lines += ["", f"Anonymisation removed {len(record.removed)} span(s): {shown}."]
    if record.fit:
        lines += ["", f"Fitted to the context: {record.fit}."]
    if record.meta_review:
        lines += ["", "### Meta-review", "", record.meta_review]
    lines.append("")
    for review in record.reviews:
        lines += _review_lines(review)
    for unscored in record.unscored:
        lines += [f"### Reviewer {unscored.reviewer} (seed {unscored.seed}): unscored", ""]
        lines += [f"{unscored.reason}", ""]
    return "\n".join(lines)


def reviews_markdown(records: Sequence[PaperReview]) -> str:
    """The whole ``reviews.md``: who reviewed, then each paper."""
    header = [f"# Reviews: {len(records)} paper(s), {reviewer_label(records)}", ""]
    if any(r.baseline for r in records):
        header += [BASELINE_NOTE, ""]
    return "\n".join(header) + "\n" + "\n".join(paper_markdown(r) for r in records)


def summary(records: Sequence[PaperReview], *, resumed: int, failed: int) -> dict[str, Any]:
    """The run's summary: papers, scored or not, reviews, the passages the reviews quoted
    and how many of those are not in the paper, mean score and decisions."""
    scores = [r.score for r in records if r.score is not None]
    decisions = Counter(r.decision for r in records if r.decision is not None)
    return {
        "reviewer": reviewer_label(records),
        "baseline": any(r.baseline for r in records),
        "papers": len(records),
        "reviewed_before_this_run": resumed,
        "not_finished": failed,
        "papers_scored": len(scores),
        "papers_unscored": len(records) - len(scores),
        "reviews_scored": sum(len(r.reviews) for r in records),
        "reviews_unscored": sum(len(r.unscored) for r in records),
        "citations": sum(len(v.citations) for r in records for v in r.reviews),
        "unbacked_citations": sum(v.unbacked_citations for r in records for v in r.reviews),
        "mean_score": statistics.fmean(scores) if scores else None,
        "accept": decisions.get("accept", 0),
        "reject": decisions.get("reject", 0),
        "threshold": records[0].threshold if records else None,
    }
