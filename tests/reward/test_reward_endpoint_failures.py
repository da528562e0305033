"""The rubric reward never keeps a score its judge never gave (issue 20, item 7's rubric side).

An LLM judge whose endpoint fails leaves its verdicts unscored; the answer was not judged, so
that score must not be remembered: once the endpoint is back, the same answer is judged again.
An answer the judge gave but that could not be parsed after the repairs is the judge's outcome,
and is kept. Every path shares :class:`~papergym.reward.reward.RubricReward`: it is checked
here in process, through verl's adapter, through ``papergym serve-reward`` as a real server,
and through ``papergym eval``'s resume.

The judge is a real loopback server (:class:`~papergym.fakellm.server.FakeOpenAIServer`
answering as :mod:`support.plans_server` scripts it) whose chat requests fail (HTTP 500) while
it is "down".
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.export.verl import ground_truth
from papergym.fakellm.completions import Behaviour
from papergym.fakellm.server import FakeOpenAIServer
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.verdicts import never_answered
from papergym.reward import runtime, verl
from papergym.reward.judge import RubricJudge
from papergym.reward.reward import RubricReward, judge_never_answered
from papergym.settings import load_config
from support.plans_server import ANSWERS, plan_instances, responder, write_plans_build

DOWN, UP = Behaviour.parse("500"), Behaviour.parse("ok")
SERVE_REWARD = (sys.executable, "-m", "papergym.cli", "serve-reward", "--port", "0")


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder) as server:
        yield server


def judge_config(server: FakeOpenAIServer) -> dict[str, Any]:
    """The judge's backend: no retries (a failure is final at once), no response cache."""
    return {"model": "judge-m", "base_url": [server.base_url], "max_retries": 0}


def llm_reward(server: FakeOpenAIServer) -> RubricReward:
    config = LLMConfig.model_validate({"roles": {"judge": judge_config(server)}, "cache": False})
    return RubricReward(RubricJudge(LLMClient(config)))


INSTANCE = plan_instances()[0]
ANSWER = ANSWERS["QA"]


def test_an_answer_judged_while_the_endpoint_was_down_is_judged_again_once_it_is_back(
    judge_server: FakeOpenAIServer,
) -> None:
    """Before: the unscored score was cached, and 0 requests reached the recovered endpoint."""

    async def scenario() -> None:
        reward = llm_reward(judge_server)
        judge_server.default = DOWN
        down = await reward.ascore(INSTANCE, ANSWER)
        assert down.value is None and "LLMTransportError" in (down.unscored_reason or "")
        assert judge_never_answered(down.verdicts) and reward.cached == 0

        judge_server.default = UP
        asked = judge_server.request_count
        back = await reward.ascore(INSTANCE, ANSWER)
        assert judge_server.request_count == asked + 2  # the specific and the general pass
        assert back.value is not None and back.unscored_reason is None
        # a judged answer is kept as before: asking again reaches nobody
        assert await reward.ascore(INSTANCE, ANSWER) == back
        assert judge_server.request_count == asked + 2

    asyncio.run(scenario())


def test_an_answer_the_judge_could_not_parse_is_kept_it_is_the_judges_verdict(
    judge_server: FakeOpenAIServer,
) -> None:
    unscorable = plan_instances()[2]  # the scripted judge answers its plan with cut-off JSON

    async def scenario() -> None:
        reward = llm_reward(judge_server)
        first = await reward.ascore(unscorable, ANSWERS["QC"])
        assert first.value is None and "LLMOutputError" in (first.unscored_reason or "")
        assert not judge_never_answered(first.verdicts) and reward.cached == 1
        asked = judge_server.request_count
        assert await reward.ascore(unscorable, ANSWERS["QC"]) == first
        assert judge_server.request_count == asked

    asyncio.run(scenario())


def test_the_reasons_of_failures_are_told_apart() -> None:
    from papergym.llm.types import (
        BudgetExceededError,
        LLMOutputError,
        LLMTransportError,
        LLMTruncatedError,
    )
    from papergym.llm.verdicts import failure_reason, wrong_count_reason

    assert never_answered(failure_reason(LLMTransportError("http://h/v1: HTTP 503")))
    assert never_answered(failure_reason(BudgetExceededError("token budget spent")))
    assert not never_answered(failure_reason(LLMOutputError("no valid JSON")))
    assert not never_answered(failure_reason(LLMTruncatedError("cut at max_tokens")))
    assert not never_answered(wrong_count_reason(4))
    assert not never_answered("")  # a scored verdict's or a custom judge's reason


def judge_overrides(server: FakeOpenAIServer) -> list[str]:
    """``key=value`` arguments naming :func:`judge_config` as the LLM judge, cache off."""
    return [
        "reward.judge=llm",
        f"llm.roles.judge={json.dumps(judge_config(server))}",
        "llm.cache=false",
    ]


def test_verls_adapter_judges_again_once_the_endpoint_is_back(
    judge_server: FakeOpenAIServer,
) -> None:
    """The adapters (verl, TRL, OpenRLHF) share the process's reward: verl stands for them."""
    config = load_config(None, [*judge_overrides(judge_server), "reward.unscored=-1"], env={})
    runtime.set_shared_config(config)
    truth = ground_truth(INSTANCE)
    try:
        judge_server.default = DOWN
        down = verl.compute_score("papergym", ANSWER, truth)
        judge_server.default = UP
        asked = judge_server.request_count
        back = verl.compute_score("papergym", ANSWER, truth)
    finally:
        runtime.set_shared_reward(None)
    assert down["unscored"] == 1.0 and down["score"] == -1.0
    assert back["unscored"] == 0.0 and judge_server.request_count == asked + 2


def _post(port: int, path: str, body: Any) -> Any:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(
            "POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"}
        )
        response = connection.getresponse()
        assert response.status == 200
        return json.loads(response.read())
    finally:
        connection.close()


def test_serve_reward_judges_again_once_the_endpoint_is_back(
    judge_server: FakeOpenAIServer,
) -> None:
    """``papergym serve-reward`` as a user starts it: one reward for every request."""
    process = subprocess.Popen(
        [*SERVE_REWARD, *judge_overrides(judge_server)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        assert found, line
        threading.Thread(target=process.stderr.read, daemon=True).start()
        port = int(found.group(1))
        body = {"items": [{"ground_truth": ground_truth(INSTANCE), "answer": ANSWER}]}
        judge_server.default = DOWN
        (down,) = _post(port, "/score", body)["scores"]
        judge_server.default = UP
        asked = judge_server.request_count
        (back,) = _post(port, "/score", body)["scores"]
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert down["value"] is None and "LLMTransportError" in down["unscored_reason"]
    assert back["value"] is not None and judge_server.request_count == asked + 2


def test_eval_judges_again_on_resume_what_it_judged_while_the_endpoint_was_down(
    tmp_path: Path, judge_server: FakeOpenAIServer
) -> None:
    """Before: a rerun kept the unscored scores (0 requests to the judge)."""
    data = write_plans_build(tmp_path / "build")
    with FakeOpenAIServer(responder=responder) as policy:
        command = [
            "eval",
            f"p=openai:policy-m@{policy.base_url}",
            "--data",
            str(data),
            "-o",
            str(tmp_path / "e"),
            "--split",
            "all",
            "--judge",
            "llm",
            "--base-url",
            judge_server.base_url,
            "--model",
            "judge-m",
            "--no-cache",
            "llm.default.max_retries=0",
            "eval.resamples=50",
        ]
        judge_server.default = DOWN
        first = CliRunner().invoke(app, command)
        assert first.exit_code == 0, first.output
        scores = _scores(tmp_path / "e")
        assert all(s["value"] is None for s in scores.values())
        judge_server.default = UP
        asked = judge_server.request_count
        second = CliRunner().invoke(app, command)
        assert second.exit_code == 0, second.output
    scores = _scores(tmp_path / "e")
    assert judge_server.request_count > asked
    # the two plans the judge can score are scored now; the third stays unscored (its verdict)
    assert sum(s["value"] is not None for s in scores.values()) == 2
    assert policy.request_count == 3  # the answers were kept: only the judging was redone


def _scores(folder: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    lines = (folder / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    return {(r["system"], r["instance_id"], r["sample"]): r for r in records}
