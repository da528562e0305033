"""The ``audit`` section: how ``papergym audit`` measures criterion leakage."""

from __future__ import annotations

from pydantic import Field

from papergym.configbase import ConfigSection

LEXICAL_THRESHOLD = 0.75
"""The overlap screen's lexical threshold (why this value: :mod:`papergym.audit.overlap`)."""
EMBEDDING_THRESHOLD = 0.80
"""The overlap screen's embedding threshold (why this value: :mod:`papergym.audit.overlap`)."""


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
