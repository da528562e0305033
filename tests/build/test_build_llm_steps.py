"""The LLM recipe's steps and gates one by one, with scripted answers over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from papergym.build.llm_recipe import RECIPES, BuildDropError, LLMBuilder, section_units
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.records import Paper, PaperMeta, Section, Stages
from papergym.testing.build_responder import responder as plausible
from papergym.testing.openai_server import FakeOpenAIServer

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
        field="Machine learning for long documents.",
        background="Attention is quadratic in sequence length. Fixed sparse patterns cannot follow content.",
        solution="A router scores pairs of blocks and keeps the top k key blocks per query block.",
        experiment="We compare against dense attention on long-document classification.",
    )


def last_user(request: dict[str, Any]) -> str:
    return str([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


def run_with(
    responder: Responder, work: Callable[[LLMBuilder], Any]
) -> tuple[Any, FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder) as server:
        config = LLMConfig(
            default=BackendConfig(model="m", base_url=server.base_url, retry_base_delay=0.01)
        )

        async def go() -> Any:
            llm = LLMClient(config)
            try:
                return await work(LLMBuilder(llm))
            finally:
                await llm.aclose()

        return asyncio.run(go()), server


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
    def numeric(request: dict[str, Any]) -> dict[str, Any]:
        if "Write a reference answer" in last_user(request):
            return {
                "reference_answer": "The router keeps blocks. It improves accuracy by 3.2% over dense attention."
            }
        return plausible(request)

    reference, server = run_with(
        numeric, lambda b: b._reference("Q?", stages(), RECIPES["papergym"])
    )
    assert "3.2" not in reference and reference
    assert any("reports no numeric results" in last_user(r) for r in server.requests)


def test_a_question_that_reveals_the_method_is_repaired_then_dropped() -> None:
    def revealing(request: dict[str, Any]) -> dict[str, Any]:
        if "Write a research task" in last_user(request):
            return {
                "question": "A router scores pairs of blocks and keeps the top k key blocks per query block. Plan it."
            }
        return plausible(request)

    with pytest.raises(BuildDropError) as caught:
        run_with(revealing, lambda b: b._question(stages(), RECIPES["papergym"]))
    assert caught.value.step == "question"


def test_generic_and_leaked_candidates_are_filtered_before_the_merge() -> None:
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
                    "dimension": "method",
                }
                for w in ("one", "two", "three", "four", "five", "six", "seven", "eight")
            ]
            return {"criteria": criteria}
        return plausible(request)

    question = "Attention is quadratic in sequence length. Propose a research plan."
    (criteria, note), _ = run_with(
        rubric, lambda b: b._rubric(paper(), question, "ref", RECIPES["papergym"])
    )
    texts = [c.text for c in criteria]
    assert "The plan includes baselines." not in texts
    assert "Attention is quadratic in sequence length." not in texts
    assert len(criteria) == 8 and "generic" in note


def test_a_merge_that_never_selects_valid_candidates_drops_the_paper() -> None:
    def bad_merge(request: dict[str, Any]) -> dict[str, Any]:
        if "Select the" in last_user(request):
            return {"selected": [1, 1, 1]}
        return plausible(request)

    with pytest.raises(BuildDropError) as caught:
        run_with(bad_merge, lambda b: b._rubric(paper(), "Q?", "ref", RECIPES["papergym"]))
    assert caught.value.step == "merge"


def test_empty_stage_evidence_drops_with_the_stage_named() -> None:
    def no_experiments(request: dict[str, Any]) -> dict[str, Any]:
        answer = plausible(request)
        if "Sort what this excerpt says" in last_user(request):
            answer["experiment"] = ""
        return answer

    sections = (Section(heading="Method", level=1, text="We route blocks."),)
    with pytest.raises(BuildDropError, match="no evidence for the experiment stage"):
        run_with(no_experiments, lambda b: b.stages(paper(*sections)))
