"""The synthetic paper generator: deterministic, varied, and read and built like real sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.ingestion import ingest_sources
from papergym.jsonl import read_jsonl
from papergym.records import Instance
from papergym.sources.synthetic import METADATA_EVERY, write_corpus


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_same_seed_writes_the_same_files_and_another_seed_others(tmp_path: Path) -> None:
    write_corpus(tmp_path / "a", 4, seed=7)
    write_corpus(tmp_path / "b", 4, seed=7)
    write_corpus(tmp_path / "c", 4, seed=8)
    first = _files(tmp_path / "a")
    assert first == _files(tmp_path / "b")
    other = _files(tmp_path / "c")
    shared = set(first) & set(other)
    assert shared and all(first[name] != other[name] for name in shared if name.endswith(".tex"))


def test_a_larger_corpus_extends_a_smaller_one(tmp_path: Path) -> None:
    small = write_corpus(tmp_path / "small", 3, seed=1)
    large = write_corpus(tmp_path / "large", 6, seed=1)
    assert [p.name for p in small] == [p.name for p in large[:3]]
    assert all(_files(a) == _files(b) for a, b in zip(small, large, strict=False))


def test_papers_differ_and_carry_what_arxiv_sources_carry(tmp_path: Path) -> None:
    folders = write_corpus(tmp_path, 6)
    mains = [(f / "main.tex").read_text(encoding="utf-8") for f in folders]
    assert len(set(mains)) == len(mains)
    for folder, main in zip(folders, mains, strict=True):
        whole = main + "".join(p.read_text() for p in (folder / "sections").glob("*.tex"))
        assert "\\input{sections/" in main and "\\bibliography{refs}" in main
        assert 5 <= whole.count("\\section{") <= 8 and "\\subsection{" in whole
        assert "\\begin{equation}" in whole and "$" in whole and "\\cite{" in whole
        assert "\\includegraphics" in whole and "\n%" in whole
        assert (folder / "refs.bib").read_text().count("@article{") >= 4
    with_metadata = [f for f in folders if (f / "metadata.json").is_file()]
    assert len(with_metadata) == len(range(0, 6, METADATA_EVERY))
    record = json.loads((with_metadata[0] / "metadata.json").read_text())
    assert record["id"] == with_metadata[0].name and record["categories"]


def test_generated_papers_ingest_with_their_inputs_and_ids(tmp_path: Path) -> None:
    folders = write_corpus(tmp_path, 6)
    report = ingest_sources([tmp_path])
    assert report.failures == [] and len(report.papers) == 6
    for paper in report.papers:
        assert len(paper.sections) >= 5 and paper.abstract and paper.title
        assert any(f.startswith("sections/") for f in paper.meta.files_read)
    ids = {p.meta.arxiv_id for p in report.papers if p.meta.arxiv_id}
    assert ids == {f.name for f in folders if (f / "metadata.json").is_file()}


@pytest.mark.slow
def test_the_offline_build_makes_an_instance_of_each_generated_paper(tmp_path: Path) -> None:
    write_corpus(tmp_path / "papers", 3, seed=3)
    out = tmp_path / "out"
    args = ["build", str(tmp_path / "papers"), "-o", str(out), "--builder", "extractive"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    instances = read_jsonl(out / "instances.jsonl", Instance)
    assert len(instances) == 3
    assert all(len(i.rubric.specific) >= 3 for i in instances)
