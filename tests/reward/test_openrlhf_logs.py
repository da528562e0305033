"""OpenRLHF's ``extra_logs`` say what was scored: no ``rubric_general`` column of -1.0 under a
judge that grades no general criteria (issue 20 #28)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from papergym.export.verl import verl_row
from papergym.records import Verdict
from papergym.reward import runtime
from papergym.reward.offline import OfflineJudge
from papergym.reward.openrlhf import reward_func, rewards_payload
from papergym.reward.reward import RubricReward
from papergym.reward.scoring import rubric_score
from support.instances import rubric_instance


@pytest.fixture
def offline() -> Iterator[None]:
    runtime.set_shared_reward(RubricReward(OfflineJudge()))
    yield
    runtime.set_shared_reward(None)


def test_the_offline_judge_logs_no_general_part(offline: None) -> None:
    criteria = ["The plan measures drift on held-out reefs.", "The plan compares two sensors."]
    reference = (  # the criteria's words and more: the offline judge does not count a copy
        "We measure the drift of coral cover on held-out reefs over three seasons, with divers as "
        "ground truth. Then we compare two sensors, a cheap camera and a lidar unit, on the same "
        "transects."
    )
    instance = rubric_instance(
        "a", criteria, question="How?", reference_answer=reference, title="Coral drift"
    )
    label = verl_row(instance, 0)["reward_model"]["ground_truth"]
    prompt = "Q: how?\nA: "
    result = reward_func([prompt + instance.reference_answer, prompt], [prompt] * 2, [label] * 2)
    logs = {k: v.tolist() for k, v in result["extra_logs"].items()}
    assert set(logs) == {"rubric_specific", "rubric_unscored"}  # it used to hold -1.0s
    assert logs["rubric_specific"][0] > 0.8 and logs["rubric_unscored"] == [0.0, 0.0]


def test_a_judge_that_grades_general_criteria_logs_them_and_marks_the_unscored() -> None:
    specific = [Verdict(criterion_id="s1", passed=True)]
    graded = rubric_score("a", specific, [Verdict(criterion_id="g1", passed=True, kind="general")])
    failed = rubric_score("b", specific, [Verdict(criterion_id="g1", passed=None, kind="general")])
    logs = rewards_payload([graded, failed])["extra_logs"]
    assert logs["rubric_general"] == [1.0, -1.0]
    assert logs["rubric_unscored"] == [0.0, 1.0]
