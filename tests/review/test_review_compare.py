"""``papergym review compare``: groups of papers side by side by the reviewer's scores, with
intervals; unscored papers reported, never 0; the differences between groups and whether they
hold. On the shared ICLR 2022 set (when present), accepted against rejected papers reviewed by
the offline baseline stand in for the paper's generated / preprint / accepted groups."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import write_jsonl
from papergym.review.compare import compare_groups, difference_of_means
from papergym.review.records import ICLR, PaperReview, decide

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "reviews" / "iclr2022"
runner = CliRunner()


def review_folder(folder: Path, scores: list[float | None]) -> Path:
    folder.mkdir(parents=True)
    records = [
        PaperReview(
            paper_id=f"{folder.name}-{i}",
            source=f"{i}.txt",
            reviewer_model="offline",
            baseline=True,
            score=score,
            decision=decide(score, 5.5),
            threshold=5.5,
        )
        for i, score in enumerate(scores)
    ]
    write_jsonl(folder / "reviews.jsonl", records)
    return folder


def test_difference_of_means_holds_only_when_the_groups_differ() -> None:
    low, high = [4.0, 4.5, 5.0, 4.2, 4.8] * 4, [6.0, 6.5, 6.2, 5.8, 6.4] * 4
    apart = difference_of_means(high, low)
    assert apart.value == pytest.approx(1.68) and apart.low is not None and apart.low > 0
    same = difference_of_means(low, list(reversed(low)))
    assert same.value == pytest.approx(0.0) and same.low < 0 < same.high  # type: ignore[operator]
    assert difference_of_means([], low).value is None


def test_groups_report_means_unscored_and_differences(tmp_path: Path) -> None:
    generated = review_folder(tmp_path / "gen", [5.0, 5.5, None, 6.0, 5.0])
    accepted = review_folder(tmp_path / "acc", [7.0, 7.5, 8.0, 7.0])
    result = compare_groups([("generated", generated), ("accepted", accepted)], ICLR)
    gen, acc = result.groups
    assert (gen.papers, gen.unscored, gen.mean_score.n) == (5, 1, 4)  # unscored: not a 0
    assert gen.mean_score.value == pytest.approx(5.375)
    assert acc.accept_rate.value == 1.0 and gen.accept_rate.value == pytest.approx(0.5)
    [diff] = result.differences
    assert (diff.later, diff.earlier, diff.holds) == ("accepted", "generated", True)
    assert diff.difference.value == pytest.approx(7.375 - 5.375)


def test_the_command_prints_the_table_and_its_json(tmp_path: Path) -> None:
    one = review_folder(tmp_path / "one", [5.0, 6.0, 5.5])
    two = review_folder(tmp_path / "two", [5.5, 5.0, 6.0])
    args = ["review", "compare", f"a={one}", f"b={two / 'reviews.jsonl'}"]
    shown = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "mean score" in shown.output and "b - a: +0.00" in shown.output
    assert "does not hold" in shown.output
    as_json = runner.invoke(app, [*args, "--json"])
    assert json.loads(as_json.stdout)["groups"][1]["name"] == "b"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["a=ONE"], "at least two groups"),
        (["a=ONE", "ONE"], "is not GROUP=DIR"),
        (["a=ONE", "a=ONE"], "same name"),
        (["a=ONE", "b=MISSING"], "not a `papergym review` output folder"),
    ],
)
def test_bad_groups_are_one_line_exit_2(tmp_path: Path, arguments: list[str], message: str) -> None:
    one = review_folder(tmp_path / "one", [5.0])
    args = [
        a.replace("ONE", str(one)).replace("MISSING", str(tmp_path / "none")) for a in arguments
    ]
    result = runner.invoke(app, ["review", "compare", *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines


@pytest.mark.slow
@pytest.mark.skipif(not (SHARED / "ratings.tsv").is_file(), reason="no shared set")
def test_accepted_and_rejected_shared_papers_reviewed_then_compared(tmp_path: Path) -> None:
    from papergym.review.data import read_ratings

    papers = read_ratings(SHARED / "ratings.tsv", ICLR)
    groups = []
    for name, accepted in (("rejected", False), ("accepted", True)):
        folder = tmp_path / name
        folder.mkdir()
        for paper in [p for p in papers if p.accepted is accepted][:4]:
            shutil.copy(SHARED / "papers" / f"{paper.paper_id}.txt", folder)
        out = tmp_path / f"reviews-{name}"
        reviewed = runner.invoke(app, ["review", str(folder), "-o", str(out)])
        assert reviewed.exit_code == 0, reviewed.output
        groups.append(f"{name}={out}")
    result = runner.invoke(app, ["review", "compare", *groups, "--json"])
    assert result.exit_code == 0, result.output
    comparison = json.loads(result.stdout)
    assert [g["papers"] for g in comparison["groups"]] == [4, 4]
    for group in comparison["groups"]:
        estimate = group["mean_score"]
        assert 1.0 <= estimate["low"] <= estimate["value"] <= estimate["high"] <= 10.0
