"""The LLM recipe (SPEC §2) as build steps, read top to bottom.

paper → stages: map (per section or batch of short sections) and reduce (per stage) → question
(research goal + background only) → reference (question + method/experiment only, no numbers) →
candidates: R_A and R_Q (10 each) → filter generic and leaked candidates → merge by selection and
ranking → top 10, holding both dimensions (:mod:`papergym.recipes.dimensions`). A step that fails
a quality gate gets one repair attempt, then returns a :class:`~papergym.recipes.steps.Reject`
naming the gate. The leakage judge and the instance are
added by :mod:`papergym.recipes.pipeline`.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Literal

from pydantic import BaseModel, Field

from papergym.embed import cosine_matrix, embed
from papergym.llm.client import LLMClient
from papergym.llm.types import Message
from papergym.recipes.criteria import REVEAL_SIMILARITY
from papergym.recipes.dimensions import GATE as DIMENSIONS_GATE
from papergym.recipes.dimensions import cover_dimensions
from papergym.recipes.draft import Candidate, PaperDraft
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.recipes.specs import RecipeSpec, recipe
from papergym.recipes.steps import Reject, Step
from papergym.recipes.text import has_numeric_result, split_sentences, strip_numeric_results
from papergym.records import (
    RUBRIC_SIZE,
    STAGE_NAMES,
    Criterion,
    Paper,
    RecipeName,
    Rubric,
    StageName,
    Stages,
    content_hash,
)

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
    "research_goal": "Write 1-3 sentences on what the paper sets out to achieve and why. Do not "
    "describe how (no method, no experiments, no results). Also name the broad discipline "
    '(e.g. "computer science", "physics", "economics") and the sub-field, each in a few words.',
    "background": "Cover the overview of the area, the prior work and the open gaps. Leave out the "
    "paper's own solution and all results.",
    "solution": "Cover the core idea and its motivation, the architecture or technical details, the "
    "key components and the innovations. Leave out hyper-parameter values.",
    "experiment": "Cover the experimental design and framework, the data and baselines, the "
    "evaluation and metrics, the implementation and settings, and the analyses or validation "
    "strategy. Leave out every numeric result.",
}


class StageEvidence(BaseModel):
    research_goal: str = ""
    research_background: str = ""
    solution: str = ""
    experiment: str = ""


class StageText(BaseModel):
    text: str


class GoalText(StageText):
    """The goal stage's reduce answer: the goal, and the metadata kept beside it (SPEC §2.3)."""

    discipline: str = ""
    subfield: str = ""


_STAGE_KEYS: dict[StageName, str] = {
    "research_goal": "research_goal",
    "background": "research_background",
    "solution": "solution",
    "experiment": "experiment",
}
"""Each stage's key in the map step's JSON (SPEC §2.2)."""
_ANSWER_FORMATS: dict[bool, str] = {
    False: '{"text": "..."}',
    True: '{"text": "...", "discipline": "...", "subfield": "..."}',
}


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
    text = resources.files("papergym.recipes").joinpath("prompts", f"{name}.md").read_text("utf-8")
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


@dataclass(frozen=True)
class LLMRecipe:
    """The LLM recipe's steps for one recipe, writing with the roles extractor, writer, rubric."""

    llm: LLMClient
    recipe: RecipeName = "papergym"
    max_unit_words: int = 1200

    @property
    def inputs(self) -> RecipeSpec:
        return recipe(self.recipe)

    def steps(self) -> list[Step[PaperDraft]]:
        """stages → question → reference → rubric candidates → filter → merge (→ judge → instance,
        added by :func:`papergym.recipes.pipeline.recipe_steps`)."""
        return [
            Step("stages", self.stages_step, ("stages",)),
            Step("question", self.question_step, ("question",)),
            Step("reference", self.reference_step, ("reference",)),
            Step("candidates", self.candidates_step, ("candidates",)),
            Step("filter", self.filter_step, ("kept", "removed")),
            Step("merge", self.merge_step, ("rubric",)),
        ]

    # --- stages: map every unit to the four kinds of evidence, then reduce each stage ----------

    async def stages_step(self, draft: PaperDraft) -> PaperDraft | Reject:
        stages = await self.stages(draft.paper)
        return stages if isinstance(stages, Reject) else draft.model_copy(update={"stages": stages})

    async def stages(self, paper: Paper) -> Stages | Reject:
        units = [("abstract", paper.abstract), *section_units(paper, self.max_unit_words)]
        evidence = await asyncio.gather(
            *(self._extract(paper, where, text) for where, text in units if text.strip())
        )
        notes = {
            stage: [
                n.strip() for e in evidence if (n := getattr(e, _STAGE_KEYS[stage])) and n.strip()
            ]
            for stage in STAGE_NAMES
        }
        for stage in STAGE_NAMES:  # checked before any reduce call: none is spent on a drop
            if not notes[stage]:
                return Reject(f"no evidence for the {stage} stage", step="reduce")
        reduced = await asyncio.gather(
            *(self._reduce(paper, stage, notes[stage]) for stage in STAGE_NAMES)
        )
        texts: dict[str, str] = {}
        for stage, answer in zip(STAGE_NAMES, reduced, strict=True):
            if isinstance(answer, Reject):
                return answer
            texts[stage] = answer.text
            if isinstance(answer, GoalText):
                texts.update(discipline=answer.discipline, subfield=answer.subfield)
        return Stages(paper_id=paper.id, builder="llm", **texts)

    async def _extract(self, paper: Paper, where: str, text: str) -> StageEvidence:
        messages = prompt("extract", title=paper.title, where=where, text=text)
        result = await self.llm.call("extractor", messages, schema=StageEvidence, stage="map")
        assert result.parsed is not None
        return result.parsed

    async def _reduce(self, paper: Paper, stage: StageName, notes: list[str]) -> StageText | Reject:
        """One stage's merged text; the goal's answer also names discipline and sub-field."""
        listed = "\n".join(f"- {note}" for note in notes)
        goal = stage == "research_goal"
        messages = prompt(
            "reduce",
            stage=stage.replace("_", " "),
            instructions=_STAGE_INSTRUCTIONS[stage],
            title=paper.title,
            notes=listed,
            answer_format=_ANSWER_FORMATS[goal],
        )
        schema = GoalText if goal else StageText
        result = await self.llm.call("writer", messages, schema=schema, stage=f"reduce:{stage}")
        assert result.parsed is not None
        answer = result.parsed
        text = answer.text.strip()
        if not text:
            return Reject(f"empty {stage} stage", step="reduce")
        text = strip_numeric_results(text) if stage == "experiment" else text
        update = {"text": text}
        if isinstance(answer, GoalText):
            update.update(discipline=answer.discipline.strip(), subfield=answer.subfield.strip())
        return answer.model_copy(update=update)

    # --- question: from the stages a policy may see, repaired once if it gives the answer away ---

    async def question_step(self, draft: PaperDraft) -> PaperDraft | Reject:
        question = await self.question(draft.need_stages())
        if isinstance(question, Reject):
            return question
        return draft.model_copy(update={"question": question})

    async def question(self, stages: Stages) -> str | Reject:
        values = {stage: getattr(stages, stage) for stage in self.inputs.question_stages}
        extra = self.inputs.question_note
        if "solution" in values:
            extra += "\n\nMethod (given):\n" + values["solution"]
        for attempt in range(2):
            messages = prompt(
                "question",
                goal=values["research_goal"],
                background=values["background"],
                extra=extra,
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
        return Reject("the question reveals the method or experiments after one repair")

    # --- reference: from the question and the answer stages, numeric results repaired away -----

    async def reference_step(self, draft: PaperDraft) -> PaperDraft | Reject:
        assert draft.question is not None
        reference = await self.reference(draft.question, draft.need_stages())
        if isinstance(reference, Reject):
            return reference
        return draft.model_copy(update={"reference": reference})

    async def reference(self, question: str, stages: Stages) -> str | Reject:
        material = "\n\n".join(
            f"{stage.capitalize()}:\n{getattr(stages, stage)}"
            for stage in self.inputs.answer_stages
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
            return Reject("empty reference answer")
        return reference

    # --- rubric: R_A and R_Q, the filter, then the merge by selection and ranking ----------------

    async def candidates_step(self, draft: PaperDraft) -> PaperDraft | Reject:
        assert draft.question is not None and draft.reference is not None
        candidates = await self.candidates(draft.question, draft.reference)
        return draft.model_copy(update={"candidates": candidates})

    async def candidates(self, question: str, reference: str) -> tuple[Candidate, ...]:
        dimensions = self.inputs.dimensions
        note = "" if len(dimensions) > 1 else f' Use only the dimension "{dimensions[0]}".'
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
        return tuple(
            Candidate(text=c.text, dimension=c.dimension, origin=origin)
            for origin, answer in (("answer", from_answer), ("question", from_question))
            for c in answer.parsed.criteria  # type: ignore[union-attr]
        )

    async def filter_step(self, draft: PaperDraft) -> PaperDraft | Reject:
        assert draft.question is not None and draft.candidates is not None
        kept, removed = await asyncio.to_thread(
            _filter_candidates, list(draft.candidates), draft.question, self.inputs
        )
        if len(kept) < 3:
            return Reject(
                f"only {len(kept)} usable criteria ({'; '.join(removed[:3])})", step="rubric"
            )
        return draft.model_copy(update={"kept": tuple(kept), "removed": tuple(removed)})

    async def merge_step(self, draft: PaperDraft) -> PaperDraft | Reject:
        assert draft.question is not None and draft.reference is not None
        assert draft.kept is not None and draft.removed is not None and draft.candidates
        kept = draft.kept
        order = await self.merge(draft.question, draft.reference, [c.text for c in kept])
        if isinstance(order, Reject):
            return order
        # The merge ranks only what it selects: the dropped candidates keep their generation
        # order (R_A before R_Q), the one the repair takes the best of.
        dropped = [i for i in range(len(kept)) if i not in order]
        coverage = cover_dimensions(
            order, dropped, [c.dimension for c in kept], self.inputs.dimensions
        )
        if isinstance(coverage, str):
            return Reject(coverage, step=DIMENSIONS_GATE)
        order = list(coverage.selected)
        criteria = tuple(
            Criterion(
                id="c-" + content_hash({"paper": draft.paper.id, "text": kept[i].text}, 12),
                text=kept[i].text.strip(),
                dimension=kept[i].dimension,
                origin=kept[i].origin,
                rank=rank,
            )
            for rank, i in enumerate(order, start=1)
        )
        shortfall = (
            ""
            if len(criteria) == RUBRIC_SIZE
            else f"{len(criteria)} criteria: {len(draft.candidates) - len(kept)} candidates "
            f"removed ({'; '.join(draft.removed[:3])})"
        )
        rubric = Rubric(specific=criteria, general=GENERAL_CRITERIA, note=shortfall)
        return draft.model_copy(update={"rubric": rubric})

    async def merge(self, question: str, reference: str, texts: list[str]) -> list[int] | Reject:
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
        return Reject(
            f"the merge did not select {count} distinct valid candidates after one repair"
        )


def _filter_candidates(
    candidates: list[Candidate], question: str, inputs: RecipeSpec
) -> tuple[list[Candidate], list[str]]:
    """Drop exact duplicates, generic candidates, wrong dimensions and restatements of the question."""
    kept: list[Candidate] = []
    removed: list[str] = []
    question_sentences = split_sentences(question) or [question]
    similarity = cosine_matrix(embed([c.text for c in candidates]), embed(question_sentences)).max(
        axis=1
    )
    seen: set[str] = set()
    for candidate, sim in zip(candidates, similarity, strict=True):
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
            kept.append(candidate)
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
