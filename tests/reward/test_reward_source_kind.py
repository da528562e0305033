"""The reward adapters keep an instance's source kind: a verl or TRL row exported from an ARES
(document) instance is judged with the answer wording, a paper's row with the plan wording."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from test_reward_judge import _client, _prompt
from weighted_samples import weighted_instance

from papergym.export.trl import trl_row
from papergym.export.verl import verl_row
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible_judge import first_span
from papergym.records import Instance
from papergym.reward import runtime, trl, verl
from papergym.reward.judge import RubricJudge
from papergym.reward.reward import RubricReward
from papergym.reward.verl import instance_from_ground_truth


def all_met(request: dict[str, Any]) -> dict[str, Any]:
    count = int(_prompt(request).split("Criteria (", 1)[1].split(")", 1)[0])
    return {
        "verdicts": [
            {"criterion_id": n, "reason": "r", "quote": first_span(request), "verdict": 1}
            for n in range(1, count + 1)
        ]
    }


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=all_met) as running:
        runtime.set_shared_reward(RubricReward(RubricJudge(_client(running))))
        yield running
    runtime.set_shared_reward(None)


def instances() -> dict[str, Instance]:
    document = weighted_instance().model_copy(update={"recipe": "ares"})
    return {"document": document, "paper": document.model_copy(update={"source_kind": "paper"})}


@pytest.mark.parametrize("kind", ["document", "paper"])
def test_verl_ground_truth_keeps_the_source_kind_and_the_judge_wording(
    server: FakeOpenAIServer, kind: str
) -> None:
    inst = instances()[kind]
    row = verl_row(inst, 0)
    truth = row["reward_model"]["ground_truth"]
    assert instance_from_ground_truth(truth, row["extra_info"]).source_kind == kind
    assert ('"source_kind"' in truth) == (kind == "document")
    result = verl.compute_score(row["data_source"], "an answer", truth, row["extra_info"])
    assert result["unscored"] == 0.0
    marker = "Answer to grade:" if kind == "document" else "Plan to grade:"
    assert server.requests and all(marker in _prompt(r) for r in server.requests)


@pytest.mark.parametrize("kind", ["document", "paper"])
def test_trl_reward_judges_an_ares_row_as_an_answer(server: FakeOpenAIServer, kind: str) -> None:
    row = trl_row(
        instances()[kind].model_copy(
            update={"recipe": "ares" if kind == "document" else "papergym"}
        )
    )
    columns = {k: [v] for k, v in row.items() if k != "prompt"}
    values = trl.rubric_reward([row["prompt"]], ["an answer"], **columns)
    assert values[0] is not None
    marker = "Answer to grade:" if kind == "document" else "Plan to grade:"
    assert server.requests and all(marker in _prompt(r) for r in server.requests)
