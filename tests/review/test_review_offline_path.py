"""``papergym review`` and ``ReviewReward`` with the offline baseline: labelled a baseline
everywhere, no LLM, no reviews, a predicted score and its decision."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import read_jsonl
from papergym.review.offline import OfflineReviewer
from papergym.review.records import PaperReview
from papergym.review.reward import ReviewReward

runner = CliRunner()

ROUTE = "# Routing\n\n1 INTRODUCTION\n\nWe route attention to blocks; attention is costly."
PRUNE = "# Pruning\n\n1 INTRODUCTION\n\nWe prune weights; prune early, prune often."


def tiny_baseline(path: Path) -> Path:
    """A baseline file in the fitted format, with two hand-set terms: the command's plumbing
    under test, not the shipped coefficients."""
    payload = {
        "kind": "tfidf-ridge",
        "venue": "iclr",
        "alpha": 1.0,
        "intercept": 5.0,
        "terms": {"attention": [1.0, 3.0], "prune": [1.0, -3.0]},
        "threshold": 5.0,
        "human_threshold": 5.5,
        "provenance": {
            "command": "test", "data": "two hand-set terms", "papers": 0, "ratings": 0,
            "accepted": 0, "version": "0", "sklearn": "0", "date": "2026-01-01",
            "selection": "none",
        },
    }  # fmt: skip
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_review_offline_command_is_a_baseline_everywhere(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "route.txt").write_text(ROUTE, encoding="utf-8")
    (tmp_path / "in" / "prune.md").write_text(PRUNE, encoding="utf-8")
    baseline = tiny_baseline(tmp_path / "baseline.json")
    out = tmp_path / "out"
    args = ["review", str(tmp_path / "in"), "-o", str(out), f"review.baseline={baseline}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "baseline" in result.output.splitlines()[0]
    assert "LLM usage" not in result.output
    records = {r.paper_id: r for r in read_jsonl(out / "reviews.jsonl", PaperReview)}
    assert set(records) == {"route", "prune"}
    for record in records.values():
        assert record.baseline is True and record.reviews == [] and record.meta_review is None
        assert "baseline" in record.reviewer_model
    assert records["route"].score == 8.0 and records["route"].decision == "accept"
    assert records["prune"].score == 2.0 and records["prune"].decision == "reject"
    markdown = (out / "reviews.md").read_text("utf-8")
    assert markdown.startswith("# Reviews: 2 paper(s), baseline") and "not a reviewer" in markdown
    again = runner.invoke(app, [*args, "--json"])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)
    assert summary["baseline"] is True and summary["reviewed_before_this_run"] == 2


def test_review_offline_reward_scales_the_prediction(tmp_path: Path) -> None:
    reviewer = OfflineReviewer(path=tiny_baseline(tmp_path / "b.json"))
    good, bad = ReviewReward(reviewer).score_many([ROUTE, PRUNE])
    assert good.rating == 8.0 and good.value == 7 / 9 and good.reviews == 0
    assert bad.rating == 2.0 and bad.value == 1 / 9
