"""A loopback OpenAI-compatible server that plays both the policy and the LLM judge.

For the framework integration tests (tests/integrations): the policy's answers are scripted by
question (``QA: ...`` is answered with ``ANSWERS["QA"]``); a judge request (it asks for a JSON
schema) gets a verdict per listed criterion, met when the criterion's text says YES, and a cut-off
JSON answer when the plan to grade says UNSCORABLE (unscored after the LLM layer's repairs).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from papergym.fakellm import extract_schema
from papergym.fakellm.plausible_judge import first_span
from papergym.jsonl import write_jsonl
from papergym.records import Instance
from support.instances import rubric_instance

ANSWERS: dict[str, str] = {
    "QA": "Route each query with a learned gate and test it on long documents.",
    "QB": "Compare against strong baselines over five seeds.",
    "QC": "An UNSCORABLE plan.",
}
UNSCORED_ID = "c3"
SYSTEM_PROMPT = "You are a research scientist. Write a research plan."


def policy_messages(requests: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    """(role, content) of each policy request the server received (judge requests left out)."""
    return [
        [(str(m["role"]), str(m["content"])) for m in request["messages"]]
        for request in requests
        if extract_schema(request) is None
    ]


def plan_instances() -> list[Instance]:
    """Three questions: two the judge scores (0.5 and 1.0 specific), one it cannot."""
    return [
        rubric_instance(
            "a1",
            ["Uses YES a learned gate", "Evaluates NO on long tasks"],
            question="QA: how can attention be made cheaper?",
            reference_answer="Route queries with a gate.",
            title="Cheap attention",
            general="clear YES",
        ),
        rubric_instance(
            "b2",
            ["Compares YES with baselines", "Reports YES variance"],
            question="QB: how should training speed-ups be validated?",
            reference_answer="Compare with baselines over seeds.",
            title="Fast training",
        ),
        rubric_instance(
            UNSCORED_ID,
            ["Mentions YES the data"],
            question="QC: what data should be collected?",
            reference_answer="Collect data.",
            title="Data",
        ),
    ]


def write_plans_build(folder: Path) -> Path:
    """A build folder holding :func:`plan_instances`; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "instances.jsonl", plan_instances())
    return folder


def write_answers(path: Path) -> Path:
    """The scripted answers as ``papergym score`` reads them."""
    rows = [
        {"instance_id": i.id, "answer": ANSWERS[i.question.split(":", 1)[0]]}
        for i in plan_instances()
    ]
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _judge(request: dict[str, Any]) -> str | dict[str, Any]:
    prompt = str(request["messages"][0]["content"])
    if "UNSCORABLE" in prompt:
        return '{"verdicts": [{"criterion_id": 1, "reason": "cut'
    listed = prompt.split("Criteria (", 1)[1].split("Plan to grade:", 1)[0]
    found = re.findall(r"^(\d+)\. (.*)$", listed, re.MULTILINE)
    return {
        "verdicts": [
            {
                "criterion_id": int(n),
                "reason": f"criterion {n}: {text}",
                "quote": first_span(request) if "YES" in text else None,
                "verdict": int("YES" in text),
            }
            for n, text in found
        ]
    }


def responder(request: dict[str, Any]) -> str | dict[str, Any]:
    """The policy's scripted answer, or the judge's verdicts (see the module docstring)."""
    if extract_schema(request) is not None:
        return _judge(request)
    users = [m for m in request["messages"] if m.get("role") == "user"]
    content = users[-1]["content"]
    text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
    return ANSWERS[text.split(":", 1)[0].strip()]


def judge_overrides(base_url: str) -> list[str]:
    """``papergym score`` overrides naming the same LLM judge the frameworks are given."""
    return [
        "reward.judge=llm",
        f"llm.roles.judge={{model: judge-m, base_url: [{base_url}]}}",
        "llm.cache=false",
    ]


def require_framework(module: str, extra: str, variable: str) -> None:
    """Skip the calling test module when ``module`` is not installed, except where CI installed
    it on purpose (``variable=1``): there its absence is a failure, so the tests cannot silently
    stop running."""
    import importlib.util
    import os

    import pytest

    if importlib.util.find_spec(module) is not None:
        return
    reason = f"{module} is not installed (pip install -e '.[dev,{extra}]'; docs/integrations.md)"
    if os.environ.get(variable) == "1":
        pytest.fail(f"{variable}=1 but {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def score_with_cli(
    instances: Path, answers: Path, out: Path, overrides: list[str]
) -> list[dict[str, Any]]:
    """``papergym score`` run as a user runs it (its own process); the scores it wrote."""
    import json
    import subprocess
    import sys

    command = [str(Path(sys.executable).parent / "papergym"), "score", str(instances), str(answers)]
    result = subprocess.run(
        [*command, "-o", str(out), *overrides, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
