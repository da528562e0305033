"""``papergym review fit`` and ``review eval`` on a small synthetic ratings set, and their bad
inputs: one line, exit 2, nothing written."""

from __future__ import annotations

import csv
import json
import random
import shutil
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
    points = (out / "review-eval-papers.jsonl").read_text().splitlines()  # papergym report's
    assert len(points) == 24 and all(json.loads(p)["score"] is not None for p in points)
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


def add_papers(ratings: Path, papers: Path, ids: list[str], seed: int) -> None:
    """More rated papers (other ids, other texts) in the same ratings file and folder."""
    rng = random.Random(seed)
    lines = ratings.read_text().splitlines()
    for index, paper_id in enumerate(ids):
        accepted = index % 2 == 0
        cells = [str(rng.choice([6, 8]) if accepted else rng.choice([1, 3])) for _ in range(3)]
        decision = "Accept (Poster)" if accepted else "Reject"
        lines.append("\t".join([paper_id, *cells, decision]))
        text = paper_text(1000 + index, accepted, rng)
        (papers / f"{paper_id}.txt").write_text(text, encoding="utf-8")
    ratings.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A baseline fitted on a 24-paper set: (ratings, papers, baseline file)."""
    root = tmp_path_factory.mktemp("fitted")
    ratings, papers = make_set(root)
    baseline = root / "baseline.json"
    result = invoke(
        "fit", "--ratings", ratings, "--papers", papers, "-o", baseline, "--folds", "3",
        "--alpha", "1",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return ratings, papers, baseline


def copy_set(tmp_path: Path, fitted: tuple[Path, Path, Path]) -> tuple[Path, Path, Path]:
    ratings, papers, baseline = fitted
    shutil.copytree(papers, tmp_path / "papers")
    shutil.copy(ratings, tmp_path / "ratings.tsv")
    return tmp_path / "ratings.tsv", tmp_path / "papers", baseline


def test_the_baseline_records_its_papers_and_training_mean(
    fitted: tuple[Path, Path, Path],
) -> None:
    ratings, _, baseline = fitted
    payload = json.loads(baseline.read_text())
    assert len(payload["fitted_on"]["texts"]) == len(payload["fitted_on"]["anonymised"]) == 24
    values = [float(c) for line in ratings.read_text().splitlines()[1:] for c in line.split("\t")[1:-1] if c]  # fmt: skip
    assert payload["mean_rating"] == pytest.approx(sum(values) / len(values))


def test_eval_of_the_baselines_own_papers_warns_and_holds_them_out(
    tmp_path: Path, fitted: tuple[Path, Path, Path]
) -> None:
    ratings, papers, baseline = copy_set(tmp_path, fitted)
    # a fitted paper re-extracted with other line ends and a page header still counts
    p1 = papers / "p1.txt"
    p1.write_bytes(b"Under review as a conference paper at ICLR 2031\r\n" + p1.read_bytes())
    p2 = papers / "p2.txt"
    p2.write_bytes(p2.read_bytes().replace(b"\n", b"\r\n"))
    add_papers(ratings, papers, [f"new{i}" for i in range(10)], seed=5)
    out = tmp_path / "reviews"
    result = runner.invoke(app, ["review", str(papers), "-o", str(out), f"review.baseline={baseline}"])  # fmt: skip
    assert result.exit_code == 0, result.output
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--reviews", out / "reviews.jsonl",
        "--no-leak", "--json", "review.resamples=20",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "24 of 34 papers are in-sample" in warnings[0], result.stderr
    report = json.loads(result.stdout)
    in_sample = report["in_sample"]
    assert sorted(in_sample["papers"]) == sorted(f"p{i}" for i in range(24))
    assert in_sample["by_anonymised_text"] == 1  # p1: its text changed, not what is read of it
    held = {row["system"]: row for row in report["held_out_rows"]}
    assert {row["papers"] for row in held.values()} == {10}
    assert "in-sample on 24 of 34" in report["rows"][0]["description"]


def test_eval_with_no_held_out_paper_says_so(
    tmp_path: Path, fitted: tuple[Path, Path, Path]
) -> None:
    ratings, papers, baseline = copy_set(tmp_path, fitted)
    out = tmp_path / "reviews"
    result = runner.invoke(app, ["review", str(papers), "-o", str(out), f"review.baseline={baseline}"])  # fmt: skip
    assert result.exit_code == 0, result.output
    result = invoke(
        "eval", "--ratings", ratings, "--papers", papers, "--reviews", out / "reviews.jsonl",
        "--no-leak", "review.resamples=20",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "warning: 24 of 24 papers are in-sample" in result.stderr
    assert "no paper is held out" in result.stderr and "Held out" not in result.stdout


def test_the_constant_row_is_the_training_mean_not_the_test_mean(
    tmp_path: Path, fitted: tuple[Path, Path, Path]
) -> None:
    train_ratings, _, baseline = fitted
    ratings, papers = tmp_path / "test.tsv", tmp_path / "papers"
    papers.mkdir()
    ratings.write_text("paper_id\t0\t1\t2\tdecision\n")
    add_papers(ratings, papers, [f"t{i}" for i in range(10)], seed=7)
    predictions = tmp_path / "pred.csv"
    rows = [f"t{i},{5 + i % 3},{'Accept' if i % 2 == 0 else 'Reject'}" for i in range(10)]
    predictions.write_text("\n".join(["paper_id,Overall,Decision", *rows]) + "\n")
    train_mean = json.loads(baseline.read_text())["mean_rating"]

    def constants(*extra: object) -> dict[str, str]:
        result = invoke(
            "eval", "--ratings", ratings, "--papers", papers, "--predictions", predictions,
            "--scale", "1:10", "--no-leak", "--json", "review.resamples=20",
            f"review.baseline={baseline}", *extra,
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        rows = json.loads(result.stdout)["rows"]
        return {r["system"]: r["description"] for r in rows if "constant" in r["system"]}

    shown = constants()
    assert list(shown) == ["constant"]
    assert f"{train_mean:.3f}" in shown["constant"] and "fitted on" in shown["constant"]
    shown = constants("--oracle-constant")
    test_values = [float(c) for line in ratings.read_text().splitlines()[1:] for c in line.split("\t")[1:-1] if c]  # fmt: skip
    test_mean = sum(test_values) / len(test_values)
    assert abs(test_mean - train_mean) > 0.05
    assert f"{test_mean:.3f}" in shown["oracle constant"] and "oracle" in shown["oracle constant"]
    shown = constants("--train-ratings", train_ratings)
    assert f"{train_mean:.3f}" in shown["constant"] and "--train-ratings" in shown["constant"]
