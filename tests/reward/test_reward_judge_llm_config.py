"""A judge configured by its own LLM file (``reward.llm_config``) follows the command's cache
settings: ``llm.cache=false`` (``--no-cache``) and ``llm.cache_dir`` (``--cache-dir``) reach it
as they reach every other LLM of the run (issue 20, item 1's follow-up).

Before, the file was loaded as it stood: with the cache off, a second ``papergym score`` run
answered from the cache without asking the judge, and ``llm.cache_dir`` was ignored (the
judge's answers went to ``~/.cache/papergym``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm.server import FakeOpenAIServer
from papergym.reward.runtime import judge_llm_config
from papergym.settings import load_config
from support.plans_server import responder, write_answers, write_plans_build


@pytest.fixture
def judge_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder) as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own: where a cache nobody chose would go."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("PAPERGYM_CACHE_DIR", raising=False)
    return folder


def judge_file(folder: Path, server: FakeOpenAIServer, **extra: object) -> Path:
    path = folder / "judge.yaml"
    backend = {"model": "judge-m", "base_url": [server.base_url], "max_retries": 0}
    path.write_text(yaml.safe_dump({"roles": {"judge": backend}, **extra}), encoding="utf-8")
    return path


def score(tmp_path: Path, name: str, *overrides: str) -> None:
    build = write_plans_build(tmp_path / "build")
    answers = write_answers(tmp_path / "answers.jsonl")
    command = ["score", str(build), str(answers), "-o", str(tmp_path / f"{name}.jsonl")]
    result = CliRunner().invoke(app, [*command, "--judge", "llm", *overrides])
    assert result.exit_code == 0, result.output


def test_no_cache_reaches_a_judge_configured_by_its_own_file(
    tmp_path: Path, home: Path, judge_server: FakeOpenAIServer
) -> None:
    path = judge_file(tmp_path, judge_server)
    overrides = (f"reward.llm_config={path}", "llm.cache=false")
    score(tmp_path, "first", *overrides)
    first = judge_server.request_count
    score(tmp_path, "second", *overrides)
    assert first > 0 and judge_server.request_count == 2 * first  # asked again, every time
    assert not (home / ".cache").exists()


def test_the_commands_cache_dir_holds_the_judges_answers(
    tmp_path: Path, home: Path, judge_server: FakeOpenAIServer
) -> None:
    path = judge_file(tmp_path, judge_server, cache_dir=str(tmp_path / "files-own"))
    chosen = tmp_path / "chosen"
    score(tmp_path, "first", f"reward.llm_config={path}", f"llm.cache_dir={chosen}")
    assert (chosen / "responses.sqlite").is_file()
    assert not (tmp_path / "files-own").exists() and not (home / ".cache").exists()
    asked = judge_server.request_count
    score(tmp_path, "second", f"reward.llm_config={path}", f"llm.cache_dir={chosen}")
    assert judge_server.request_count < 2 * asked  # the judged answers came from that cache


def test_the_files_own_settings_hold_where_the_command_says_nothing(
    tmp_path: Path, judge_server: FakeOpenAIServer
) -> None:
    own = tmp_path / "files-own"
    path = judge_file(tmp_path, judge_server, cache_dir=str(own), cache=False)
    config = load_config(None, [f"reward.llm_config={path}"], env={})
    judge = judge_llm_config(config)
    assert judge.cache is False and judge.cache_dir == own  # the command left both as default
    on = judge_file(tmp_path, judge_server, cache_dir=str(own))
    assert judge_llm_config(load_config(None, [f"reward.llm_config={on}"], env={})).cache
