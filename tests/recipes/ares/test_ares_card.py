"""An ARES build writes card.md and card.json, as a paper build does."""

from __future__ import annotations

import json
from pathlib import Path

from runner_support import instances, scripted_server, write_corpus
from typer.testing import CliRunner

from papergym.cli import app
from papergym.recipes.ares.card import spread

runner = CliRunner()


def test_spread_counts_values_in_order() -> None:
    assert spread([]) == {"mean": None, "min": None, "max": None, "histogram": {}}
    assert spread([-2, 5, 3.5, 5]) == {
        "mean": 2.875,
        "min": -2,
        "max": 5,
        "histogram": {"-2": 1, "3.5": 1, "5": 2},
    }


def test_an_llm_build_writes_its_card(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", 4)  # row 3 is too short: a prefilter drop
    out = tmp_path / "o"
    with scripted_server() as server:
        args = ["build", str(corpus), "--recipe", "ares", "-o", str(out), "--no-cache"]
        args += ["--base-url", server.base_url, "--model", "m", "ares.shard_size=2"]
        result = runner.invoke(app, args)
        calls = server.request_count
    assert result.exit_code == 0, result.output
    data = json.loads((out / "card.json").read_text(encoding="utf-8"))
    stats = data["stats"]
    assert (stats["documents"], stats["kept"], stats["dropped"]) == (4, 3, 1)
    assert stats["drops"] == {
        "by_step": {"prefilter": 1},
        "by_reason": {"prefilter": {"min_words": 1}},
    }
    built = instances(out)
    assert stats["domains"] == {"medicine": 3} == {built[0].domain: len(built)}
    assert sum(stats["personas"].values()) == 3
    weights = [c.weight for i in built for c in i.rubric.specific]
    rubric = stats["rubric"]
    assert sum(rubric["weights"]["histogram"].values()) == len(weights) == rubric["criteria"]
    assert rubric["pitfalls"] == sum(1 for w in weights if w < 0) > 0
    pitfalls = [sum(1 for c in i.rubric.specific if c.weight < 0) for i in built]
    assert rubric["pitfalls_per_instance"]["mean"] == round(sum(pitfalls) / 3, 4)
    usage = stats["usage"]
    assert usage["calls"] == calls and usage["per_instance"]["calls"] == round(calls / 3, 6)
    assert usage["per_instance"]["tokens_in"] > 0
    assert data["corpus"] == [{"file": "c.jsonl", "bytes": corpus.stat().st_size}]
    assert data["usage_rows"]  # what ``papergym export`` reads back for its card
    text = (out / "card.md").read_text(encoding="utf-8")
    for line in ("| prefilter | min_words | 1 |", "| medicine | 3 (100.0%) |", "`c.jsonl`"):
        assert line in text
    assert "per kept instance" in text


def test_an_offline_build_writes_its_card(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", 4)
    out = tmp_path / "o"
    result = runner.invoke(app, ["build", str(corpus), "--recipe", "ares", "-o", str(out)])
    assert result.exit_code == 0, result.output
    stats = json.loads((out / "card.json").read_text(encoding="utf-8"))["stats"]
    assert (stats["mode"], stats["kept"], stats["rubric"], stats["usage"]) == (
        "offline",
        3,
        None,
        None,
    )
    assert stats["domains"] == {"medicine": 3}
    assert list(stats["personas"].values()) == [3]
    assert "offline build" in (out / "card.md").read_text(encoding="utf-8")
