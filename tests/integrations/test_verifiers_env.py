"""The exported verifiers environment with the released verifiers package (0.4.0).

The package ``papergym export --format verifiers`` writes is installed with pip (into a fresh
target folder, offline: no dependencies, no build isolation), loaded through its
``load_environment()``, and evaluated by verifiers' own ``vf-eval`` against a loopback
OpenAI-compatible server that scripts the policy's answers and plays the LLM judge. Rewards must
equal ``papergym score`` on the same answers, and the unscored answer must be a failed reward
(a ``TaskError`` on the trace, the reward left unset), not a 0.

Skipped where verifiers is not installed; CI runs it in its own venv (``.[dev,verifiers]``:
verifiers pins openai<3) with ``PAPERGYM_REQUIRE_VERIFIERS=1``, which turns the skip into a
failure.
"""

from __future__ import annotations

import json
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

require_framework("verifiers", "verifiers", "PAPERGYM_REQUIRE_VERIFIERS")

from papergym.export.common import chat_prompt  # noqa: E402
from papergym.export.run import run_export  # noqa: E402
from papergym.fakellm import FakeOpenAIServer  # noqa: E402
from papergym.records import Rubric  # noqa: E402

ENV_ID = "papergym-plans"
MODULE = "papergym_plans"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder, model="policy-m") as running:
        yield running


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("verifiers")


@pytest.fixture(scope="module")
def installed(workspace: Path) -> Path:
    """The exported environment pip-installed into a fresh folder; that folder."""
    build = write_plans_build(workspace / "plans")
    (result,) = run_export(build, ["verifiers"], system_prompt=SYSTEM_PROMPT)
    target = workspace / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    completed = subprocess.run(
        [*pip, "--no-build-isolation", "--no-index", "--target", str(target), str(result.path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return target


def test_the_package_installs_with_its_data(installed: Path) -> None:
    package = installed / MODULE
    assert (package / "__init__.py").is_file() and (package / "papergym.yaml").is_file()
    rows = (package / "data" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == len(plan_instances())


def test_load_environment_returns_the_single_turn_environment(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import verifiers.v1 as vf

    monkeypatch.syspath_prepend(str(installed))
    module = __import__(MODULE)
    env = module.load_environment(split="train", judge="offline", alpha=0.5)
    assert isinstance(env, vf.Env)
    tasks = list(env.taskset)
    by_id = {i.id: i for i in plan_instances()}
    assert [t.data.id for t in tasks] == list(by_id)
    for task in tasks:
        instance = by_id[str(task.data.id)]
        assert (task.data.system_prompt, task.data.prompt) == (SYSTEM_PROMPT, instance.question)
        assert task.data.info["question"] == instance.question
        assert task.data.info["reference"] == instance.reference_answer
        # the export's rubric JSON reads back as the very rubric (export.common.rubric_dict)
        assert Rubric.model_validate(json.loads(task.data.info["rubric"])) == instance.rubric
        assert task.config.judge == "offline" and task.config.alpha == 0.5
    assert env.config.agent.runtime.type == "subprocess"
    with pytest.raises(FileNotFoundError, match="no test split"):
        list(module.load_environment(split="test").taskset)


def test_a_bad_setting_fails_when_the_tasks_load_not_in_every_rollout(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from papergym.errors import BadInputError

    monkeypatch.syspath_prepend(str(installed))
    module = __import__(MODULE)
    with pytest.raises(BadInputError, match=r"reward\.alpha"):
        list(module.load_environment(split="train", judge="offline", alpha=2).taskset)


@pytest.fixture(scope="module")
def traces(installed: Path, server: FakeOpenAIServer, workspace: Path) -> dict[str, Any]:
    """``vf-eval`` of the installed environment; each trace by its task's instance id."""
    out = workspace / "outputs"
    command = [
        str(Path(sys.executable).parent / "vf-eval"),
        ENV_ID,
        "-m", "policy-m",
        "--client.base-url", server.base_url,
        "--client.api-key-var", "PAPERGYM_TEST_POLICY_KEY",
        "--env.taskset.task.judge", "llm",
        "--env.taskset.task.judge-base-url", server.base_url,
        "--env.taskset.task.judge-model", "judge-m",
        "--env.taskset.task.overrides", '["llm.cache=false"]',
        "--no-push", "--no-rich", "-o", str(out), "--run.dir", "run",
    ]  # fmt: skip
    environ = {**os.environ, "PYTHONPATH": str(installed), "HF_HUB_OFFLINE": "1"}
    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, env=environ
    )
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
    lines = (out / "run" / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    found: dict[str, Any] = {}
    for episode in map(json.loads, lines):
        for trace in episode["traces"]:
            found[trace["task"]["data"]["id"]] = {**trace, "episode_errors": episode["errors"]}
    return found


@pytest.fixture(scope="module")
def cli_scores(server: FakeOpenAIServer, workspace: Path) -> dict[str, dict[str, Any]]:
    answers = write_answers(workspace / "answers.jsonl")
    scores = score_with_cli(
        workspace / "plans" / "instances.jsonl",
        answers,
        workspace / "scores.jsonl",
        judge_overrides(server.base_url),
    )
    return {s["instance_id"]: s for s in scores}


def test_the_policy_is_sent_the_training_prompts(
    traces: dict[str, Any], server: FakeOpenAIServer
) -> None:
    expected = [
        [(m["role"], m["content"]) for m in chat_prompt(i.question, SYSTEM_PROMPT)]
        for i in plan_instances()
    ]
    assert sorted(policy_messages(server.requests)) == sorted(expected)


def test_vf_eval_rewards_equal_papergym_score(
    traces: dict[str, Any], cli_scores: dict[str, dict[str, Any]]
) -> None:
    assert sorted(traces) == sorted(cli_scores)
    scored = [i for i, s in cli_scores.items() if s["value"] is not None]
    assert sorted(scored) == ["a1", "b2"]  # 0.65 and 0.7: both passes judged, α = 0.7
    for instance_id in scored:
        trace, score = traces[instance_id], cli_scores[instance_id]
        assert trace["ok"] is True
        assert trace["rewards"]["rubric"]["score"] == pytest.approx(score["value"], abs=1e-12)
        metrics = trace["metrics"]
        assert metrics["rubric_specific"] == pytest.approx(score["specific"], abs=1e-12)
        assert metrics["rubric_general"] == pytest.approx(score["general"], abs=1e-12)
        assert metrics["rubric_unscored"] == 0.0
        question = trace["task"]["data"]["prompt"].split(":", 1)[0]
        assert metrics["answer_chars"] == len(ANSWERS[question])
        verdicts = trace["info"]["papergym"]["verdicts"]
        assert [v["criterion_id"] for v in verdicts] == [
            v["criterion_id"] for v in score["verdicts"]
        ]
        assert all(v["reason"].startswith("criterion ") for v in verdicts)


def test_an_unscored_answer_is_a_failed_reward_not_zero(
    traces: dict[str, Any], cli_scores: dict[str, dict[str, Any]]
) -> None:
    assert cli_scores[UNSCORED_ID]["value"] is None
    trace = traces[UNSCORED_ID]
    assert trace["rewards"]["rubric"] is None  # verifiers: the reward did not complete
    assert trace["ok"] is False
    errors = trace.get("errors") or trace["episode_errors"]
    assert errors[0]["type"] == "TaskError"
    assert "UnscoredAnswer" in errors[0]["message"] and "judge failed" in errors[0]["message"]
    assert trace["metrics"]["rubric_unscored"] == 1.0
    assert "rubric_specific" not in trace["metrics"]  # no part reported as 0 either
    assert (
        trace["info"]["papergym"]["unscored_reason"] == cli_scores[UNSCORED_ID]["unscored_reason"]
    )
