"""``papergym fake-llm --answers plausible`` answers the rubric judge validly for the prompt it
gets: one verdict per listed criterion, ids 1..n, with or without a JSON schema in the request,
whatever the graded text quotes, and met when the text covers the criterion.

Before, the judge's prompts fell through to a schema sample: with no schema in the request
(``structured_output: none``) the answer held no JSON, and a graded answer quoting another
prompt's opening ("Select the ...", "You are reviewing a paper submitted to ...") got that
prompt's answer or crashed the responder (HTTP 500): every verdict unscored.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest

from papergym.fakellm.plausible import responder
from papergym.fakellm.plausible_judge import judge_answer, key_terms
from papergym.fakellm.server import FakeOpenAIServer
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.records import Criterion, Instance, Score, Verdict
from papergym.reward.judge import RubricJudge, judge_messages
from papergym.reward.reward import RubricReward
from support.instances import rubric_instance

CRITERIA = [
    "The plan partitions the graph into clusters before sampling neighbours.",
    "The plan evaluates throughput on the OGB papers100M benchmark.",
    "The plan compares memory use against full-batch training.",
    "The plan reports accuracy over five random seeds.",
]
REFERENCE = (
    "We partition the graph into clusters with METIS and sample neighbours inside each cluster. "
    "We evaluate throughput on the OGB papers100M benchmark and compare memory use against "
    "full-batch training, reporting accuracy over five random seeds."
)


def instance(source_kind: Literal["paper", "document"] = "paper") -> Instance:
    made = rubric_instance(
        "gnn",
        CRITERIA,
        question="How would you train graph neural networks on billions of edges?",
        reference_answer=REFERENCE,
        title="Scaling GNNs",
        general="The plan is specific and self-contained.",
    )
    return made.model_copy(update={"source_kind": source_kind})


def scores(
    answers: list[str], *, source_kind: Literal["paper", "document"] = "paper", **backend: object
) -> tuple[list[Score], int]:
    """The rewards of ``answers`` from an LLM judge served by the plausible fake; and the
    number of chat requests it took."""
    with FakeOpenAIServer(responder=responder) as server:
        default = {"model": "fake", "base_url": [server.base_url], "max_retries": 0, **backend}
        config = LLMConfig.model_validate({"default": default, "cache": False})
        reward = RubricReward(RubricJudge(LLMClient(config)))
        found = asyncio.run(reward.ascore_many([(instance(source_kind), a) for a in answers]))
        return found, server.request_count


@pytest.mark.parametrize("structured_output", ["response_format", "none"])
@pytest.mark.parametrize("source_kind", ["paper", "document"])
def test_every_verdict_is_scored_at_the_first_answer(
    structured_output: str, source_kind: Literal["paper", "document"]
) -> None:
    """Before, with ``structured_output: none``: unscored, after three attempts per pass."""
    (score,), requests = scores(
        [REFERENCE], source_kind=source_kind, structured_output=structured_output
    )
    assert score.value is not None, score.unscored_reason
    assert requests == 2  # the specific and the general pass, no repair asked


@pytest.mark.parametrize(
    "quoted",
    [
        "Select the best partitioning scheme first.",
        "You are reviewing a paper submitted to ICLR? No: we partition the graph.",
        "Write a research task first, then partition the graph.",
        "We check criterion leakage before sampling.",
    ],
)
def test_a_graded_answer_quoting_another_prompt_is_still_judged(quoted: str) -> None:
    (score,), requests = scores([f"{quoted} {REFERENCE}"])
    assert score.value is not None, score.unscored_reason
    assert requests == 2


def test_the_verdicts_follow_the_answer() -> None:
    """A fake judge that rewards gaming would teach nothing: the reference passes, the
    restated question and an unrelated answer do not."""
    question = instance().question
    (reference, restated, unrelated), _ = scores(
        [REFERENCE, question, "Bake the bread at a higher temperature for crispier crusts."]
    )
    assert reference.specific == 1.0
    assert restated.specific == 0.0 and unrelated.specific == 0.0
    half = scores([REFERENCE.split(" We evaluate")[0]])[0][0]  # only the first sentence
    assert half.specific == 0.25
    assert [v.passed for v in half.verdicts if v.kind == "specific"] == [True, False, False, False]


def test_every_met_verdict_quotes_the_answer_it_grades() -> None:
    """The fake judge quotes as the real one must: a met verdict copies the sentence of the
    answer that holds the criterion's terms, so the quote check keeps it."""
    reflowed = REFERENCE.replace(". ", ".\n  ")  # line breaks: the quote check forgives them
    (score,), _ = scores([reflowed])
    met = [v for v in score.verdicts if v.passed]
    assert len(met) == 4 and all(v.quote and v.unbacked is None for v in met)
    assert met[0].quote is not None and met[0].quote.startswith("We partition the graph")
    assert all(v.quote is None for v in score.verdicts if not v.passed)


@pytest.mark.parametrize("mode", ["one", "k"])
def test_chunks_of_criteria_are_numbered_from_one(mode: Literal["one", "k"]) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        default = {"model": "fake", "base_url": [server.base_url], "max_retries": 0}
        config = LLMConfig.model_validate({"default": default, "cache": False})
        judge = RubricJudge(LLMClient(config), mode=mode, k=3)
        specific, general = asyncio.run(judge.judge(instance(), REFERENCE))
    assert [v.passed for v in specific] == [True] * 4 and len(general) == 1
    assert all(v.passed is not None for v in general)


def test_ids_run_one_to_n_for_the_prompt_given() -> None:
    criteria = [*CRITERIA, "7. A criterion that starts with a number.", "[cite] 2. Another one."]
    messages = judge_messages(
        "specific", "Q?", criteria, "Criteria (2):\n1. a\n2. b\n\nPlan to grade:\n<<<\nx\n>>>"
    )
    request = {"messages": [m.model_dump() for m in messages]}
    answer = judge_answer(request)
    assert answer is not None
    assert [v["criterion_id"] for v in answer["verdicts"]] == list(range(1, len(criteria) + 1))


def test_a_pitfall_is_met_when_the_answer_makes_the_mistake() -> None:
    pitfall = Criterion(
        id="p1",
        text="The plan trains on the test split to pick hyperparameters.",
        dimension="experiment",
        origin="answer",
        rank=5,
        weight=-1,
    )
    base = instance()
    weighted = base.model_copy(
        update={
            "rubric": base.rubric.model_copy(update={"specific": (*base.rubric.specific, pitfall)})
        }
    )
    with FakeOpenAIServer(responder=responder) as server:
        default = {"model": "fake", "base_url": [server.base_url], "max_retries": 0}
        config = LLMConfig.model_validate({"default": default, "cache": False})
        judge = RubricJudge(LLMClient(config))
        mistaken = f"{REFERENCE} We train on the test split to pick the hyperparameters."

        async def both() -> tuple[Verdict, Verdict]:
            careful = (await judge.judge(weighted, REFERENCE))[0][-1]
            return careful, (await judge.judge(weighted, mistaken))[0][-1]

        careful, careless = asyncio.run(both())
    assert careful.passed is False and careless.passed is True


def test_other_prompts_are_not_taken_for_the_judges() -> None:
    request = {"messages": [{"role": "user", "content": "Sort what this excerpt says: ..."}]}
    assert judge_answer(request) is None
    assert key_terms("The plan partitions the graph, then partitions it again.") == [
        "partitions",
        "graph",
    ]
