"""The review run and the evaluation called from Python, without the command line: sections in,
results out, progress through callbacks; and the output folder refused before anything is
written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.llm.config import LLMConfig
from papergym.review.eval_run import EvalRequest, evaluate_reviewer
from papergym.review.run import review
from papergym.review.settings import ReviewSection

TOPICS = ["sparse attention", "graph pruning", "reward models", "tokenisers", "optimisers", "RL"]


def write_texts(folder: Path) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for index, topic in enumerate(TOPICS):
        path = folder / f"p{index}.txt"
        path.write_text(
            f"# On {topic}\n\nABSTRACT\n\nWe study {topic} and show that a simple method works "
            f"on {index + 2} benchmarks.\n\n1 INTRODUCTION\n\nThe problem of {topic} is old. "
            "We propose a method, prove a bound and run an ablation.\n",
            encoding="utf-8",
        )
        paths.append(path)
    return paths


def test_review_from_python_reports_progress_and_resumes(tmp_path: Path) -> None:
    papers = write_texts(tmp_path / "in")
    out = tmp_path / "out"
    events: list[object] = []
    run = review(
        papers,
        out,
        ReviewSection(),
        LLMConfig(),  # no LLM: the offline baseline
        on_start=lambda total, done: events.append((total, done)),
        on_paper=events.append,
    )
    assert events[0] == (6, 0) and sorted(map(str, events[1:])) == [f"p{i}" for i in range(6)]
    assert [r.paper_id for r in run.records] == [f"p{i}" for i in range(6)]
    assert (run.resumed, run.reviewed, run.failures, run.usage) == (0, 6, [], None)
    assert run.summary()["papers_scored"] == 6 and run.summary()["baseline"] is True
    assert (out / "reviews.md").is_file() and not (out / "config.yaml").exists()
    events.clear()
    again = review(papers, out, ReviewSection(), LLMConfig(), on_start=lambda *a: events.append(a))
    assert events == [(6, 6)] and (again.resumed, again.reviewed) == (6, 0)
    assert again.records == run.records


def test_a_folder_reviewed_with_another_threshold_is_refused_naming_it(tmp_path: Path) -> None:
    papers = write_texts(tmp_path / "in")[:1]
    out = tmp_path / "out"
    review(papers, out, ReviewSection(threshold=5.0), LLMConfig())
    before = (out / "reviews.jsonl").read_bytes()
    with pytest.raises(BadInputError, match=r"threshold: 5\.0 → 6\.0"):
        review(papers, out, ReviewSection(threshold=6.0), LLMConfig())
    assert (out / "reviews.jsonl").read_bytes() == before


def test_an_output_path_under_a_file_is_bad_input_not_an_internal_error(tmp_path: Path) -> None:
    # it used to pass the checks and fail creating the folder: "internal error", exit 1
    paper = write_texts(tmp_path / "in")[0]
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(app, ["review", str(paper), "-o", str(afile / "out")])
    assert result.exit_code == 2, result.output
    [line] = [line for line in result.output.splitlines() if line.strip()]
    assert line.startswith("error:") and "is not a folder" in line
    assert afile.read_text(encoding="utf-8") == "mine"


def test_evaluate_reviewer_from_python_writes_its_summary(tmp_path: Path) -> None:
    papers = write_texts(tmp_path / "in")
    review(papers, tmp_path / "out", ReviewSection(), LLMConfig())
    ratings = tmp_path / "ratings.tsv"
    rows = ["paper_id\t0\t1\tdecision"]
    rows += [
        f"p{i}\t{6 if i % 2 else 3}\t{8 if i % 2 else 5}\t{'Accept' if i % 2 else 'Reject'}"
        for i in range(len(papers))
    ]
    ratings.write_text("\n".join(rows) + "\n", encoding="utf-8")
    request = EvalRequest(
        ratings, tmp_path / "in", reviews=tmp_path / "out" / "reviews.jsonl", leak=False,
        out=tmp_path / "eval",
    )  # fmt: skip
    summary = evaluate_reviewer(request, ReviewSection(resamples=20))
    assert (summary.papers, summary.accepted, summary.human_ratings) == (6, 3, 12)
    assert summary.rows[0].system.startswith("baseline") and summary.rows[0].scored == 6
    assert summary.in_sample is not None and summary.in_sample.papers == []
    written = (tmp_path / "eval" / "review-eval.json").read_text(encoding="utf-8")
    assert written == summary.model_dump_json(indent=1) + "\n"
