from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.completions import build_completion
from papergym.llm.config import Price
from papergym.llm.report import usage_table
from papergym.llm.types import Usage
from papergym.llm.usage import UsageTracker

runner = CliRunner()


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """llm-check saves what it found beside the cache: here, not in the user's."""
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path / "cache"))


def checks_sent(server: FakeOpenAIServer) -> int:
    """Requests other than the speed probes' (which count to sixty)."""
    return sum("Count from 1 to 60" not in json.dumps(r["messages"]) for r in server.requests)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def test_llm_check_reports_each_backend_once(server: FakeOpenAIServer, tmp_path: Path) -> None:
    config = tmp_path / "llm.yaml"
    config.write_text(
        f"default: {{base_url: '{server.base_url}', model: writer-model}}\n"
        f"roles: {{judge: {{base_url: '{server.base_url}', model: judge-model}}}}\n"
    )
    result = runner.invoke(app, ["llm-check", "--llm-config", str(config), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    by_model = {b["model"]: b for b in data["backends"]}
    assert set(by_model) == {"writer-model", "judge-model"}
    assert by_model["judge-model"]["roles"] == ["judge"]
    assert "judge" not in by_model["writer-model"]["roles"]
    assert all(b["ok"] and b["structured"].startswith("valid") for b in data["backends"])
    assert checks_sent(server) == 4  # one plain + one structured call per backend, no cache
    for backend in data["backends"]:
        assert backend["structured_output"] == "json_schema" and backend["tokens_per_s"] > 0
        assert backend["recommended_concurrency"] in (1, 4, 16)
    assert Path(data["records"]) == tmp_path / "cache" / "endpoints.json"
    assert Path(data["records"]).is_file()


def test_llm_check_prints_mode_speed_concurrency_and_another_models_name(
    tmp_path: Path,
) -> None:
    with FakeOpenAIServer(latency=0.05) as named:
        # the fake echoes the model asked for; this one answers under another name
        named.responder = lambda request: build_completion({**request, "model": "served-name"})
        args = ["llm-check", "--base-url", named.base_url, "--model", "asked-name"]
        result = runner.invoke(app, args, env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    for shown in ("schema mode", "tokens/s", "concurrency", "json_schema"):
        assert shown in result.stdout
    assert "was asked for model asked-name but answers as served-name" in result.stdout
    assert "saved in" in result.stdout and "endpoints.json" in result.stdout


def test_llm_check_fails_with_exit_2_when_json_never_validates(server: FakeOpenAIServer) -> None:
    server.default = server.default.parse("malformed")
    args = ["llm-check", "--base-url", server.base_url, "--model", "m", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    [backend] = json.loads(result.stdout)["backends"]
    assert any(e.startswith("structured call:") for e in backend["errors"])


def test_llm_check_without_configuration_is_bad_usage(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PAPERGYM_BASE_URL", "PAPERGYM_MODEL", "PAPERGYM_LLM_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    result = runner.invoke(app, ["llm-check"])
    assert result.exit_code == 2
    assert "no LLM configured" in result.output
    unknown = runner.invoke(
        app, ["llm-check", "--base-url", "http://x/v1", "--model", "m", "--role", "grader"]
    )
    assert unknown.exit_code == 2 and "unknown role" in unknown.output


def test_llm_options_are_explained_in_help() -> None:
    result = runner.invoke(app, ["llm-check", "--help"], env={"COLUMNS": "200"})
    for option in ("--llm-config", "--base-url", "--model", "--api-key-env", "--role", "--json"):
        assert option in result.output


def test_usage_table_shows_unpriced_and_per_instance_rows() -> None:
    tracker = UsageTracker(prices={"priced": Price(input=1.0, output=2.0)})
    tracker.record(
        stage="question",
        role="writer",
        model="priced",
        usage=Usage(prompt_tokens=1_000_000, completion_tokens=500_000),
        cached=False,
    )
    tracker.record(
        stage="judge", role="judge", model="local", usage=Usage(prompt_tokens=10), cached=False
    )
    console = Console(width=200, record=True)
    console.print(usage_table(tracker, per=("instance", 4)))
    text = console.export_text()
    assert "unpriced" in text and "$2.0000 + unpriced" in text
    assert "per instance" in text and "$0.5000 + unpriced" in text


def test_a_backend_that_answers_but_fails_the_structured_call_still_shows_its_speed(
    server: FakeOpenAIServer,
) -> None:
    server.responder = lambda request: "ready" if "response_format" not in request else "{"
    args = ["llm-check", "--base-url", server.base_url, "--model", "m"]
    result = runner.invoke(app, args, env={"COLUMNS": "250"})
    assert result.exit_code == 2
    assert "tokens/s" in result.stdout and "LLM usage" in result.stdout  # the table is shown
    assert "error: model m at" in result.stderr and "structured call" in result.stderr
    assert "saved in" in result.stdout  # its speed is known all the same
