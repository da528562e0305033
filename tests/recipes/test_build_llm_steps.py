"""The LLM recipe's steps and gates one by one, with scripted answers over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible import responder as plausible
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.recipes.draft import PaperDraft
from papergym.recipes.llm_recipe import LLMRecipe, section_units
from papergym.recipes.steps import Reject, StepFolder, run_steps
from papergym.records import Paper, PaperMeta, Section, Stages

Responder = Callable[[dict[str, Any]], dict[str, Any]]


def paper(*sections: Section) -> Paper:
    return Paper.create(
        title="Toy",
        abstract="We study routing.",
        sections=sections,
        meta=PaperMeta(source_path="toy"),
    )


def stages() -> Stages:
    return Stages(
        paper_id="p",
        builder="llm",
        research_goal="We aim to make attention on long documents cheap without losing accuracy.",
        background="Attention is quadratic in sequence length. Fixed sparse patterns cannot follow content.",
        solution="A router scores pairs of blocks and keeps the top k key blocks per query block.",
        experiment="We compare against dense attention on long-document classification.",
    )


def last_user(request: dict[str, Any]) -> str:
    return str([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


def run_with(
    responder: Responder, work: Callable[[LLMRecipe], Any]
) -> tuple[Any, FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder) as server:
        config = LLMConfig(
            default=BackendConfig(model="m", base_url=server.base_url, retry_base_delay=0.01)
        )

        async def go() -> Any:
            llm = LLMClient(config)
            try:
                return await work(LLMRecipe(llm))
            finally:
                await llm.aclose()

        return asyncio.run(go()), server


async def rubric_steps(
    recipe: LLMRecipe, question: str, folder: Path
) -> tuple[PaperDraft, Reject | None]:
    """The candidates, filter and merge steps on a draft that has its question and reference."""
    draft = PaperDraft(paper=paper(), stages=stages(), question=question, reference="ref")
    chosen = [s for s in recipe.steps() if s.name in {"candidates", "filter", "merge"}]
    return await run_steps(draft, chosen, StepFolder(folder))


def test_long_sections_are_chunked_and_short_ones_batched() -> None:
    long = Section(heading="Method", level=1, text="word " * 2500)
    shorts = [Section(heading=f"S{i}", level=1, text="short text " * 20) for i in range(5)]
    skipped = Section(heading="Acknowledgements", level=1, text="thanks " * 50)
    units = section_units(paper(long, *shorts, skipped), max_words=1000)
    assert [w for w, _ in units][:3] == [
        "section: Method (part 1)",
        "section: Method (part 2)",
        "section: Method (part 3)",
    ]
    assert len(units) == 4  # 3 parts + one batch of the five short sections
    assert "S0; S1; S2; S3; S4" in units[3][0]
    assert all("thanks" not in text for _, text in units)


def test_numbers_in_the_reference_are_repaired_once() -> None:
    numeric = "The router keeps blocks. It improves accuracy by 3.2% over dense attention."

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        # both the answer and its repair still carry the number: the repair is asked for once,
        # then the numeric sentence is cut
        if "Write a reference answer" in last_user(request):
            return {"reference_answer": numeric}
        if "reports no numeric results" in last_user(request):
            return {"reference_answer": numeric}
        return plausible(request)

    reference, server = run_with(answer, lambda b: b.reference("Q?", stages()))
    assert reference == "The router keeps blocks."
    assert sum("reports no numeric results" in last_user(r) for r in server.requests) == 1


def test_a_question_that_reveals_the_method_is_repaired_then_dropped() -> None:
    def revealing(request: dict[str, Any]) -> dict[str, Any]:
        if "Write a research task" in last_user(request):
            return {
                "question": "A router scores pairs of blocks and keeps the top k key blocks per query block. Plan it."
            }
        return plausible(request)

    dropped, server = run_with(revealing, lambda b: b.question(stages()))
    assert isinstance(dropped, Reject) and "reveals the method" in dropped.reason
    assert sum("Write a research task" in last_user(r) for r in server.requests) == 2


def test_generic_and_leaked_candidates_are_filtered_before_the_merge(tmp_path: Path) -> None:
    def rubric(request: dict[str, Any]) -> dict[str, Any]:
        text = last_user(request)
        if "exactly 10 criteria" in text:
            criteria = [{"text": "The plan includes baselines.", "dimension": "experiment"}]
            criteria += [
                {"text": "Attention is quadratic in sequence length.", "dimension": "method"}
            ]
            criteria += [
                {
                    "text": f"The plan uses a distinct routing component number {w}.",
                    "dimension": "method" if w != "eight" else "experiment",
                }
                for w in ("one", "two", "three", "four", "five", "six", "seven", "eight")
            ]
            return {"criteria": criteria}
        return plausible(request)

    question = "Attention is quadratic in sequence length. Propose a research plan."
    (draft, dropped), _ = run_with(rubric, lambda b: rubric_steps(b, question, tmp_path))
    assert dropped is None and draft.rubric is not None
    texts = [c.text for c in draft.rubric.specific]
    assert "The plan includes baselines." not in texts
    assert "Attention is quadratic in sequence length." not in texts
    assert len(texts) == 8 and "generic" in draft.rubric.note
    # each step's output is saved where a resumed build finds it
    assert {p.name for p in tmp_path.iterdir()} == {
        "candidates.json",
        "kept.json",
        "removed.json",
        "rubric.json",
    }


def test_a_merge_that_never_selects_valid_candidates_drops_the_paper(tmp_path: Path) -> None:
    def bad_merge(request: dict[str, Any]) -> dict[str, Any]:
        if "Select the" in last_user(request):
            return {"selected": [1, 1, 1]}
        return plausible(request)

    (_, dropped), server = run_with(bad_merge, lambda b: rubric_steps(b, "Q?", tmp_path))
    assert dropped == Reject(
        "the merge did not select 10 distinct valid candidates after one repair", step="merge"
    )
    assert sum("Select the" in last_user(r) for r in server.requests) == 2  # one repair
    assert not (tmp_path / "rubric.json").exists()


def test_empty_stage_evidence_drops_with_the_stage_named() -> None:
    def no_experiments(request: dict[str, Any]) -> dict[str, Any]:
        answer = plausible(request)
        if "Sort what this excerpt says" in last_user(request):
            # every stage has evidence but the experiments
            answer["research_goal"] = answer.get("research_goal") or "We aim to route blocks."
            answer["research_background"] = answer.get("research_background") or "Attention."
            answer["solution"] = answer.get("solution") or "A router scores blocks."
            answer["experiment"] = ""
        return answer

    sections = (Section(heading="Method", level=1, text="We route blocks."),)
    dropped, _ = run_with(no_experiments, lambda b: b.stages(paper(*sections)))
    assert dropped == Reject("no evidence for the experiment stage", step="reduce")
