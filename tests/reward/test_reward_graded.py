"""Graded verdicts: the pure scoring rules (hand-computed), the judge's strict parsing and the
quote rule on grades, through a scripted LLM server."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest

from papergym.fakellm.plausible import responder as plausible
from papergym.fakellm.server import FakeOpenAIServer
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.records import Verdict
from papergym.reward.ablations import grade_value, holistic_value, similarity_value
from papergym.reward.judge import GradedJudgeVerdict, RubricJudge, checked_grade, judge_messages
from papergym.reward.reward import RubricReward
from papergym.reward.scoring import (
    WeightedCriterion,
    credit,
    pass_rate,
    rubric_score,
    weighted_score,
)
from support.instances import rubric_instance

CRITERIA = [
    WeightedCriterion(id="a", weight=6, polarity="desired"),
    WeightedCriterion(id="b", weight=4, polarity="desired"),
    WeightedCriterion(id="h", weight=-8, polarity="pitfall"),
]


def test_weighted_score_uses_grades_under_both_normalisations() -> None:
    met = {"a": 0.5, "b": 1.0, "h": 0.5}  # 6·½ + 4·1 − 8·½ = 3
    assert weighted_score(CRITERIA, met) == pytest.approx(3 / 10)  # P = 10
    assert weighted_score(CRITERIA, met, normalisation="absolute") == pytest.approx(3 / 18)
    # a half-made pitfall pulls below 0 before the clip: (6·0 + 4·½ − 8·1) / 10
    low = {"a": 0.0, "b": 0.5, "h": 1.0}
    assert weighted_score(CRITERIA, low, clip=None) == pytest.approx(-0.6)
    assert weighted_score(CRITERIA, low) == 0.0
    # booleans still score as before
    assert weighted_score(CRITERIA, {"a": True, "b": False, "h": False}) == 0.6


@pytest.mark.parametrize("bad", [1.5, -0.5, math.nan])
def test_a_grade_outside_zero_one_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="within"):
        weighted_score(CRITERIA, {"a": bad, "b": 1.0, "h": 0.0})


def test_pass_rate_and_rubric_score_average_grades() -> None:
    def graded(cid: str, grade: float, kind: str = "specific") -> Verdict:
        return Verdict(criterion_id=cid, passed=grade > 0, grade=grade, kind=kind)  # type: ignore[arg-type]

    assert pass_rate([graded("a", 1), graded("b", 0.5), graded("c", 0), graded("d", 0.5)]) == 0.5
    score = rubric_score(
        "i", [graded("a", 1.0), graded("b", 0.5)], [graded("g", 0.5, "general")], alpha=0.7
    )
    assert score.specific == 0.75 and score.general == 0.5
    assert score.value == pytest.approx(0.7 * 0.75 + 0.3 * 0.5)
    unscored = Verdict(criterion_id="b", passed=None)
    assert credit(unscored) is None
    assert rubric_score("i", [graded("a", 1.0), unscored], []).value is None


def test_level_mappings() -> None:
    assert [grade_value(n) for n in (0, 1, 2)] == [0.0, 0.5, 1.0]
    assert holistic_value(0) == 0.0 and holistic_value(10) == 1.0
    assert similarity_value(-0.3) == 0.0 and similarity_value(0.4) == 0.4
    for bad in (3, -1, True):
        with pytest.raises(ValueError):
            grade_value(bad)
    with pytest.raises(ValueError):
        holistic_value(11)


def test_a_grade_above_zero_needs_a_quote_found_in_the_answer() -> None:
    answer = "We fit pulsar timing residuals with a Gaussian process."
    kept = checked_grade(
        "c", GradedJudgeVerdict(criterion_id=1, reason="r", quote="pulsar timing", grade=1),
        answer, "specific",
    )  # fmt: skip
    assert kept.grade == 0.5 and kept.passed and kept.unbacked is None
    missing = checked_grade(
        "c", GradedJudgeVerdict(criterion_id=1, reason="r", grade=2), answer, "specific"
    )
    assert missing.grade == 0.0 and missing.passed is False
    assert missing.unbacked == "quote_missing"
    invented = checked_grade(
        "c", GradedJudgeVerdict(criterion_id=1, reason="r", quote="radio telescope", grade=2),
        answer, "specific",
    )  # fmt: skip
    assert invented.grade == 0.0 and invented.unbacked == "quote_not_found"


def test_graded_prompts_ask_for_grades_and_binary_prompts_are_unchanged() -> None:
    args: dict[str, Any] = {"reference": "ref"}
    binary = judge_messages("specific", "Q?", ["c1"], "A.", **args)[0].content
    graded = judge_messages("specific", "Q?", ["c1"], "A.", scale="graded", **args)[0].content
    assert '"verdict": <0|1>' in binary and '"grade"' not in binary
    assert '"grade": <0|1|2>' in graded and '"verdict": <0|1>' not in graded
    pitfall = judge_messages(
        "specific", "Q?", ["c1"], "A.", pitfalls=[True], scale="graded", source_kind="document"
    )[0].content
    assert "how far the answer makes the mistake" in pitfall


INSTANCE = rubric_instance(
    "p",
    ["The plan measures pulsar timing residuals with radio telescopes."],
    question="How would you detect gravitational waves?",
    reference_answer="Measure pulsar timing residuals with radio telescopes.",
    title="PTA",
    general="The plan is written clearly and states pulsar assumptions.",
)


def _config(server: FakeOpenAIServer, **extra: Any) -> LLMConfig:
    judge = {"model": "m", "base_url": [server.base_url], "max_retries": 0, **extra}
    return LLMConfig.model_validate({"roles": {"judge": judge}, "cache": False})


def _scores(reward: RubricReward, answers: list[str]) -> list[Any]:
    return asyncio.run(reward.ascore_many([(INSTANCE, a) for a in answers]))


def test_a_partly_met_criterion_earns_half_where_binary_gives_nothing() -> None:
    answer = "We would study pulsar timing with care."  # 2 of the criterion's 6 key terms
    with FakeOpenAIServer(responder=plausible) as server:
        binary = _scores(RubricReward(RubricJudge(LLMClient(_config(server)))), [answer])[0]
        graded_judge = RubricJudge(LLMClient(_config(server)), verdict="graded")
        graded = _scores(RubricReward(graded_judge), [answer])[0]
    assert binary.specific == 0.0
    assert graded.specific == 0.5 and graded.verdicts[0].grade == 0.5
    assert graded.judge.endswith(":graded") and not binary.judge.endswith(":graded")


def test_an_unparseable_grade_is_retried_then_unscored_never_zero() -> None:
    def bad_grades(body: dict[str, Any]) -> str:
        count = 1
        return json.dumps(
            {"verdicts": [{"criterion_id": n, "reason": "r", "quote": None, "grade": 3}
                          for n in range(1, count + 1)]}
        )  # fmt: skip

    with FakeOpenAIServer(responder=bad_grades) as server:
        judge = RubricJudge(LLMClient(_config(server, repair_attempts=1)), verdict="graded")
        score = _scores(RubricReward(judge), ["We measure pulsar timing."])[0]
        asked = server.request_count
    assert score.value is None and score.unscored_reason
    assert asked >= 4  # two passes, each asked again after the bad answer
