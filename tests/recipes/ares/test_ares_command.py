"""``papergym build CORPUS --recipe ares`` through the CLI: offline, scripted LLM, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from runner_support import scripted_server
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import read_jsonl
from papergym.recipes.ares.record import AresDraft
from papergym.records import Drop, Instance

DEMO = Path(__file__).resolve().parents[3] / "examples" / "corpus"
runner = CliRunner()


@pytest.mark.slow  # embeds 52 documents with MiniLM on the CPU
def test_offline_the_demo_corpus_stops_after_the_offline_steps(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", str(DEMO), "--recipe", "ares", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["mode"] == "offline" and summary["documents"] >= 50
    assert summary["kept"] + summary["dropped"] == summary["documents"]
    assert {d["step"] for d in summary["drops"]} == {"prefilter"}
    assert "need an LLM: pass --llm-config FILE, or --base-url and --model" in result.stderr
    kept = [d for p in sorted(out.glob("kept-*.jsonl")) for d in read_jsonl(p, AresDraft)]
    assert len(kept) == summary["kept"] and all(d.domain for d in kept)
    assert not (out / "instances.jsonl").exists()
    drops = read_jsonl(out / "dropped.jsonl", Drop)
    assert {d.paper_id for d in drops} >= {"web-menu", "web-short", "web-table"}


@pytest.mark.slow  # 250 calls and MiniLM on the CPU
def test_the_demo_corpus_against_a_scripted_llm(tmp_path: Path) -> None:
    """The README's example: instances, drops by step and reason, calls per kept instance."""
    out = tmp_path / "out"
    with scripted_server() as server:
        args = ["build", str(DEMO), "--recipe", "ares", "-o", str(out), "--json"]
        args += ["--base-url", server.base_url, "--model", "m", "--no-cache"]
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["mode"] == "llm" and summary["kept"] > 0
    steps = {d["step"] for d in summary["drops"]}
    assert "prefilter" in steps
    built = read_jsonl(out / "instances.jsonl", Instance)
    assert len(built) == summary["kept"] and all(i.recipe == "ares" for i in built)
    calls = sum(int(row["calls"]) for row in summary["usage"])
    assert calls == server.request_count
    exported = runner.invoke(app, ["export", str(out), "-f", "verl", "-o", str(tmp_path / "x")])
    assert exported.exit_code == 0, exported.output


def test_a_corpus_file_without_the_text_column_is_one_line_and_exit_2(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"body": "no text field"}\n', encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", str(corpus), "--recipe", "ares", "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {corpus}: no 'text' field in the first record (fields: body); set ares.text_column"
    ]
    assert not out.exists()
    fixed = runner.invoke(
        app, ["build", str(corpus), "--recipe", "ares", "-o", str(out), "ares.text_column=body"]
    )
    assert fixed.exit_code == 0, fixed.output


@pytest.mark.parametrize("name", ["table.csv", "notes.pdf"])
def test_other_file_kinds_are_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("a,b\n", encoding="utf-8")
    result = runner.invoke(app, ["build", str(path), "--recipe", "ares", "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "not a corpus file: expected JSONL (.jsonl), parquet (.parquet)" in result.stderr


def test_a_resumed_build_must_keep_its_settings(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "short"}\n', encoding="utf-8")
    out = tmp_path / "out"
    base = ["build", str(corpus), "--recipe", "ares", "-o", str(out)]
    offline = runner.invoke(app, base)
    assert offline.exit_code == 0  # offline: the run did all it can
    assert offline.stderr.startswith("stopped after the offline steps: ARES's classify")
    changed = runner.invoke(app, [*base, "ares.shard_size=10"])
    assert changed.exit_code == 2
    assert "different configuration (shard_size: 1000 → 10)" in changed.stderr
    assert runner.invoke(app, [*base, "ares.concurrency=3"]).exit_code == 0  # not the output's
