"""The ``audit`` section: how ``papergym audit`` measures criterion leakage."""

from __future__ import annotations

from pydantic import Field

from papergym.configbase import ConfigSection

LEXICAL_THRESHOLD = 0.75
"""The overlap screen's lexical threshold (why this value: :mod:`papergym.audit.overlap`)."""
EMBEDDING_THRESHOLD = 0.80
"""The overlap screen's embedding threshold (why this value: :mod:`papergym.audit.overlap`)."""


class UsefulnessSection(ConfigSection):
    """``papergym audit --usefulness``: the thresholds of the keep/reweight/drop rule
    (:func:`papergym.audit.usefulness_rule.recommend`)."""

    min_answers: int = Field(8, ge=1)
    """Scored answers a criterion needs before it is judged at all; with fewer it is kept
    ("too few answers"), since a few answers cannot show it is useless."""
    duplicate_threshold: float = Field(0.6, ge=0.0, le=1.0)
    """Token Jaccard similarity (content-word stems) to a higher-ranked criterion of the same
    rubric at which a criterion is a near-duplicate, and dropped."""
    min_spread: float = Field(0.1, ge=0.0, le=1.0)
    """Share of answer groups in which a criterion's verdict must vary; below it the criterion
    gives almost no gradient, and its weight is scaled by reweight_factor."""
    min_correlation: float = Field(-0.2, ge=-1.0, le=1.0)
    """Correlation with the rest of the rubric below which a criterion works against the rest
    (it is reweighted)."""
    drop_never_met: bool = False
    """Drop a criterion no scored answer met. Off by default: with weak answers (a small policy
    early in training) a never-met criterion is more often hard than useless, and dropping it
    would strip the rubric of exactly what training should reach for."""
    reweight_factor: float = Field(0.5, gt=0.0, lt=1.0)
    """What a reweighted criterion's weight is multiplied by (its sign is kept)."""


class AuditSection(ConfigSection):
    """``papergym audit``: criterion leakage."""

    judge: bool = False
    """Also ask the LLM serving the judge role, per question, which criteria can be inferred
    from the question alone (needs an LLM: --llm-config or --base-url/--model, or llm in the -c
    file) (--judge)."""
    lexical_threshold: float = Field(LEXICAL_THRESHOLD, ge=0.0, le=1.0)
    """Overlap screen: share of a criterion's content words found in the question at which it
    counts as leaked (--lexical-threshold)."""
    embedding_threshold: float = Field(EMBEDDING_THRESHOLD, ge=0.0, le=1.0)
    """Overlap screen: cosine similarity to a question sentence at which a criterion counts as
    leaked (--embedding-threshold)."""
    top: int = Field(10, ge=0)
    """How many of the most-leaked criteria to list (--top)."""
    usefulness: UsefulnessSection = UsefulnessSection()
    """``papergym audit --usefulness``: when a criterion is kept, reweighted or dropped."""
