"""The ``review`` section: simulated peer review, its offline baseline and its evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from papergym.configbase import ConfigSection


class GuardSettings(ConfigSection):
    """``review.guards``: the review reward's guards against texts that flatter a word-weight
    reviewer (word lists, appended words, duplicated or shuffled text; see
    papergym.review.guards). Each guard multiplies the rating above the scale's lowest by a
    factor; the score names the guards that fired."""

    apply: Literal["offline", "all", "none"] = "offline"
    """Which reviewers the reward guards: offline (the word-weight baseline), all (the LLM
    reviewer too), none."""
    min_sentence_words: int = Field(4, ge=1)
    """A fluent sentence has at least this many words."""
    max_sentence_words: int = Field(80, ge=2)
    """A fluent sentence has at most this many words (a word list has no full stops)."""
    min_function_share: float = Field(0.2, ge=0.0, le=1.0)
    """A fluent sentence has at least this share of function words (the, of, we, ...)."""
    min_fluent_words: int = Field(150, ge=0)
    """The fluency gate: a text with fewer words in fluent sentences gets the scale's lowest
    rating, unreviewed."""
    fluency_weight: float = Field(1.0, ge=0.0)
    """Factor 1 - weight x (share of words in non-fluent sentences beyond the allowance)."""
    nonfluent_allowance: float = Field(0.35, ge=0.0, le=1.0)
    """Share of words in non-fluent sentences (tables, formulas, references) not penalised."""
    duplication_weight: float = Field(1.5, ge=0.0)
    """Factor 1 - weight x (share of words in sentences repeating an earlier one, beyond the
    allowance)."""
    duplication_allowance: float = Field(0.1, ge=0.0, le=1.0)
    """Share of words in repeated sentences not penalised (running headers, captions)."""
    repetition_ngram: int = Field(8, ge=2)
    """The repetition guard counts the fluent words inside an n-gram of this many words seen
    before (a sentence repeated whole is the duplication guard's)."""
    repetition_weight: float = Field(2.0, ge=0.0)
    """Factor 1 - weight x (share of words in repeated n-grams beyond the allowance)."""
    repetition_allowance: float = Field(0.1, ge=0.0, le=1.0)
    """Share of the fluent words in repeated n-grams not penalised (stock phrases)."""
    min_local_order: float = Field(1.7, ge=0.0)
    """Neighbouring sentences share more words than distant ones; below this ratio (about 1
    for shuffled text) the local-order guard fires."""
    order_factor: float = Field(0.5, ge=0.0, le=1.0)
    """The local-order guard's factor when it fires."""
    min_order_sentences: int = Field(20, ge=4)
    """Fewer fluent sentences: the local order is not judged."""
    structure_weight: float = Field(0.5, ge=0.0, le=1.0)
    """Factor 1 - weight x (share of the required sections missing: introduction, method,
    experiments, conclusion, each present, in order, and long enough)."""
    min_section_words: int = Field(40, ge=0)
    """A required section counts when at least this many fluent words follow its heading."""
    max_heading_words: int = Field(12, ge=1)
    """A heading is a paragraph of one short line, at most this many words."""


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
    guards: GuardSettings = GuardSettings()
    """The review reward's guards against word lists, appended words, duplicated and shuffled
    text (see GuardSettings)."""
