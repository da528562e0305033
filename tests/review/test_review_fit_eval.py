"""``papergym review fit`` and ``review eval`` on a small synthetic ratings set, and their bad
inputs: one line, exit 2, nothing written."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import write_jsonl
from papergym.review.offline import OfflineReviewer
from papergym.review.records import PaperReview

runner = CliRunner()

GOOD = ["theorem", "proof", "guarantee", "rigorous", "ablation", "convergence", "bound", "analysis"]
WEAK = ["heuristic", "trick", "anecdotal", "tuning", "hack", "unclear", "sketch", "guess"]
COMMON = [
    "model",
    "data",
    "training",
    "method",
    "results",
    "experiments",
    "network",
    "learning",
    "task",
    "loss",
]


def paper_text(index: int, accepted: bool, rng: random.Random) -> str:
    words = GOOD if accepted else WEAK
    body = " ".join(rng.choice(words + COMMON * 2) for _ in range(300))
    front = (
        "Published as a conference paper at ICLR 2031\n\n# PAPER\n\n**Ada Quill**\nUniversity "
        "of Nowhere\nada@nowhere.edu\n"
        if accepted
        else "# PAPER\n\n**Anonymous authors**\nPaper under double-blind review\n"
    )
    return (
        f"{front}\nABSTRACT\n\nWe study the problem of learning with the method and the data "
        f"in number {index} and we show that it works.\n\n1 INTRODUCTION\n\n{body}\n"
    )


def make_set(root: Path, n: int = 24, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    papers = root / "papers"
    papers.mkdir(parents=True)
    rows = ["paper_id\t0\t1\t2\tdecision"]
    for index in range(n):
        accepted = index % 2 == 0
        ratings = [rng.choice([6, 8, 8]) if accepted else rng.choice([3, 5, 5]) for _ in range(3)]
        cells = [str(r) for r in ratings[: 2 + index % 2]] + [""] * (1 - index % 2)
        decision = "Accept (Poster)" if accepted else "Reject"
        rows.append("\t".join([f"p{index}", *cells, decision]))
        (papers / f"p{index}.txt").write_text(paper_text(index, accepted, rng), encoding="utf-8")
    ratings_file = root / "ratings.tsv"
    ratings_file.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ratings_file, papers


def invoke(*args: object) -> object:
    return runner.invoke(app, ["review", *map(str, args)])


def test_fit_then_eval_out_of_fold(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path)
    baseline = tmp_path / "baseline.json"
    oof = tmp_path / "oof.csv"
    result = invoke(
        "fit", "--ratings", ratings, "--papers", papers, "-o", baseline, "--oof", oof,
        "--folds", "3", "--alpha", "0.3", "--alpha", "1", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["chosen"].startswith("tfidf-ridge")
    assert {r["model"] for r in summary["cross_validation"]} == {
        "tfidf-ridge alpha=0.3",
        "tfidf-ridge alpha=1",
    }
    reviewer = OfflineReviewer(path=baseline)
    good, weak = reviewer.predict([" ".join(GOOD * 20), " ".join(WEAK * 20)])
    assert good > weak  # the words of accepted papers raise the predicted rating
    fitted = json.loads(baseline.read_text())
    assert fitted["provenance"]["papers"] == 24 and str(tmp_path) not in baseline.read_text()
    # the camera-ready marks were anonymised away before fitting
    assert "nowhere" not in fitted["terms"] and "anonymous" not in fitted["terms"]

    rows = list(csv.DictReader(oof.open()))
    assert len(rows) == 24 and {r["decision"] for r in rows} <= {"Accept", "Reject"}
    out = tmp_path / "eval"
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--predictions", oof, "--scale", "1:10",
        "--score-column", "score", "--decision-column", "decision", "--name", "baseline-oof",
        "-o", out, "--json", "review.resamples=50",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (out / "review-eval.json").is_file()
    systems = {row["system"]: row for row in report["rows"]}
    assert set(systems) == {"baseline-oof", "constant", "always-reject", "single human"}
    assert systems["baseline-oof"]["scored"] == 24
    assert systems["baseline-oof"]["auc"]["value"] > 0.7
    assert report["mapping"].startswith("score: linear 1..10")
    leak = report["leak"]
    assert leak["before"] > 0.9 and leak["after"] < leak["before"]


def test_eval_of_reviews_counts_missing_and_unscored_papers(tmp_path: Path) -> None:
    ratings, papers = make_set(tmp_path, n=10)
    records = [
        PaperReview(
            paper_id=f"p{i}", source=f"p{i}.txt", reviewer_model="m", baseline=False,
            score=None if i == 1 else (7.0 if i % 2 == 0 else 4.0),
            decision=None if i == 1 else ("accept" if i % 2 == 0 else "reject"), threshold=5.5,
        )
        for i in range(9)  # p9 is missing
    ]  # fmt: skip
    write_jsonl(tmp_path / "reviews.jsonl", records)
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--reviews", tmp_path / "reviews.jsonl",
        "--no-leak", "--json", "review.resamples=20",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)["rows"][0]
    assert (row["papers"], row["scored"], row["unscored"]) == (10, 8, 2)
    assert row["accuracy"]["value"] == pytest.approx(0.8)  # both unscored count as wrong
    assert row["accuracy"]["n"] == 10


def bad(tmp_path: Path, *args: object) -> str:
    out = tmp_path / "out"
    result = invoke(*args, "-o", out)
    assert result.exit_code == 2, result.output
    assert not out.exists()
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Path]:
    return make_set(tmp_path / "set", n=6)


def evaluate(tmp_path: Path, ratings: Path, papers: Path, *extra: object) -> str:
    predictions = tmp_path / "pred.csv"
    if not predictions.exists():
        lines = ["paper_id,Overall,Decision", *(f"p{i},5,Reject" for i in range(6))]
        predictions.write_text("\n".join(lines) + "\n")
    return bad(
        tmp_path, "eval", "--ratings", ratings, "--papers", papers, "--predictions", predictions,
        "--scale", "1:10", "--no-leak", *extra,
    )  # fmt: skip


def test_unknown_paper_id(tmp_path: Path, small: tuple[Path, Path]) -> None:
    ratings, papers = small
    ratings.write_text(ratings.read_text() + "ghost\t5\t6\t\tReject\n")
    assert "ghost" in evaluate(tmp_path, ratings, papers)


@pytest.mark.parametrize(("value", "words"), [("five", "not a number"), ("4", "not on the iclr")])
def test_bad_ratings(tmp_path: Path, small: tuple[Path, Path], value: str, words: str) -> None:
    ratings, papers = small
    lines = ratings.read_text().splitlines()
    lines[1] = "\t".join(["p0", value, "6", "", "Accept"])
    ratings.write_text("\n".join(lines) + "\n")
    assert words in evaluate(tmp_path, ratings, papers)


def test_predictions_without_the_named_column(tmp_path: Path, small: tuple[Path, Path]) -> None:
    ratings, papers = small
    line = evaluate(tmp_path, ratings, papers, "--score-column", "Rating")
    assert "no column 'Rating'" in line


def test_predictions_off_their_scale(tmp_path: Path, small: tuple[Path, Path]) -> None:
    ratings, papers = small
    (tmp_path / "pred.csv").write_text("paper_id,Overall,Decision\np0,11,Accept\n")
    assert "outside --scale" in evaluate(tmp_path, ratings, papers)


@pytest.mark.parametrize(("content", "words"), [(b"", "empty"), (b"%PDF-1.5\n\x00\x01", "binary")])
def test_empty_or_binary_paper(
    tmp_path: Path, small: tuple[Path, Path], content: bytes, words: str
) -> None:
    ratings, papers = small
    (papers / "p3.txt").write_bytes(content)
    assert words in evaluate(tmp_path, ratings, papers)


def test_fit_refuses_an_unknown_paper(tmp_path: Path, small: tuple[Path, Path]) -> None:
    ratings, papers = small
    (papers / "p2.txt").unlink()
    line = bad(tmp_path, "fit", "--ratings", ratings, "--papers", papers, "--folds", "2")
    assert "p2" in line


def test_eval_needs_an_explicit_scale(tmp_path: Path, small: tuple[Path, Path]) -> None:
    ratings, papers = small
    (tmp_path / "pred.csv").write_text("paper_id,Overall,Decision\np0,5,Accept\n")
    line = bad(
        tmp_path, "eval", "--ratings", ratings, "--papers", papers,
        "--predictions", tmp_path / "pred.csv",
    )  # fmt: skip
    assert "--scale" in line


@pytest.mark.parametrize("score", ["NaN", "Infinity", "1e9", "-5"])
def test_eval_refuses_reviews_with_a_score_off_the_scale(
    tmp_path: Path, small: tuple[Path, Path], score: str
) -> None:
    ratings, papers = small
    good = PaperReview(
        paper_id="p0", source="p0.txt", reviewer_model="m", baseline=False, score=6.0,
        decision="accept", threshold=5.5,
    )  # fmt: skip
    bad_line = good.model_dump_json().replace('"score":6.0', f'"score":{score}')
    assert score in bad_line
    reviews = tmp_path / "reviews.jsonl"
    reviews.write_text(good.model_dump_json() + "\n" + bad_line.replace("p0", "p1") + "\n")
    line = bad(
        tmp_path, "eval", "--ratings", ratings, "--papers", papers, "--reviews", reviews,
        "--no-leak",
    )  # fmt: skip
    assert f"{reviews} line 2" in line and "rating range" in line
