"""The record one document carries through the ARES steps, and what each step adds to it.

:class:`AresDraft` starts as a bare :class:`~papergym.recipes.ares.documents.Document`; every step
fills in its own field (``produces`` in :func:`papergym.recipes.ares.pipeline.ares_steps`), so a
runner that saves step outputs resumes after the last finished step, and a finished draft holds
the whole story of its instance: the classifier's reason, how the domain was chosen, the
co-generated question, reference and rubric, and both verifications.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from papergym.recipes.ares.documents import Document
from papergym.records import LeakageVerdict, Record


class Suitability(Record):
    """The LLM classifier's verdict on a document: can good questions be asked from it?"""

    suitable: bool
    reason: str


class DomainChoice(Record):
    """The domain (one of the configured names) and target persona of a document."""

    domain: str
    persona: str
    method: Literal["embedding", "llm"] = Field(
        description="embedding: nearest domain description (offline), persona the domain's "
        "default; llm: both picked by one structured call."
    )
    score: float | None = Field(
        default=None, description="Cosine to the domain's description (embedding method)."
    )
    default_persona: bool = Field(
        default=False, description="The persona is the domain's default, not chosen for it."
    )


class DraftCriterion(Record):
    """A co-generated criterion: one checkable statement and its signed weight."""

    text: str
    weight: int = Field(description="> 0 desired (essential = high), < 0 a pitfall; never 0.")
    leakage: tuple[LeakageVerdict, ...] = ()

    @property
    def pitfall(self) -> bool:
        return self.weight < 0


class CoGenerated(Record):
    """The one co-generation call's output: question, grounded reference, weighted rubric."""

    question: str
    reference: str
    criteria: tuple[DraftCriterion, ...]


class QACheck(Record):
    """The QA verification: the LLM's three checks and the per-criterion leakage screen."""

    self_contained: bool
    faithful: bool
    no_giveaway: bool
    reason: str = ""
    leaked: tuple[str, ...] = Field(
        default=(), description="Criteria the leakage screen removed (the question states them)."
    )


class RubricCheck(Record):
    """The rubric verification: the coverage found and the criteria it removed."""

    coverage: float | None = Field(
        default=None, description="Share of the reference's key points the criteria cover."
    )
    key_points: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    duplicates: tuple[str, ...] = Field(
        default=(), description="Criteria removed as near-duplicates of a kept one."
    )
    removed: tuple[str, ...] = Field(
        default=(), description="Criteria removed as malformed, each with the reason."
    )


class AresDraft(Record):
    """One document's progress through the ARES steps (each field filled by one step)."""

    document: Document
    suitability: Suitability | None = None
    domain: str | None = None
    persona: str | None = None
    domain_choice: DomainChoice | None = None
    qa: CoGenerated | None = None
    qa_check: QACheck | None = None
    rubric_check: RubricCheck | None = None

    @classmethod
    def start(cls, document: Document) -> AresDraft:
        """The draft a document enters the first step as."""
        return cls(document=document)

    def need_qa(self) -> CoGenerated:
        """The co-generated QA pair, which every step after co-generation reads."""
        if self.qa is None:
            raise ValueError(f"document {self.document.id}: co-generation has not run")
        return self.qa
