"""``papergym audit`` end to end, registered on a fresh Typer app as cli.py will register it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from papergym.cli.audit import audit
from papergym.fakellm import Behaviour, FakeOpenAIServer
from papergym.jsonl import read_jsonl, write_jsonl
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("audit")(audit)


@app.callback()
def _root() -> None:
    """A callback keeps `audit` a sub-command, as in the real CLI."""


runner = CliRunner()

QUESTION = (
    "Long-context language models are expensive because self-attention scales quadratically "
    "with sequence length. It remains unclear how to reduce the cost of attention on long "
    "sequences without hurting accuracy. Propose a research plan."
)
CRITERIA = (
    (
        "The plan reduces the cost of attention on long sequences without hurting accuracy.",
        "method",
        "question",
    ),
    (
        "Each query block is routed to the top-k key blocks chosen by a learned gate.",
        "method",
        "answer",
    ),
    (
        "The evaluation measures wall-clock latency and memory against dense FlashAttention.",
        "experiment",
        "answer",
    ),
)


@pytest.fixture(autouse=True)
def _no_llm_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "PAPERGYM_BASE_URL",
        "PAPERGYM_MODEL",
        "PAPERGYM_LLM_CONFIG",
        "PAPERGYM_API_KEY_ENV",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def _instances(tmp_path: Path) -> Path:
    records = []
    for paper in ("p1", "p2"):
        specific = tuple(
            Criterion(id=f"{paper}-c{n}", text=t, dimension=d, origin=o, rank=n)
            for n, (t, d, o) in enumerate(CRITERIA, start=1)
        )
        records.append(
            Instance(
                id=Instance.make_id("papergym", "llm", paper),
                recipe="papergym",
                builder="llm",
                paper_id=paper,
                title=paper,
                question=QUESTION,
                reference_answer="Route query blocks to key blocks.",
                rubric=Rubric(specific=specific, general=GENERAL_CRITERIA),
            )
        )
    path = tmp_path / "instances.jsonl"
    write_jsonl(path, records)
    return path


def _rubrichub(tmp_path: Path) -> Path:
    rows = [
        {
            "question": "How should a mild kitchen burn be treated at home?",
            "rubrics": [
                {
                    "criterion": "Explains how a mild kitchen burn should be treated at home.",
                    "points": 5,
                },
                {
                    "criterion": "Advises holding it under cool running water for 20 minutes.",
                    "points": 4,
                },
                {"criterion": "Recommends applying butter.", "points": -3},
            ],
        }
    ]
    path = tmp_path / "rubrichub.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _judge_responder(request: dict[str, Any]) -> dict[str, Any]:
    prompt = request["messages"][0]["content"]
    listed = prompt.split("Criteria (", 1)[1]
    numbered = re.findall(r"^(\d+)\. (.*)$", listed, re.MULTILINE)
    return {
        "verdicts": [
            {"criterion_id": int(n), "reason": "scripted", "inferable": n == "1"}
            for n, _ in numbered
        ]
    }


def test_audit_command_on_instances_json_and_written_files(tmp_path: Path) -> None:
    source = _instances(tmp_path)
    out = tmp_path / "audit"
    result = runner.invoke(app, ["audit", str(source), "--json", "--top", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["methods"] == ["overlap"]
    [dataset] = report["datasets"]
    assert dataset == {"path": str(source), "format": "instances", "items": 2, "criteria": 6}
    rows = {(r["by"], r["value"]): r for r in report["rates"]}
    total = rows[("dataset", str(source))]["overlap"]
    assert (total["leaked"], total["scored"], total["unscored"]) == (
        2,
        6,
        0,
    )  # the copied one, twice
    assert rows[("origin", "question")]["overlap"]["rate"] == 1.0
    assert rows[("dimension", "experiment")]["overlap"]["rate"] == 0.0
    assert len(report["top"]) == 2 and report["top"][0]["text"] == CRITERIA[0][0]
    assert report["thresholds"] == {"lexical": 0.75, "embedding": 0.8}
    # the files: report, every audited item, the configuration, and our instances with verdicts
    assert sorted(p.name for p in out.iterdir()) == [
        "audit.config.yaml",
        "audited.jsonl",
        "instances.jsonl",
        "leakage_report.json",
    ]
    assert json.loads((out / "leakage_report.json").read_text())["rates"] == report["rates"]
    audited = read_jsonl(out / "instances.jsonl", Instance)
    assert [c.leakage[0].leaked for c in audited[0].rubric.specific] == [True, False, False]
    assert audited[0].rubric.specific[0].leakage[0].method == "overlap"


def test_audit_command_prints_tables_by_default(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", str(_instances(tmp_path))], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Criterion leakage" in result.stdout and "33.3% (2/6)" in result.stdout
    assert "Most-leaked criteria (top 6 by overlap score)" in result.stdout
    assert "LLM usage" not in result.stdout


def test_audit_command_judges_a_rubrichub_file(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.responder = _judge_responder
    args = ["audit", str(_rubrichub(tmp_path)), "--judge", "--base-url", server.base_url]
    result = runner.invoke(app, [*args, "--model", "judge-m", "--no-cache", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["methods"] == ["overlap", "judge"]
    [dataset] = [r for r in report["rates"] if r["by"] == "dataset"]
    assert dataset["judge"] == {"leaked": 1, "scored": 3, "unscored": 0, "rate": 1 / 3}
    assert dataset["overlap"]["leaked"] >= 1  # the criterion restating the question
    assert report["usage"][0]["stage"] == "leakage" and report["usage"][0]["calls"] == 1
    assert server.request_count == 1

    tables = runner.invoke(app, [*args, "--model", "judge-m", "--no-cache"], env={"COLUMNS": "200"})
    assert tables.exit_code == 0, tables.output
    assert "LLM usage" in tables.stdout and "judge" in tables.stdout


def test_audit_command_judge_without_llm_is_a_usage_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", str(_rubrichub(tmp_path)), "--judge"])
    assert result.exit_code == 2
    assert "--judge needs an LLM" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_audit_command_bad_input_is_one_line_exit_2(tmp_path: Path) -> None:
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"prompt_text": "x"}\n', encoding="utf-8")
    result = runner.invoke(app, ["audit", str(unknown)])
    assert result.exit_code == 2
    assert "unknown.jsonl" in result.output and "keys found: prompt_text" in result.output
    missing = runner.invoke(app, ["audit", str(tmp_path / "missing.jsonl")])
    assert missing.exit_code == 2 and "no such file" in missing.output
    forced = runner.invoke(app, ["audit", str(_rubrichub(tmp_path)), "--format", "researchqa"])
    assert forced.exit_code == 2 and "not a researchqa record" in forced.output


def test_audit_command_exit_1_when_the_judge_scores_nothing(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.default = Behaviour(mode="malformed")
    config = tmp_path / "llm.yaml"
    config.write_text(
        f"default: {{base_url: '{server.base_url}', model: m, repair_attempts: 0, max_retries: 0}}\n"
        "cache: false\n"
    )
    result = runner.invoke(
        app, ["audit", str(_rubrichub(tmp_path)), "--judge", "--llm-config", str(config), "--json"]
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)  # the report is still printed
    [dataset] = [r for r in report["rates"] if r["by"] == "dataset"]
    assert dataset["judge"] == {"leaked": 0, "scored": 0, "unscored": 3, "rate": None}
    assert "judge could score none" in result.stderr
