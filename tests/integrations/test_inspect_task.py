"""The ``papergym/papergym`` inspect task with the released inspect_ai package (0.3.285).

``inspect eval`` (inspect's own command, finding the task through PaperGym's entry point) runs
against a loopback OpenAI-compatible server that scripts the policy's answers and plays the LLM
judge. The log must load with inspect's own reader, its scores must equal ``papergym score`` on
the same answers with every criterion's verdict and reason in the score metadata, and the
unscored answer must be inspect's unscored sentinel, left out of the means, never a 0.

Skipped where inspect_ai is not installed; CI runs it in its own venv (``.[dev,inspect]``:
inspect_ai pins an older fsspec than the main venv's) with ``PAPERGYM_REQUIRE_INSPECT=1``,
which turns the skip into a failure.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.plans_server import (
    ANSWERS,
    SYSTEM_PROMPT,
    UNSCORED_ID,
    judge_overrides,
    plan_instances,
    policy_messages,
    require_framework,
    responder,
    score_with_cli,
    write_answers,
    write_plans_build,
)

require_framework("inspect_ai", "inspect", "PAPERGYM_REQUIRE_INSPECT")

from papergym.export.common import chat_prompt  # noqa: E402
from papergym.fakellm import FakeOpenAIServer  # noqa: E402


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder, model="policy-m") as running:
        yield running


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inspect")
    write_plans_build(path / "plans")
    return path


@pytest.fixture(scope="module")
def log(server: FakeOpenAIServer, workspace: Path) -> Any:
    """``inspect eval papergym/papergym`` run as a user runs it; the log, read by inspect."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    logs = workspace / "logs"
    command = [
        str(Path(sys.executable).parent / "inspect"),
        "eval", "papergym/papergym",
        "-T", f"data={workspace / 'plans'}",
        "-T", f"system_prompt={SYSTEM_PROMPT}",
        "-T", "judge=llm",
        "-T", f"judge_base_url={server.base_url}",
        "-T", "judge_model=judge-m",
        "-T", 'overrides=["llm.cache=false"]',
        "--model", "openai-api/loopback/policy-m",
        "--log-dir", str(logs),
        "--display", "none",
    ]  # fmt: skip
    environ = {
        **os.environ,
        "LOOPBACK_BASE_URL": server.base_url,
        "LOOPBACK_API_KEY": "unused",
        "HF_HUB_OFFLINE": "1",
    }
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, env=environ
    )
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
    (found,) = list_eval_logs(str(logs))
    return read_eval_log(found)


@pytest.fixture(scope="module")
def cli_scores(server: FakeOpenAIServer, workspace: Path) -> dict[str, dict[str, Any]]:
    scores = score_with_cli(
        workspace / "plans" / "instances.jsonl",
        write_answers(workspace / "answers.jsonl"),
        workspace / "scores.jsonl",
        judge_overrides(server.base_url),
    )
    return {s["instance_id"]: s for s in scores}


def _scores(log: Any) -> dict[str, Any]:
    return {str(s.id): next(iter(s.scores.values())) for s in log.samples}


def test_the_policy_is_sent_the_training_prompts(log: Any, server: FakeOpenAIServer) -> None:
    expected = [
        [(m["role"], m["content"]) for m in chat_prompt(i.question, SYSTEM_PROMPT)]
        for i in plan_instances()
    ]
    assert sorted(policy_messages(server.requests)) == sorted(expected)


def test_log_scores_equal_papergym_score(log: Any, cli_scores: dict[str, dict[str, Any]]) -> None:
    assert log.status == "success"
    scores = _scores(log)
    assert sorted(scores) == sorted(cli_scores)
    for instance_id, expected in cli_scores.items():
        if expected["value"] is None:
            continue
        value = scores[instance_id].value
        assert value["reward"] == pytest.approx(expected["value"], abs=1e-12)
        assert value["specific"] == pytest.approx(expected["specific"], abs=1e-12)
        assert value["general"] == pytest.approx(expected["general"], abs=1e-12)
        answer = scores[instance_id].answer
        assert answer in ANSWERS.values() and value["length"] == len(answer)
        verdicts = scores[instance_id].metadata["verdicts"]
        assert [(v["criterion_id"], v["passed"]) for v in verdicts] == [
            (v["criterion_id"], v["passed"]) for v in expected["verdicts"]
        ]
        assert all(v["reason"].startswith("criterion ") for v in verdicts)


def test_metrics_are_means_of_the_scored_answers(
    log: Any, cli_scores: dict[str, dict[str, Any]]
) -> None:
    scored = [s for s in cli_scores.values() if s["value"] is not None]
    results = {score.name: score for score in log.results.scores}
    assert set(results) == {"reward", "specific", "general", "length"}
    expected = sum(s["value"] for s in scored) / len(scored)
    assert results["reward"].metrics["mean"].value == pytest.approx(expected, abs=1e-12)
    general = sum(s["general"] for s in scored) / len(scored)
    assert results["general"].metrics["mean"].value == pytest.approx(general, abs=1e-12)
    assert results["reward"].scored_samples == len(scored)
    assert results["reward"].unscored_samples == 1


def test_an_unscored_answer_is_unscored_in_the_log(
    log: Any, cli_scores: dict[str, dict[str, Any]]
) -> None:
    score = _scores(log)[UNSCORED_ID]
    assert isinstance(score.value, float) and math.isnan(score.value)  # inspect's sentinel
    assert score.reason == "grader_failed"
    assert score.explanation == cli_scores[UNSCORED_ID]["unscored_reason"]
    assert score.metadata["unscored_reason"] == cli_scores[UNSCORED_ID]["unscored_reason"]
    assert [v["passed"] for v in score.metadata["verdicts"]] == [None, None]


def test_the_task_reads_any_rubric_dataset_eval_reads(tmp_path: Path) -> None:
    from papergym.integrations.inspect import papergym

    path = tmp_path / "rubrics.jsonl"
    rows = [{"id": "q1", "question": "How to test X?", "criteria": ["Uses a control", "Reports n"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    task = papergym(data=str(path), system_prompt="Write a plan.", judge="offline")
    (sample,) = list(task.dataset)
    assert [m.role for m in sample.input] == ["system", "user"]
    assert sample.input[1].content == "How to test X?"
    assert [c["text"] for c in sample.metadata["rubric"]["specific"]] == rows[0]["criteria"]
