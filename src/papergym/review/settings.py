"""The ``review`` section: simulated peer review, its offline baseline and its evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from papergym.configbase import ConfigSection


class ReviewSection(ConfigSection):
    """``papergym review``: simulated peer review, its offline baseline and its evaluation."""

    reviewer: Literal["auto", "llm", "offline"] = "auto"
    """llm: simulated reviewers through the reviewer role of the llm section; offline: the
    fitted baseline (no LLM, no reviews, a predicted score); auto: llm when an LLM is configured
    (--reviewer)."""
    reviewers: int = Field(4, ge=1)
    """Simulated reviewers per paper, each an independent LLM call with its own profile and
    sampling seed (--reviewers)."""
    venue: Literal["iclr"] = "iclr"
    """The venue whose rating scale reviews use (iclr: 1, 3, 5, 6, 8, 10)."""
    threshold: float | None = None
    """Decision threshold: accept when the score is at least this, on the venue's rating range
    (ICLR 1..10); null: the one calibrated on the human ratings and shipped with the baseline
    (for simulated reviewers the mean human rating that best matches the decisions, for the
    baseline its own). review eval also decides by it the scores given without a decision, and
    the constant and single-human rows (--threshold)."""
    temperature: float = Field(0.7, ge=0.0)
    """Sampling temperature of each review (the meta-review too)."""
    max_tokens: int = Field(2048, ge=64)
    """Longest review, in tokens; a review still cut after one larger budget leaves its paper
    unfinished (not saved, exit 1): raise this and run again to review it."""
    max_paper_words: int = Field(12000, ge=500)
    """Longer papers are fitted to this many words by a recorded, deterministic rule (front
    sections kept, appendices and references dropped first)."""
    meta_review: bool = True
    """Write a meta-review of each paper's reviews (text only: it never sets the score)."""
    paper_concurrency: int = Field(8, ge=1)
    """Papers reviewed at once; LLM calls are bounded by the endpoint's max_concurrency."""
    max_answer_chars: int = Field(100_000, ge=0)
    """The review reward cuts a longer text to this many characters before any other work, and
    flags it answer_truncated (0: no limit); a paper is longer than a plan, hence not
    reward.max_answer_chars (serve-reward --reward review --max-answer-chars)."""
    partial: Literal["flag", "unscored"] = "flag"
    """The review reward of a text scored from fewer reviews than asked (the others
    unparseable, cut, or their endpoint failed): flag: the mean of the scored reviews, flagged
    partial with the reason; unscored: no reward (reward.unscored where a number is needed)."""
    baseline: Path | None = None
    """Offline baseline: a coefficients file in place of the shipped one (null: shipped)."""
    resamples: int = Field(2000, ge=10)
    """review eval: bootstrap resamples of each interval."""
    level: float = Field(0.95, gt=0.0, lt=1.0)
    """review eval: confidence level of the intervals."""
    seed: int = 0
    """Seed of the reviewers' sampling seeds and of the bootstrap resampling."""
