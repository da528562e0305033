"""Domain and persona: which of the configured domains a document belongs to, and whom its
question is for.

Offline, the domain is the one whose description is nearest the document in MiniLM embedding
space (the document's first words, in chunks, averaged), and the persona is that domain's default
(recorded as such: ``default_persona``). With an LLM, one structured call picks both: the domain
from an enum of the configured names, the persona freely, with the domain's personas suggested.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field, create_model

from papergym.audit.overlap import Embedder
from papergym.llm.client import LLMClient
from papergym.llm.types import Role
from papergym.recipes.ares.prompting import answer_or_reject, excerpt, prompt
from papergym.recipes.ares.record import AresDraft, DomainChoice
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.steps import Reject

ROLE: Role = "extractor"
CHUNK_WORDS = 200
"""MiniLM reads about 256 word pieces; longer chunks would be cut silently."""
MAX_CHUNKS = 4


def personas_of(section: AresSection, domain: str) -> list[str]:
    """The personas suggested for ``domain``, its default first."""
    return list(section.personas.get(domain) or section.general_personas)


def default_persona(section: AresSection, domain: str) -> str:
    return personas_of(section, domain)[0]


def chunks(text: str, words: int = CHUNK_WORDS, limit: int = MAX_CHUNKS) -> list[str]:
    """The document's first ``limit`` chunks of ``words`` words (what the offline step embeds)."""
    split = text.split()
    return [" ".join(split[i : i + words]) for i in range(0, len(split), words)][:limit] or [""]


def nearest_domain(
    document: npt.NDArray[np.float32], descriptions: npt.NDArray[np.float32]
) -> tuple[int, float]:
    """Index and cosine of the description nearest the mean of the document's chunk vectors."""
    centre = document.mean(axis=0)
    centre = centre / (float(np.linalg.norm(centre)) or 1.0)
    similarity = descriptions @ centre
    index = int(similarity.argmax())
    return index, float(similarity[index])


@dataclass
class EmbeddingDomains:
    """The offline ``domain`` step (CPU-bound: the runner should run it in a thread)."""

    section: AresSection
    embedder: Embedder
    _vectors: npt.NDArray[np.float32] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def descriptions(self) -> npt.NDArray[np.float32]:
        """The domain descriptions' vectors, embedded once."""
        with self._lock:
            if self._vectors is None:
                self._vectors = self.embedder(list(self.section.domains.values()))
            return self._vectors

    def choose(self, text: str) -> DomainChoice:
        index, score = nearest_domain(self.embedder(chunks(text)), self.descriptions())
        domain = list(self.section.domains)[index]
        return DomainChoice(
            domain=domain,
            persona=default_persona(self.section, domain),
            method="embedding",
            score=round(score, 4),
            default_persona=True,
        )

    def run(self, draft: AresDraft) -> AresDraft:
        choice = self.choose(draft.document.text)
        return draft.model_copy(
            update={"domain": choice.domain, "persona": choice.persona, "domain_choice": choice}
        )


def domain_schema(names: list[str]) -> type[BaseModel]:
    """The LLM's answer: the domain as an enum of the configured names, then a persona."""
    domain_type: Any = Literal[tuple(names)]
    model: type[BaseModel] = create_model(
        "DomainOut",
        reason=(str, Field(description="One sentence: what the document is about.")),
        domain=(domain_type, Field(description="The one domain the document belongs to.")),
        persona=(str, Field(description="Who would ask a question about it (a role, 1-4 words).")),
    )
    return model


class DomainAnswer(BaseModel):
    """An answer already validated against :func:`domain_schema`, read with static types."""

    reason: str
    domain: str
    persona: str


@dataclass(frozen=True)
class LLMDomains:
    """The ``domain`` step with an LLM: one structured call for both domain and persona."""

    client: LLMClient
    section: AresSection

    async def run(self, draft: AresDraft) -> AresDraft | Reject:
        names = list(self.section.domains)
        listed = "\n".join(
            f"- {name}: {text} (personas: {', '.join(personas_of(self.section, name))})"
            for name, text in self.section.domains.items()
        )
        messages = prompt(
            "domain",
            domains=listed,
            document=excerpt(draft.document.text, self.section.max_classify_words),
        )
        schema = domain_schema(names)

        parsed = await answer_or_reject(self.client, ROLE, messages, schema, stage="ares:domain")
        if isinstance(parsed, Reject):
            return parsed
        answer = DomainAnswer.model_validate(parsed.model_dump())
        domain = answer.domain
        persona = " ".join(answer.persona.split())[:80]
        choice = DomainChoice(
            domain=domain,
            persona=persona or default_persona(self.section, domain),
            method="llm",
            default_persona=not persona,
        )
        return draft.model_copy(
            update={"domain": choice.domain, "persona": choice.persona, "domain_choice": choice}
        )
