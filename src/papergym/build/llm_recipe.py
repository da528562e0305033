"""The LLM recipe (SPEC §2), one step per method, read top to bottom.

paper → map (per section or batch of short sections) → reduce (per stage) → question (field +
background only) → reference (question + method/experiment only, no numbers) → R_A and R_Q
(10 each) → filter generic and leaked candidates → merge by selection and ranking → top 10.
Each step that can fail a quality gate gets one repair attempt before the paper is dropped.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from importlib import resources
from string import Template
from typing import Literal

from pydantic import BaseModel, Field

from papergym.build.general import GENERAL_CRITERIA
from papergym.build.text import has_numeric_result, split_sentences, strip_numeric_results
from papergym.embed import cosine_matrix, embed
from papergym.llm.client import LLMClient
from papergym.llm.types import Message
from papergym.records import (
    STAGE_NAMES,
    Criterion,
    Instance,
    Paper,
    RecipeName,
    Rubric,
    StageName,
    Stages,
    content_hash,
)

RUBRIC_SIZE = 10
Origin = Literal["answer", "question"]
# Similarity above which a question sentence "reveals" a method sentence, or a candidate
# criterion restates the question (MiniLM cosine; paraphrases score ~0.8 and above).
REVEAL_SIMILARITY = 0.8
_SKIPPED_SECTIONS = re.compile(
    r"acknowledg|author contributions?|competing interests?|data availability|funding|references",
    re.IGNORECASE,
)
_GENERIC = re.compile(
    r"^the plan (includes?|uses?|has|compares? (against|with|to)) (a |an |the |some )?"
    r"(baselines?|experiments?|evaluation|metrics?|datasets?|ablations?)\.?$",
    re.IGNORECASE,
)
_STAGE_INSTRUCTIONS: dict[StageName, str] = {
    "field": "Write 1-3 sentences naming the discipline, the sub-field and the research direction.",
    "background": "Cover the overview of the area, the prior work and the open gaps. Leave out the "
    "paper's own solution and all results.",
    "solution": "Cover the core idea and its motivation, the architecture or technical details, the "
    "key components and the innovations. Leave out hyper-parameter values.",
    "experiment": "Cover the experimental design and framework, the data and baselines, the "
    "evaluation and metrics, the implementation and settings, and the analyses or validation "
    "strategy. Leave out every numeric result.",
}


@dataclass(frozen=True)
class RecipeInputs:
    """Which stages each recipe writes its question and its reference/criteria from."""

    question_from: tuple[StageName, ...]
    answer_from: tuple[StageName, ...]
    dimensions: tuple[Literal["method", "experiment"], ...]
    question_note: str = ""


RECIPES: dict[RecipeName, RecipeInputs] = {
    "papergym": RecipeInputs(
        ("field", "background"), ("solution", "experiment"), ("method", "experiment")
    ),
    "innov": RecipeInputs(("field", "background"), ("solution",), ("method",)),
    "design": RecipeInputs(
        ("field", "background", "solution"),
        ("experiment",),
        ("experiment",),
        question_note="The method below is given: state it as the approach to be validated and ask "
        "for a plan of experiments that would validate it. Do not hint at baselines, datasets, "
        "metrics, ablations or expected outcomes.",
    ),
}


class BuildDropError(Exception):
    """A paper failed a step or a quality gate; it goes to dropped.jsonl with the step."""

    def __init__(self, step: str, reason: str) -> None:
        super().__init__(f"{step}: {reason}")
        self.step = step
        self.reason = reason


class StageEvidence(BaseModel):
    research_field: str = ""
    research_background: str = ""
    solution: str = ""
    experiment: str = ""


class StageText(BaseModel):
    text: str


class QuestionOut(BaseModel):
    question: str


class ReferenceOut(BaseModel):
    reference_answer: str


class CandidateCriterion(BaseModel):
    text: str
    dimension: Literal["method", "experiment"]


class CriteriaOut(BaseModel):
    criteria: list[CandidateCriterion] = Field(min_length=RUBRIC_SIZE, max_length=RUBRIC_SIZE)


class MergeOut(BaseModel):
    selected: list[int]


def prompt(name: str, **values: str) -> list[Message]:
    """A user message from ``prompts/NAME.md`` with ``$placeholders`` filled in."""
    text = resources.files("papergym.build").joinpath("prompts", f"{name}.md").read_text("utf-8")
    return [Message(role="user", content=Template(text).substitute(values))]


def section_units(paper: Paper, max_words: int) -> list[tuple[str, str]]:
    """(where, text) units for the map step: long sections cut, short ones batched."""
    units: list[tuple[str, str]] = []
    batch: list[str] = []
    names: list[str] = []

    def flush() -> None:
        if batch:
            units.append(("sections: " + "; ".join(names), "\n\n".join(batch)))
            batch.clear()
            names.clear()

    for section in paper.sections:
        heading = " > ".join((*section.path, section.heading)) or "untitled"
        if not section.text.strip() or _SKIPPED_SECTIONS.search(section.heading):
            continue
        words = section.text.split()
        if len(words) > max_words:
            flush()
            for part, start in enumerate(range(0, len(words), max_words), start=1):
                units.append(
                    (
                        f"section: {heading} (part {part})",
                        " ".join(words[start : start + max_words]),
                    )
                )
            continue
        if sum(len(b.split()) for b in batch) + len(words) > max_words:
            flush()
        batch.append(f"[{heading}]\n{section.text}")
        names.append(heading)
    flush()
    return units


@dataclass
class LLMBuilder:
    """Writes stages and instances with the LLM roles extractor, writer and rubric."""

    llm: LLMClient
    max_unit_words: int = 1200
    notes: list[str] = field(default_factory=list)

    async def stages(self, paper: Paper) -> Stages:
        """Map every unit to the four kinds of evidence, then reduce each stage."""
        units = [("abstract", paper.abstract), *section_units(paper, self.max_unit_words)]
        evidence = await asyncio.gather(
            *(self._extract(paper, where, text) for where, text in units if text.strip())
        )
        keys = {
            "field": "research_field",
            "background": "research_background",
            "solution": "solution",
            "experiment": "experiment",
        }
        texts: dict[str, str] = {}
        reduced = await asyncio.gather(
            *(
                self._reduce(paper, stage, [getattr(e, keys[stage]) for e in evidence])
                for stage in STAGE_NAMES
            )
        )
        for stage, text in zip(STAGE_NAMES, reduced, strict=True):
            texts[stage] = text
        return Stages(paper_id=paper.id, builder="llm", **texts)

    async def _extract(self, paper: Paper, where: str, text: str) -> StageEvidence:
        messages = prompt("extract", title=paper.title, where=where, text=text)
        result = await self.llm.call("extractor", messages, schema=StageEvidence, stage="map")
        assert result.parsed is not None
        return result.parsed

    async def _reduce(self, paper: Paper, stage: StageName, notes: list[str]) -> str:
        notes = [n.strip() for n in notes if n and n.strip()]
        if not notes:
            raise BuildDropError("reduce", f"no evidence for the {stage} stage")
        listed = "\n".join(f"- {note}" for note in notes)
        messages = prompt(
            "reduce",
            stage=stage,
            instructions=_STAGE_INSTRUCTIONS[stage],
            title=paper.title,
            notes=listed,
        )
        result = await self.llm.call("writer", messages, schema=StageText, stage=f"reduce:{stage}")
        assert result.parsed is not None
        text = result.parsed.text.strip()
        if not text:
            raise BuildDropError("reduce", f"empty {stage} stage")
        return strip_numeric_results(text) if stage == "experiment" else text

    async def instance(self, paper: Paper, stages: Stages, recipe: RecipeName) -> Instance:
        """Question, reference and rubric for one paper under one recipe."""
        inputs = RECIPES[recipe]
        question = await self._question(stages, inputs)
        reference = await self._reference(question, stages, inputs)
        criteria, note = await self._rubric(paper, question, reference, inputs)
        return Instance(
            id=Instance.make_id(recipe, "llm", paper.id),
            recipe=recipe,
            builder="llm",
            paper_id=paper.id,
            title=paper.title,
            domain=stages.field,
            arxiv_id=paper.meta.arxiv_id,
            source_path=paper.meta.source_path,
            question=question,
            reference_answer=reference,
            rubric=Rubric(specific=tuple(criteria), general=GENERAL_CRITERIA, note=note),
        )

    async def _question(self, stages: Stages, inputs: RecipeInputs) -> str:
        values = {stage: getattr(stages, stage) for stage in inputs.question_from}
        extra = inputs.question_note
        if "solution" in values:
            extra += "\n\nMethod (given):\n" + values["solution"]
        for attempt in range(2):
            messages = prompt(
                "question", field=values["field"], background=values["background"], extra=extra
            )
            result = await self.llm.call(
                "writer", messages, schema=QuestionOut, stage="question", sample_index=attempt
            )
            assert result.parsed is not None
            question = result.parsed.question.strip()
            hidden = [stages.experiment] + ([stages.solution] if "solution" not in values else [])
            # embeddings run on a worker thread (torch releases the GIL), so the event loop
            # keeps the other papers' requests flowing meanwhile
            revealed = await asyncio.to_thread(_revealing_sentence, question, "\n".join(hidden))
            if question and revealed is None:
                return question
            extra += (
                f'\n\nA previous draft gave away part of the answer ("{revealed}"); leave it out.'
            )
        raise BuildDropError(
            "question", "the question reveals the method or experiments after one repair"
        )

    async def _reference(self, question: str, stages: Stages, inputs: RecipeInputs) -> str:
        material = "\n\n".join(
            f"{stage.capitalize()}:\n{getattr(stages, stage)}" for stage in inputs.answer_from
        )
        messages = prompt("reference", question=question, material=material)
        result = await self.llm.call("writer", messages, schema=ReferenceOut, stage="reference")
        assert result.parsed is not None
        reference = result.parsed.reference_answer.strip()
        if any(has_numeric_result(s) for s in split_sentences(reference)):
            repair = await self.llm.call(
                "writer",
                prompt("repair_numbers", text=reference),
                schema=ReferenceOut,
                stage="reference:repair",
            )
            assert repair.parsed is not None
            reference = strip_numeric_results(repair.parsed.reference_answer.strip())
        if not reference:
            raise BuildDropError("reference", "empty reference answer")
        return reference

    async def _rubric(
        self, paper: Paper, question: str, reference: str, inputs: RecipeInputs
    ) -> tuple[list[Criterion], str]:
        note = (
            ""
            if len(inputs.dimensions) > 1
            else f' Use only the dimension "{inputs.dimensions[0]}".'
        )
        from_answer, from_question = await asyncio.gather(
            self.llm.call(
                "rubric",
                prompt(
                    "rubric_answer", question=question, reference=reference, dimension_note=note
                ),
                schema=CriteriaOut,
                stage="rubric:R_A",
            ),
            self.llm.call(
                "rubric",
                prompt("rubric_question", question=question, dimension_note=note),
                schema=CriteriaOut,
                stage="rubric:R_Q",
            ),
        )
        assert from_answer.parsed is not None and from_question.parsed is not None
        candidates: list[tuple[CandidateCriterion, Origin]] = [
            (c, "answer") for c in from_answer.parsed.criteria
        ]
        candidates += [(c, "question") for c in from_question.parsed.criteria]
        kept, removed = await asyncio.to_thread(_filter_candidates, candidates, question, inputs)
        if len(kept) < 3:
            raise BuildDropError(
                "rubric", f"only {len(kept)} usable criteria ({'; '.join(removed[:3])})"
            )
        order = await self._merge(question, reference, [c.text for c, _ in kept])
        criteria = [
            Criterion(
                id="c-" + content_hash({"paper": paper.id, "text": kept[i][0].text}, 12),
                text=kept[i][0].text.strip(),
                dimension=kept[i][0].dimension,
                origin=kept[i][1],
                rank=rank,
            )
            for rank, i in enumerate(order, start=1)
        ]
        shortfall = (
            ""
            if len(criteria) == RUBRIC_SIZE
            else (
                f"{len(criteria)} criteria: {len(candidates) - len(kept)} candidates removed ({'; '.join(removed[:3])})"
            )
        )
        return criteria, shortfall

    async def _merge(self, question: str, reference: str, texts: list[str]) -> list[int]:
        count = min(RUBRIC_SIZE, len(texts))
        listed = "\n".join(f"{i}. {t}" for i, t in enumerate(texts, start=1))
        for attempt in range(2):
            messages = prompt(
                "merge", count=str(count), question=question, reference=reference, candidates=listed
            )
            result = await self.llm.call(
                "rubric", messages, schema=MergeOut, stage="rubric:merge", sample_index=attempt
            )
            assert result.parsed is not None
            chosen = [n - 1 for n in result.parsed.selected]
            if (
                len(chosen) == count
                and len(set(chosen)) == count
                and all(0 <= i < len(texts) for i in chosen)
            ):
                return chosen
        raise BuildDropError(
            "merge", f"the merge did not select {count} distinct valid candidates after one repair"
        )


def _filter_candidates(
    candidates: list[tuple[CandidateCriterion, Origin]], question: str, inputs: RecipeInputs
) -> tuple[list[tuple[CandidateCriterion, Origin]], list[str]]:
    """Drop exact duplicates, generic candidates, wrong dimensions and restatements of the question."""
    kept: list[tuple[CandidateCriterion, Origin]] = []
    removed: list[str] = []
    question_sentences = split_sentences(question) or [question]
    similarity = cosine_matrix(
        embed([c.text for c, _ in candidates]), embed(question_sentences)
    ).max(axis=1)
    seen: set[str] = set()
    for (candidate, origin), sim in zip(candidates, similarity, strict=True):
        normalised = " ".join(candidate.text.lower().split())
        if normalised in seen:  # R_A and R_Q often share a criterion word for word
            removed.append(f"duplicate: {candidate.text!r}")
            continue
        seen.add(normalised)
        if _GENERIC.match(candidate.text.strip()) or len(candidate.text.split()) < 5:
            removed.append(f"generic: {candidate.text!r}")
        elif candidate.dimension not in inputs.dimensions:
            removed.append(f"dimension {candidate.dimension} not in this recipe")
        elif sim > REVEAL_SIMILARITY:
            removed.append(f"inferable from the question ({sim:.2f}): {candidate.text!r}")
        else:
            kept.append((candidate, origin))
    return kept, removed


def _revealing_sentence(question: str, hidden: str) -> str | None:
    """A question sentence too close to a sentence of a stage the question must not see."""
    hidden_sentences = split_sentences(hidden)
    question_sentences = split_sentences(question)
    if not hidden_sentences or not question_sentences:
        return None
    similarity = cosine_matrix(embed(question_sentences), embed(hidden_sentences))
    best = similarity.max(axis=1)
    index = int(best.argmax())
    return question_sentences[index] if best[index] > REVEAL_SIMILARITY else None
