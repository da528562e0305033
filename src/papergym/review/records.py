"""The records of a simulated peer review: one :class:`PaperReview` per paper, holding its
reviews, the reviews that could not be scored, the meta-review, the score and the decision.

``reviews.jsonl`` holds one :class:`PaperReview` per line. A review that stays unparseable after
the LLM layer's repairs is an :class:`UnscoredReview` with its reason: it never becomes a 0, and a
paper with no scored review has ``score`` None, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import Field, model_validator

from papergym.records import Record


class VenueScale(Record):
    """A venue's overall-rating scale: the ratings a reviewer may give, lowest first."""

    name: str
    ratings: tuple[int, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _check_sorted(self) -> VenueScale:
        if list(self.ratings) != sorted(set(self.ratings)):
            raise ValueError(f"ratings must be distinct and ascending: {self.ratings}")
        return self

    @property
    def low(self) -> int:
        return self.ratings[0]

    @property
    def high(self) -> int:
        return self.ratings[-1]

    def holds(self, rating: float) -> bool:
        """Whether ``rating`` is a number on the scale's range (a NaN is not)."""
        return math.isfinite(rating) and self.low <= rating <= self.high


ICLR = VenueScale(name="iclr", ratings=(1, 3, 5, 6, 8, 10))
VENUES: dict[str, VenueScale] = {ICLR.name: ICLR}


def scale_value(rating: float, scale: VenueScale = ICLR) -> float:
    """A rating mapped to [0, 1] by (r − min)/(max − min); ratings outside the scale are clipped."""
    value = (rating - scale.low) / (scale.high - scale.low)
    return min(1.0, max(0.0, value))


class Citation(Record):
    """A passage of the paper a reviewer quoted for one of its strengths or weaknesses, and
    whether the paper (as the reviewer read it) holds it: an unbacked citation is recorded and
    counted, and changes nothing else (the rating stands)."""

    claim: Literal["strength", "weakness"]
    index: int = Field(ge=0, description="The item's place in strengths or weaknesses, from 0.")
    quote: str
    found: bool = Field(
        description="The quote is in the paper (case, whitespace and typography forgiven)."
    )


class Review(Record):
    """One simulated reviewer's review of a paper."""

    reviewer: str = Field(description="Name of the reviewer profile that wrote it.")
    seed: int = Field(description="Sampling seed of the call.")
    summary: str
    strengths: list[str]
    weaknesses: list[str]
    questions: list[str]
    soundness: int = Field(ge=1, le=4)
    presentation: int = Field(ge=1, le=4)
    contribution: int = Field(ge=1, le=4)
    rating: int = Field(description="Overall rating on the venue's scale.")
    confidence: int = Field(ge=1, le=5)
    citations: list[Citation] = Field(
        default_factory=list,
        description="The passages the reviewer quoted for its strengths and weaknesses (items "
        "that quote nothing have none).",
    )

    @property
    def unbacked_citations(self) -> int:
        """Citations whose quote is not in the paper."""
        return sum(not c.found for c in self.citations)


class UnscoredReview(Record):
    """A reviewer whose answer could not be scored, and why."""

    reviewer: str
    seed: int
    reason: str


class Removal(Record):
    """A span anonymisation removed from a paper before review."""

    kind: str = Field(
        description="author-block, venue-header, acknowledgements, funding, code-url, ..."
    )
    text: str


class PaperReview(Record):
    """Every review of one paper, its score (the mean rating) and the decision the score gives."""

    paper_id: str
    source: str = Field(description="The paper's file, relative path or name.")
    reviewer_model: str = Field(description="The model (or baseline) that reviewed it.")
    baseline: bool = Field(description="True for the offline, fitted baseline reviewer.")
    reviews: list[Review] = Field(default_factory=list)
    unscored: list[UnscoredReview] = Field(default_factory=list)
    meta_review: str | None = None
    score: float | None = Field(
        description="Mean rating of the scored reviews (the baseline: its prediction); None if "
        "nothing was scored."
    )
    decision: Literal["accept", "reject"] | None = Field(
        description="accept when score >= threshold; None when the paper is unscored."
    )
    threshold: float
    removed: list[Removal] = Field(default_factory=list)
    fit: str | None = Field(
        default=None, description="The rule applied to fit a long paper to the model's context."
    )


def decide(score: float | None, threshold: float) -> Literal["accept", "reject"] | None:
    """The decision a score gives: accept at or above the threshold; None for no score."""
    if score is None:
        return None
    return "accept" if score >= threshold else "reject"


def baseline_review(
    paper_id: str, baseline: str, score: float, threshold: float, removed: Sequence[Removal] = ()
) -> PaperReview:
    """A baseline's review of a paper: no reviews, its predicted ``score``, and the decision
    that score gives at ``threshold``."""
    return PaperReview(
        paper_id=paper_id,
        source=paper_id,
        reviewer_model=baseline,
        baseline=True,
        score=score,
        decision=decide(score, threshold),
        threshold=threshold,
        removed=list(removed),
    )


def mean_rating(reviews: list[Review]) -> float | None:
    """The mean overall rating of the scored reviews; None when there are none (never 0)."""
    if not reviews:
        return None
    return sum(review.rating for review in reviews) / len(reviews)
