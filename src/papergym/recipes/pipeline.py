"""The step lists of the paper recipes: which steps a build runs, in order.

==============  =====================================================================
extractive      stages (sentences per stage) → instance (question, reference, rubric)
llm             stages (map/reduce) → question → reference → candidates (R_A, R_Q) →
                filter → merge → leakage (judge; unless --no-leakage-judge) → instance
==============  =====================================================================

The recipe (papergym, innov, design) decides what the steps read; the list is the same. Every list
ends with a step that produces ``instance``: an item is finished when ``instance.json`` exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from papergym.llm.client import LLMClient
from papergym.llm.types import LLMOutputError
from papergym.recipes.draft import PaperDraft
from papergym.recipes.steps import Reject, Step, first_line, in_thread
from papergym.records import Drop, Instance, LeakageVerdict, RecipeName


def recipe_steps(
    recipe: RecipeName,
    builder: str,
    llm: LLMClient | None = None,
    *,
    leakage_judge: bool = True,
    max_unit_words: int = 1200,
) -> list[Step[PaperDraft]]:
    """The steps that turn a paper into an instance of ``recipe`` with ``builder``."""
    if builder != "llm":
        return extractive_steps(recipe)
    if llm is None:
        raise ValueError("the LLM builder needs an LLM client")
    from papergym.recipes.llm_recipe import LLMRecipe

    steps = LLMRecipe(llm, recipe, max_unit_words).steps()
    if leakage_judge:
        steps.append(Step("leakage", LeakageJudge(llm, recipe).run, ("leakage",)))
    steps.append(Step("instance", in_thread(lambda d: llm_instance(d, recipe)), ("instance",)))
    return steps


def extractive_steps(recipe: RecipeName) -> list[Step[PaperDraft]]:
    """The offline baseline: its two entry points, each on a worker thread."""
    from papergym.recipes.extractive import build_instance, extract_stages

    def stages(draft: PaperDraft) -> PaperDraft:
        return draft.model_copy(update={"stages": extract_stages(draft.paper)})

    def instance(draft: PaperDraft) -> PaperDraft | Reject:
        built = build_instance(draft.paper, draft.need_stages(), recipe)
        if isinstance(built, Drop):
            return Reject(built.reason, step=built.step)
        return draft.model_copy(update={"instance": built})

    return [
        Step("stages", in_thread(stages), ("stages",)),
        Step("instance", in_thread(instance), ("instance",)),
    ]


def assemble(draft: PaperDraft, recipe: RecipeName) -> Instance:
    """The LLM recipe's instance from the draft's question, reference and rubric."""
    stages, rubric = draft.need_stages(), draft.rubric
    assert draft.question is not None and draft.reference is not None and rubric is not None
    paper = draft.paper
    return Instance(
        id=Instance.make_id(recipe, "llm", paper.id),
        recipe=recipe,
        builder="llm",
        paper_id=paper.id,
        title=paper.title,
        domain=stages.discipline,
        subfield=stages.subfield,
        arxiv_id=paper.meta.arxiv_id,
        source_path=paper.meta.source_path,
        question=draft.question,
        reference_answer=draft.reference,
        rubric=rubric,
    )


def llm_instance(draft: PaperDraft, recipe: RecipeName) -> PaperDraft:
    """The instance step: assemble, with the judge's verdicts when the leakage step ran."""
    instance = assemble(draft, recipe)
    if draft.leakage is not None:
        specific = tuple(
            c.model_copy(update={"leakage": verdicts})
            for c, verdicts in zip(instance.rubric.specific, draft.leakage, strict=True)
        )
        rubric = instance.rubric.model_copy(update={"specific": specific})
        instance = instance.model_copy(update={"rubric": rubric})
    return draft.model_copy(update={"instance": instance})


@dataclass(frozen=True)
class LeakageJudge:
    """SPEC §2 step 9: the judge's "inferable from the question alone?" verdict per criterion.

    Output the judge cannot get right after the repairs leaves the verdicts unscored, as in
    ``papergym audit``; a failure of the endpoint propagates instead, so that the paper is
    retried rather than saved with verdicts that are missing for no reason of its own.
    """

    llm: LLMClient
    recipe: RecipeName = "papergym"

    async def run(self, draft: PaperDraft) -> PaperDraft | Reject:
        from papergym.audit.formats import item_from_instance
        from papergym.audit.judge import (
            STAGE,
            TOKENS_PER_VERDICT,
            judge_messages,
            judgement_schema,
            unscored,
            verdicts_from,
        )

        instance = assemble(draft, self.recipe)
        item = item_from_instance(instance, source=instance.source_path)
        count = len(item.criteria)
        if not count:
            return draft.model_copy(update={"leakage": ()})
        params = self.llm.config.for_role("judge").params
        params = params.model_copy(
            update={"max_tokens": max(params.max_tokens, TOKENS_PER_VERDICT * count + 256)}
        )
        try:
            result = await self.llm.call(
                "judge",
                judge_messages(item),
                schema=judgement_schema(count),
                params=params,
                stage=STAGE,
            )
        except LLMOutputError as error:
            verdicts = unscored(item, f"judge failed: {first_line(error)}")
        else:
            parsed = verdicts_from(result.parsed, count) if result.parsed is not None else None
            verdicts = parsed or unscored(item, f"judge did not return {count} verdicts")
        judged = item.with_verdicts(verdicts)
        leakage: tuple[tuple[LeakageVerdict, ...], ...] = tuple(c.leakage for c in judged.criteria)
        return draft.model_copy(update={"leakage": leakage})
