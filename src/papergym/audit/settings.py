"""The ``audit`` section: how ``papergym audit`` measures criterion leakage."""

from __future__ import annotations

from pydantic import Field

from papergym.configbase import ConfigSection


class AuditSection(ConfigSection):
    """``papergym audit``: criterion leakage."""

    judge: bool = False
    """Also ask the LLM judge role, per question, which criteria it reveals (--judge)."""
    lexical_threshold: float = Field(0.75, ge=0.0, le=1.0)
    """Share of a criterion's content words found in the question at which it counts as
    leaked (--lexical-threshold)."""
    embedding_threshold: float = Field(0.80, ge=0.0, le=1.0)
    """Cosine similarity to a question sentence at which a criterion counts as leaked
    (--embedding-threshold)."""
    top: int = Field(10, ge=0)
    """How many of the most-leaked criteria to list (--top)."""
