"""Mistakes a new user makes with ``papergym review``, ``review fit`` and ``review eval``: each
is one line naming the problem, exit code 2, nothing written; and a run killed mid-append
resumes. (Found by using the commands as documented.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_review_fit_eval import make_set
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import write_jsonl
from papergym.review.records import PaperReview

runner = CliRunner()

TEXT = """# Learning to Route Attention

ABSTRACT

We route attention to a few key blocks and evaluate the cost on long documents.

1 INTRODUCTION

Attention is expensive for long inputs. We propose block routing.
"""


def invoke(*args: object) -> object:
    return runner.invoke(app, ["review", *map(str, args)])


def one_line(result: object) -> str:
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    lines = [line for line in result.output.splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    path = tmp_path / "paper.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.mark.parametrize("value", ["nan", "-1", "11", "inf"])
def test_review_threshold_off_the_rating_range_is_refused(
    tmp_path: Path, paper: Path, value: str
) -> None:
    out = tmp_path / "out"
    line = one_line(invoke(paper, "-o", out, "--threshold", value))
    assert "review.threshold" in line and "outside the iclr rating range 1..10" in line
    assert not out.exists()  # NaN used to write a record that the run could not read back


def test_eval_threshold_off_the_rating_range_is_refused(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    write_jsonl(tmp_path / "reviews.jsonl", [])
    out = tmp_path / "eval"
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--reviews", tmp_path / "reviews.jsonl",
        "--no-leak", "--threshold", "-3", "-o", out,
    )  # fmt: skip
    assert "review.threshold -3" in one_line(result)
    assert not out.exists()


def test_fit_with_a_ridge_strength_that_is_not_positive_is_bad_input(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    out = tmp_path / "fit.json"
    result = invoke(
        "fit", "--ratings", ratings, "--papers", papers, "-o", out, "--folds", "2",
        "--alpha", "-1",
    )  # fmt: skip
    assert "--alpha -1" in one_line(result)  # was an internal error from scikit-learn, exit 1
    assert not out.exists()


def test_predictions_that_repeat_a_paper_are_refused(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    predictions = tmp_path / "pred.csv"
    predictions.write_text("paper_id,Overall,Decision\np0,5,Reject\np1,6,Reject\np0,9,Accept\n")
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--predictions", predictions,
        "--scale", "1:10", "--no-leak",
    )  # fmt: skip
    line = one_line(result)  # the last row used to win, silently
    assert "row 4" in line and "'p0' again (first at row 2)" in line


def test_eval_of_the_offline_baselines_reviews_calls_it_a_baseline(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    records = [
        PaperReview(
            paper_id=f"p{i}", source=f"p{i}.txt", reviewer_model="baseline:tfidf-ridge",
            baseline=True, score=5.0 + i % 2, decision="accept" if i % 2 else "reject",
            threshold=5.5,
        )
        for i in range(6)
    ]  # fmt: skip
    write_jsonl(tmp_path / "reviews.jsonl", records)
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--reviews", tmp_path / "reviews.jsonl",
        "--no-leak", "review.resamples=20", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)["rows"][0]
    assert row["system"] == "baseline:tfidf-ridge"  # was "reviews", the file's name
    assert "offline baseline" in row["description"]
    table = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--reviews", tmp_path / "reviews.jsonl",
        "--no-leak", "review.resamples=20",
    )  # fmt: skip
    assert "baseline:tfidf-ridge" in table.output


def test_review_into_another_commands_folder_is_refused(tmp_path: Path, paper: Path) -> None:
    out = tmp_path / "eval"
    out.mkdir()
    (out / "review-eval.json").write_text("{}\n")
    line = one_line(invoke(paper, "-o", out))
    assert str(out) in line and "holds no PaperGym review (review.json)" in line
    assert sorted(p.name for p in out.iterdir()) == ["review-eval.json"]


def test_a_run_killed_while_appending_a_record_resumes(tmp_path: Path, paper: Path) -> None:
    other = tmp_path / "other.txt"
    other.write_text(TEXT.replace("Route", "Prune"), encoding="utf-8")
    out = tmp_path / "out"
    assert invoke(paper, other, "-o", out).exit_code == 0  # the offline baseline: no LLM
    reviews = out / "reviews.jsonl"
    first, second = reviews.read_text("utf-8").splitlines(keepends=True)
    reviews.write_text(first + second[: len(second) // 2], encoding="utf-8")  # kill -9 mid-write
    result = invoke(paper, other, "-o", out)
    assert result.exit_code == 0, result.output  # was: exit 2, "not valid JSON"
    ids = [json.loads(line)["paper_id"] for line in reviews.read_text("utf-8").splitlines()]
    assert sorted(ids) == ["other", "paper"]


def test_serve_reward_help_documents_the_review_rewards_bodies() -> None:
    result = runner.invoke(app, ["serve-reward", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    # the epilog used to describe only the rubric reward's labels and extra_logs
    assert "With --reward review no label is read" in text
    assert '"review_rating", "review_unscored"' in text


def test_a_ratings_file_saved_by_a_spreadsheet_with_a_bom_and_crlf_is_read(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    text = ratings.read_text(encoding="utf-8")
    ratings.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    predictions = tmp_path / "pred.csv"
    predictions.write_text(
        "paper_id,Overall,Decision\n" + "".join(f"p{i},5,Reject\n" for i in range(6))
    )
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--predictions", predictions,
        "--scale", "1:10", "--no-leak", "review.resamples=10", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # was "not a ratings file: the header must be..."
    assert json.loads(result.output)["papers"] == 6


@pytest.mark.parametrize("value", ["-5", "nan", "12"])
def test_a_constant_off_the_rating_range_is_refused(tmp_path: Path, value: str) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    write_jsonl(tmp_path / "reviews.jsonl", [])
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--reviews", tmp_path / "reviews.jsonl",
        "--no-leak", "--constant", value,
    )  # fmt: skip
    assert f"--constant {value}" in one_line(result)


def test_predictions_for_papers_not_rated_are_pointed_out(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    predictions = tmp_path / "pred.csv"  # ids of another data set: every rated paper is missed
    predictions.write_text("paper_id,Overall,Decision\nq0,5,Reject\nq1,7,Accept\n")
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--predictions", predictions,
        "--scale", "1:10", "--no-leak", "review.resamples=10",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "2 prediction(s) name papers that are not in the ratings file" in text


def test_fit_with_the_oof_csv_named_as_the_baseline_file_is_refused(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path / "set", n=6)
    out = tmp_path / "fit.json"
    result = invoke(
        "fit", "--ratings", ratings, "--papers", papers, "-o", out, "--oof", out, "--folds", "2",
    )  # fmt: skip
    assert "is also -o" in one_line(result)  # one file used to overwrite the other
    assert not out.exists()
