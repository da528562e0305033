"""Written data files get the modes the umask gives ordinary files, not temporary files' 0600.

Datasets, exports and scores are read by teammates and by training workers running as other
users; a umask of 022 must give them 0644 files (and 0755 folders), a umask of 077 0600.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.export.run import run_export
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric
from support.papers import MINIMAL_MAIN, write_paper

runner = CliRunner()
# umask -> (file mode, folder mode)
MODES = {0o022: (0o644, 0o755), 0o077: (0o600, 0o700), 0o002: (0o664, 0o775)}


@pytest.fixture(params=sorted(MODES), ids=lambda mask: f"umask{mask:03o}")
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    mask: int = request.param
    old = os.umask(mask)
    try:
        yield mask
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def an_instance() -> Instance:
    criterion = Criterion(
        id="c1", text="The plan routes queries.", dimension="method", origin="answer", rank=1
    )
    return Instance(
        id=Instance.make_id("papergym", "extractive", "p1"),
        recipe="papergym",
        builder="extractive",
        paper_id="p1",
        title="A paper",
        domain="Computer science",
        source_path="p1",
        question="How would you make attention cheaper?",
        reference_answer="Route queries to a few key blocks.",
        rubric=Rubric(specific=(criterion,), general=GENERAL_CRITERIA),
    )


def test_writers_honour_the_umask(tmp_path: Path, umask: int) -> None:
    file_mode, _ = MODES[umask]
    write_jsonl(tmp_path / "out" / "instances.jsonl", [an_instance()])
    write_text_atomic(tmp_path / "out" / "config.yaml", "recipe: papergym\n")
    assert mode(tmp_path / "out" / "instances.jsonl") == file_mode
    assert mode(tmp_path / "out" / "config.yaml") == file_mode
    # and nothing temporary is left beside them
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "config.yaml",
        "instances.jsonl",
    ]


def test_rewriting_a_file_gives_the_current_umask_not_the_old_mode(tmp_path: Path) -> None:
    target = tmp_path / "scores.jsonl"
    old = os.umask(0o077)
    try:
        write_text_atomic(target, "{}\n")
        assert mode(target) == 0o600
        os.umask(0o022)
        write_text_atomic(target, "{}\n")
        assert mode(target) == 0o644
    finally:
        os.umask(old)


def test_export_files_and_folders_honour_the_umask(tmp_path: Path, umask: int) -> None:
    file_mode, folder_mode = MODES[umask]
    build = tmp_path / "build"
    write_jsonl(build / "instances.jsonl", [an_instance()])
    [parquet, hf] = run_export(build, ["parquet", "hf"], out=tmp_path / "exp")
    assert mode(parquet.path / "train.parquet") == file_mode
    dataset = hf.path / "dataset"  # swapped into place from a temporary folder
    assert mode(dataset) == folder_mode
    assert {mode(p) for p in dataset.rglob("*") if p.is_file()} == {file_mode}


@pytest.fixture
def umask022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.usefixtures("umask022")
def test_ingest_output_honours_the_umask(tmp_path: Path) -> None:
    paper = write_paper(tmp_path / "paper", {"main.tex": MINIMAL_MAIN})
    result = runner.invoke(app, ["ingest", str(paper), "-o", str(tmp_path / "ing")])
    assert result.exit_code == 0, result.output
    assert mode(tmp_path / "ing" / "papers.jsonl") == 0o644


@pytest.mark.slow  # loads the offline judge's embedding model
@pytest.mark.usefixtures("umask022")
def test_score_output_honours_the_umask(tmp_path: Path) -> None:
    instances = tmp_path / "instances.jsonl"
    write_jsonl(instances, [an_instance()])
    answers = tmp_path / "answers.jsonl"
    answer = {"instance_id": an_instance().id, "answer": "Route queries to key blocks."}
    answers.write_text(json.dumps(answer) + "\n", encoding="utf-8")
    scores = tmp_path / "scores.jsonl"
    args = ["score", str(instances), str(answers), "-o", str(scores), "--judge", "offline"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert mode(scores) == 0o644


REVIEW_TEXT = """# Learning to Route Attention

ABSTRACT

We route attention to a few key blocks and evaluate the cost on long documents.

1 INTRODUCTION

Attention is expensive for long inputs. We propose block routing and measure it.
"""


def modes_under(folder: Path) -> tuple[set[int], set[int]]:
    files = {mode(p) for p in folder.rglob("*") if p.is_file()}
    folders = {mode(p) for p in [folder, *folder.rglob("*")] if p.is_dir()}
    return files, folders


def test_review_and_review_eval_outputs_honour_the_umask(tmp_path: Path, umask: int) -> None:
    file_mode, folder_mode = MODES[umask]
    papers = tmp_path / "papers"
    papers.mkdir()
    for index in range(2):
        (papers / f"p{index}.txt").write_text(REVIEW_TEXT + f"\nPaper {index}.\n", "utf-8")
    out = tmp_path / "reviews"
    result = runner.invoke(app, ["review", str(papers), "-o", str(out), "--reviewer", "offline"])
    assert result.exit_code == 0, result.output
    assert modes_under(out) == ({file_mode}, {folder_mode})
    ratings = tmp_path / "ratings.tsv"
    ratings.write_text("paper_id\t0\t1\tdecision\np0\t3\t5\tReject\np1\t6\t8\tAccept\n")
    evaluation = tmp_path / "eval"
    args = ["review", "eval", "--ratings", str(ratings), "--papers", str(papers)]
    args += ["--reviews", str(out / "reviews.jsonl"), "--no-leak", "-o", str(evaluation)]
    result = runner.invoke(app, [*args, "review.resamples=10"])
    assert result.exit_code == 0, result.output
    assert modes_under(evaluation) == ({file_mode}, {folder_mode})


@pytest.mark.usefixtures("umask022")
def test_write_prepare_output_honours_the_umask(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[1] / "examples" / "papers"
    out = tmp_path / "data"
    result = runner.invoke(app, ["write", "prepare", str(examples), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert modes_under(out) == ({0o644}, {0o755})
    assert (out / "sft.jsonl").is_file()


@pytest.mark.usefixtures("umask022")
def test_review_fit_outputs_honour_the_umask(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    rows = ["paper_id\t0\t1\tdecision"]
    for index in range(10):
        accepted = index % 2 == 0
        words = "theorem proof bound" if accepted else "heuristic trick guess"
        text = REVIEW_TEXT + f"\n2 METHOD\n\nNumber {index}: " + f"{words} method data " * 40
        (papers / f"p{index}.txt").write_text(text, encoding="utf-8")
        ratings = "6\t8" if accepted else "3\t5"
        rows.append(f"p{index}\t{ratings}\t{'Accept' if accepted else 'Reject'}")
    ratings_file = tmp_path / "ratings.tsv"
    ratings_file.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out, oof = tmp_path / "fit" / "baseline.json", tmp_path / "fit" / "oof.csv"
    args = ["review", "fit", "--ratings", str(ratings_file), "--papers", str(papers)]
    args += ["-o", str(out), "--oof", str(oof), "--folds", "2", "--alpha", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (mode(out), mode(oof)) == (0o644, 0o644)
