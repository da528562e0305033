from __future__ import annotations

import contextlib
import gzip
import io
import os
import tarfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

import papergym
from papergym.errors import BadInputError
from papergym.ingestion import ingest_sources
from papergym.sources.discover import discover
from papergym.sources.files import read_text
from support.papers import MINIMAL_MAIN, write_paper

T = TypeVar("T")


def make_tarball(path: Path, files: dict[str, str], top: str = "") -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_ingest_a_paper_folder(minimal_paper: Path) -> None:
    [paper] = papergym.ingest(minimal_paper)
    assert paper.title == "A Minimal Paper"
    assert paper.abstract.startswith("We study a small question")
    assert [s.heading for s in paper.sections] == ["Introduction", "Method"]
    assert paper.meta.main_file == "main.tex"
    assert paper.meta.source_path == str(minimal_paper)


def test_ingest_a_single_tex_file_resolves_its_siblings(tmp_path: Path) -> None:
    main = MINIMAL_MAIN.replace(r"\section{Method}", r"\input{method}")
    write_paper(tmp_path, {"paper.tex": main, "method.tex": "\\section{Method}\nRouting."})
    [paper] = papergym.ingest(tmp_path / "paper.tex")
    assert [s.heading for s in paper.sections] == ["Introduction", "Method"]
    assert paper.meta.main_file_reason == "given as the source"


def test_ingest_an_arxiv_tarball_with_id_and_date(tmp_path: Path) -> None:
    archive = make_tarball(
        tmp_path / "2301.01234v2.tar.gz", {"main.tex": MINIMAL_MAIN, "x.sty": ""}
    )
    [paper] = papergym.ingest(archive)
    assert paper.title == "A Minimal Paper"
    assert paper.meta.arxiv_id == "2301.01234v2"
    assert paper.meta.date == "2023-01"
    assert paper.meta.main_file == "main.tex"


def test_ingest_a_tarball_wrapping_a_top_folder(tmp_path: Path) -> None:
    archive = make_tarball(tmp_path / "p.tgz", {"main.tex": MINIMAL_MAIN}, top="paper/")
    [paper] = papergym.ingest(archive)
    assert paper.meta.main_file == "main.tex"


def test_ingest_a_single_gzipped_tex(tmp_path: Path) -> None:
    archive = tmp_path / "1706.03762"
    archive.write_bytes(gzip.compress(MINIMAL_MAIN.encode()))
    [paper] = papergym.ingest(archive)
    assert paper.meta.arxiv_id == "1706.03762"
    assert [s.heading for s in paper.sections] == ["Introduction", "Method"]


def test_folder_of_papers_mixes_folders_archives_and_skips_bad_ones(tmp_path: Path) -> None:
    collection = tmp_path / "papers"
    write_paper(collection / "good", {"main.tex": MINIMAL_MAIN})
    make_tarball(
        collection / "2302.00001.tar.gz", {"main.tex": MINIMAL_MAIN.replace("Minimal", "Second")}
    )
    (collection / "broken.tar.gz").write_bytes(b"\x1f\x8b\x08\x00garbage-not-gzip")
    write_paper(collection / "figures-only", {"plot.txt": "not latex"})
    (collection / "index.json").write_text("{}")  # ignored: not a paper
    report = ingest_sources([collection])
    assert sorted(p.title for p in report.papers) == ["A Minimal Paper", "A Second Paper"]
    failed = {Path(f.source).name: f.reason for f in report.failures}
    assert set(failed) == {"broken.tar.gz", "figures-only"}
    assert "corrupt archive" in failed["broken.tar.gz"]
    assert "no .tex file" in failed["figures-only"]
    assert all(f.kind == "bad_input" for f in report.failures)


def test_same_paper_twice_is_kept_once(minimal_paper: Path, tmp_path: Path) -> None:
    copy = write_paper(tmp_path / "copy", {"main.tex": MINIMAL_MAIN})
    report = ingest_sources([minimal_paper, copy])
    assert len(report.papers) == 1
    assert "duplicate of" in report.failures[0].reason


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda p: p / "missing", "no such file or folder"),
        (lambda p: (p / "empty").mkdir() or p / "empty", "empty folder"),
        (
            lambda p: (p / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00") and p / "img.png",
            "binary file",
        ),
        (lambda p: (p / "notes.md").write_text("# just notes") and p / "notes.md", "not LaTeX"),
        (lambda p: (p / "e.tex").write_text("") is not None and p / "e.tex", "empty file"),
    ],
)
def test_bad_sources_raise_one_line_errors_naming_the_file(
    setup, reason: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    source = setup(tmp_path)
    with pytest.raises(BadInputError) as caught:
        papergym.ingest(source)
    message = str(caught.value)
    assert reason in message
    assert "\n" not in message
    assert str(source.name) in message


def test_binary_file_named_tex_inside_a_paper_is_refused(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_bytes(b"\x00\x01\x02binary" * 100)
    with pytest.raises(BadInputError, match="binary"):
        papergym.ingest(tmp_path)


def test_bad_member_inside_archive_is_named_by_archive_not_temp_path(tmp_path: Path) -> None:
    archive = make_tarball(tmp_path / "p.tar.gz", {"notes.txt": "nothing here"})
    with pytest.raises(BadInputError) as caught:
        papergym.ingest(archive)
    assert str(caught.value).startswith(str(archive))
    assert "papergym-" not in str(caught.value)


def test_discover_one_paper_folder_vs_collection(minimal_paper: Path, tmp_path: Path) -> None:
    assert [s.kind for s in discover(minimal_paper)] == ["folder"]
    assert [s.path for s in discover(minimal_paper.parent)] == [minimal_paper]


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def within(seconds: float, fifos: list[Path], call: Callable[[], T]) -> T:
    """``call()``, failing (not hanging) after ``seconds``; a reader stuck on a FIFO is freed."""
    outcome: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:
            errors.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    hung = worker.is_alive()
    for fifo in fifos:  # a writer that opens and closes gives a blocked reader end-of-file
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    worker.join(5)
    assert not hung, f"still running after {seconds} s (blocked on a FIFO)"
    if errors:
        raise errors[0]
    return outcome[0]


@needs_fifo
def test_a_fifo_named_tex_in_a_paper_folder_is_not_read(tmp_path: Path) -> None:
    paper = write_paper(tmp_path / "paper", {"main.tex": MINIMAL_MAIN})
    fifos = [paper / "stuck.tex", paper / "sub" / "also.tex"]
    (paper / "sub").mkdir()
    for fifo in fifos:
        os.mkfifo(fifo)
    [paper_record] = within(5, fifos, lambda: papergym.ingest(paper))
    assert paper_record.title == "A Minimal Paper"
    assert paper_record.meta.files_read == ("main.tex",)


@needs_fifo
def test_fifos_as_input_style_and_sibling_source_are_skipped(tmp_path: Path) -> None:
    main = MINIMAL_MAIN.replace(r"\begin{document}", "\\usepackage{macros}\n\\begin{document}")
    main = main.replace(r"\section{Method}", "\\input{method}\n\\section{Method}")
    folder = tmp_path / "papers"
    write_paper(folder / "a", {"main.tex": main})
    fifos = [folder / "a" / "method.tex", folder / "a" / "macros.sty", folder / "b.tex"]
    for fifo in fifos:
        os.mkfifo(fifo)
    report = within(5, fifos, lambda: ingest_sources([folder]))
    [paper] = report.papers
    assert "unresolved \\input{method} in main.tex" in paper.meta.warnings
    assert not report.failures  # the FIFO b.tex is neither a paper nor an error


@needs_fifo
def test_read_text_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "x.tex"
    os.mkfifo(fifo)
    with pytest.raises(BadInputError, match="not a regular file"):
        within(5, [fifo], lambda: read_text(fifo))
