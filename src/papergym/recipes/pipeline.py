"""The step lists of the paper recipes: which steps a build runs, in order.

==============  =====================================================================
extractive      stages (sentences per stage) → instance (question, reference, rubric)
llm             stages (map/reduce) → question → reference → candidates (R_A, R_Q) →
                filter → merge → leakage (judge; unless --no-leakage-judge) → instance
                (which keeps, removes or replaces leaked criteria: build.leakage)
==============  =====================================================================

The recipe (papergym, innov, design) decides what the steps read; the list is the same. Every list
ends with a step that produces ``instance``: an item is finished when ``instance.json`` exists.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from papergym.llm.client import LLMClient
from papergym.llm.types import LLMOutputError
from papergym.recipes.draft import PaperDraft
from papergym.recipes.leakage_action import STEP as LEAKAGE_STEP
from papergym.recipes.leakage_action import act_on_leakage
from papergym.recipes.settings import LeakageAction
from papergym.recipes.steps import Reject, Step, first_line, in_thread
from papergym.records import Criterion, Drop, Instance, LeakageVerdict, RecipeName, content_hash

RESERVE_DUPLICATE_SIMILARITY = 0.85
"""Embedding cosine to a rubric criterion above which an unused candidate is a paraphrase of
it (the merge left it out as a duplicate) and never a replacement: replacing a leaked criterion
with a near-copy of a kept one would count one requirement twice."""


@dataclass(frozen=True)
class LeakagePolicy:
    """``build.leakage`` as the steps use it (:mod:`papergym.recipes.leakage_action`)."""

    action: LeakageAction = "replace"
    min_criteria: int = 5


def recipe_steps(
    recipe: RecipeName,
    builder: str,
    llm: LLMClient | None = None,
    *,
    leakage_judge: bool = True,
    leakage: LeakagePolicy = LeakagePolicy(),
    max_unit_words: int = 1200,
) -> list[Step[PaperDraft]]:
    """The steps that turn a paper into an instance of ``recipe`` with ``builder``."""
    if builder != "llm":
        return extractive_steps(recipe)
    if llm is None:
        raise ValueError("the LLM builder needs an LLM client")
    from papergym.recipes.llm_recipe import LLMRecipe

    steps = LLMRecipe(llm, recipe, max_unit_words).steps()
    policy = leakage if leakage_judge else LeakagePolicy(action="keep")
    if leakage_judge:
        judge = LeakageJudge(llm, recipe, with_reserve=policy.action != "keep")
        steps.append(Step("leakage", judge.run, ("leakage", "reserve_leakage")))
    steps.append(
        Step("instance", in_thread(lambda d: llm_instance(d, recipe, policy)), ("instance",))
    )
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
        date=paper.meta.date,
        source_path=paper.meta.source_path,
        licence=paper.meta.licence,
        question=draft.question,
        reference_answer=draft.reference,
        rubric=rubric,
    )


def llm_instance(
    draft: PaperDraft, recipe: RecipeName, policy: LeakagePolicy = LeakagePolicy("keep")
) -> PaperDraft | Reject:
    """The instance step: assemble, with the judge's verdicts when the leakage step ran, and
    act on them as ``policy`` says (a rubric the action leaves too small is a drop)."""
    instance = assemble(draft, recipe)
    if draft.leakage is None:
        return draft.model_copy(update={"instance": instance})
    specific = tuple(
        c.model_copy(update={"leakage": verdicts})
        for c, verdicts in zip(instance.rubric.specific, draft.leakage, strict=True)
    )
    spare = reserve(draft)
    judged_spare = tuple(
        c.model_copy(update={"leakage": verdicts})
        for c, verdicts in zip(spare, draft.reserve_leakage or (), strict=False)
    )
    outcome = act_on_leakage(specific, judged_spare, policy.action, policy.min_criteria)
    if outcome.drop_reason is not None:
        return Reject(outcome.drop_reason, step=LEAKAGE_STEP)
    note = "; ".join(n for n in (instance.rubric.note, outcome.note) if n)
    rubric = instance.rubric.model_copy(
        update={"specific": outcome.criteria, "leaked_out": outcome.leaked_out, "note": note}
    )
    return draft.model_copy(update={"instance": instance.model_copy(update={"rubric": rubric})})


def reserve(draft: PaperDraft) -> tuple[Criterion, ...]:
    """The filter's candidates the merge did not use, in the order the filter kept them (R_A's,
    then R_Q's: the merge ranks only what it keeps), less paraphrases of a rubric criterion."""
    rubric = draft.rubric
    if rubric is None or not draft.kept:
        return ()
    used = {c.text.strip() for c in rubric.specific}
    unused = [c for c in draft.kept if c.text.strip() not in used]
    if not unused or not rubric.specific:
        return ()
    from papergym.embed import cosine_matrix, embed

    texts = [c.text.strip() for c in unused]
    similarity = cosine_matrix(embed(texts), embed([c.text for c in rubric.specific])).max(axis=1)
    start = len(rubric.specific)
    return tuple(
        Criterion(
            id="c-" + content_hash({"paper": draft.paper.id, "text": c.text}, 12),
            text=c.text.strip(),
            dimension=c.dimension,
            origin=c.origin,
            rank=start + n,
        )
        for n, (c, sim) in enumerate(zip(unused, similarity, strict=True), start=1)
        if sim <= RESERVE_DUPLICATE_SIMILARITY
    )


@dataclass(frozen=True)
class LeakageJudge:
    """SPEC §2 step 9: the judge's "inferable from the question alone?" verdict per criterion.

    Output the judge cannot get right after the repairs leaves the verdicts unscored, as in
    ``papergym audit``; a failure of the endpoint propagates instead, so that the paper is
    retried rather than saved with verdicts that are missing for no reason of its own.
    """

    llm: LLMClient
    recipe: RecipeName = "papergym"
    with_reserve: bool = False
    """Judge the reserve (:func:`reserve`) in the same call: replacements are judged too."""

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
        spare = await asyncio.to_thread(reserve, draft) if self.with_reserve else ()
        if spare:
            rubric = instance.rubric.model_copy(
                update={"specific": instance.rubric.specific + spare}
            )
            instance = instance.model_copy(update={"rubric": rubric})
        item = item_from_instance(instance, source=instance.source_path)
        count = len(item.criteria)
        if not count:
            return draft.model_copy(update={"leakage": (), "reserve_leakage": ()})
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
        cut = count - len(spare)
        return draft.model_copy(update={"leakage": leakage[:cut], "reserve_leakage": leakage[cut:]})
