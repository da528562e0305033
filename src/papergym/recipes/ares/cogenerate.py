"""Co-generation: in ONE call, a self-contained question, a reference answer grounded in the
document, and a rubric of weighted criteria.

The schema keeps desired criteria and pitfalls apart, so the sign of a weight is never the
model's to get wrong: desired criteria weigh 1 (optional) to ``ares.max_weight`` (essential),
pitfalls -1 (minor) to ``-ares.max_pitfall_weight`` (severe), and a weight outside its range is
invalid output, which the LLM layer asks the model to repair. Each criterion is one checkable
statement; a pitfall is phrased as the mistake ("States that ... cures ...", "Omits ...").
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field, create_model

from papergym.llm.client import LLMClient
from papergym.llm.types import Message, Role
from papergym.recipes.ares.prompting import answer_or_reject, excerpt, prompt
from papergym.recipes.ares.record import AresDraft, CoGenerated, DraftCriterion
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.steps import Reject

ROLE: Role = "writer"


def cogeneration_schema(section: AresSection) -> type[BaseModel]:
    """The co-generation answer, with the configured weight ranges and counts in the schema."""
    desired = create_model(
        "DesiredCriterion",
        text=(str, Field(description="One checkable statement a good answer satisfies.")),
        weight=(
            int,
            Field(ge=1, le=section.max_weight, description="1 optional .. max essential."),
        ),
    )
    pitfall = create_model(
        "PitfallCriterion",
        text=(str, Field(description="The mistake, stated as what a bad answer does.")),
        weight=(
            int,
            Field(ge=-section.max_pitfall_weight, le=-1, description="-1 minor .. -max severe."),
        ),
    )
    model: type[BaseModel] = create_model(
        "CoGenerationOut",
        question=(str, Field(description="Self-contained: answerable without the document.")),
        reference_answer=(str, Field(description="A complete answer grounded in the document.")),
        criteria=(list[desired], Field(min_length=1, max_length=section.max_criteria)),
        pitfalls=(list[pitfall], Field(max_length=section.max_criteria)),
    )
    return model


class WeightedText(BaseModel):
    text: str
    weight: int


class CoGenerationAnswer(BaseModel):
    """An answer already validated against :func:`cogeneration_schema`, read with static types."""

    question: str
    reference_answer: str
    criteria: list[WeightedText]
    pitfalls: list[WeightedText]


def criteria_from(answer: CoGenerationAnswer) -> tuple[DraftCriterion, ...]:
    """Desired criteria then pitfalls, texts whitespace-normalised, empty ones left out."""
    found: list[DraftCriterion] = []
    for item in [*answer.criteria, *answer.pitfalls]:
        text = " ".join(item.text.split())
        if text:
            found.append(DraftCriterion(text=text, weight=item.weight))
    return tuple(found)


@dataclass(frozen=True)
class CoGenerator:
    """The ``cogenerate`` step: one structured call per document."""

    client: LLMClient
    section: AresSection

    def messages_for(self, draft: AresDraft) -> list[Message]:
        domain = draft.domain or "general"
        pitfalls = (
            f"The {domain} domain requires at least one pitfall: name the harmful or misleading "
            "mistakes an answer could make here (a hallucinated fact, an omitted critical "
            "safety disclosure, advice beyond what the facts support)."
            if domain in self.section.pitfall_domains
            else "Add pitfalls where an answer could plausibly go wrong in a way that matters; "
            "none is required."
        )
        return prompt(
            "cogenerate",
            domain=domain,
            domain_description=self.section.domains.get(domain, ""),
            persona=draft.persona or "general reader",
            min_criteria=str(self.section.min_criteria),
            max_criteria=str(self.section.max_criteria),
            max_weight=str(self.section.max_weight),
            max_pitfall_weight=str(self.section.max_pitfall_weight),
            pitfall_note=pitfalls,
            document=excerpt(draft.document.text, self.section.max_prompt_words),
        )

    async def run(self, draft: AresDraft) -> AresDraft | Reject:
        schema = cogeneration_schema(self.section)
        sent = self.messages_for(draft)

        parsed = await answer_or_reject(self.client, ROLE, sent, schema, stage="ares:cogenerate")
        if isinstance(parsed, Reject):
            return parsed
        answer = CoGenerationAnswer.model_validate(parsed.model_dump())
        question = answer.question.strip()
        reference = answer.reference_answer.strip()
        if not question:
            return Reject("empty_question: the co-generated question is empty")
        if not reference:
            return Reject("empty_reference: the co-generated reference answer is empty")
        qa = CoGenerated(question=question, reference=reference, criteria=criteria_from(answer))
        return draft.model_copy(update={"qa": qa})
