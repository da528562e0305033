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


def test_an_offline_folder_continues_with_an_llm_and_export_says_what_it_holds(
    tmp_path: Path,
) -> None:
    """docs/ares.md's flow: the offline steps first, then the same folder with an LLM; export
    in between says what the folder holds and what to run next (issue 20, item 20)."""
    from runner_support import write_corpus

    corpus = write_corpus(tmp_path / "c.jsonl", 4)  # one row too short: 3 kept
    out = tmp_path / "out"
    base = ["build", str(corpus), "--recipe", "ares", "-o", str(out), "ares.shard_size=2"]
    assert runner.invoke(app, base).exit_code == 0
    export = ["export", str(out), "-f", "verl", "-o", str(tmp_path / "verl")]
    early = runner.invoke(app, export)
    assert early.exit_code == 2
    assert early.stderr.strip().splitlines() == [
        f"error: {out}: an offline ARES build, no instances yet: of 4 document(s) read, the "
        "offline steps kept 3 (kept-*.jsonl); writing questions and rubrics needs an LLM: run "
        f"`papergym build CORPUS --recipe ares -o {out}` again with --base-url and --model (or "
        "--llm-config), then export"
    ]
    with scripted_server() as server:
        llm = ["--base-url", server.base_url, "--model", "m", "--no-cache", "--json"]
        continued = runner.invoke(app, [*base, *llm])
    assert continued.exit_code == 0, continued.output
    summary = json.loads(continued.stdout)
    assert (summary["mode"], summary["kept"], summary["resuming"]) == ("llm", 3, True)
    assert len(read_jsonl(out / "instances.jsonl", Instance)) == 3
    assert not list(out.glob("kept-*.jsonl"))  # the offline drafts, superseded
    assert "mode: llm" in (out / "build.yaml").read_text(encoding="utf-8")
    assert runner.invoke(app, base).exit_code == 2  # LLM → offline would add nothing
    assert runner.invoke(app, export).exit_code == 0

    with scripted_server() as other:  # the same model name, another server: refused
        moved = ["--base-url", other.base_url, "--model", "m", "--no-cache", "--json"]
        refused = runner.invoke(app, [*base, *moved])
        assert other.request_count == 0
    assert refused.exit_code == 2 and f"→ {other.base_url.lower()}" in refused.stderr

    (out / "instances.jsonl").unlink()  # as after a run killed before its end
    unfinished = runner.invoke(app, [*export[:-1], str(tmp_path / "again")])
    assert unfinished.exit_code == 2
    assert "an ARES build that has not finished (2 shard(s) done" in unfinished.stderr
