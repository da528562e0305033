from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from papergym.fetch.eprint import NotASource, sniff, unpack
from papergym.sources.archive import DEFAULT_LIMITS
from support.arxiv_server import PAPER_TEX, tarball


def _file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "eprint"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (tarball({"main.tex": PAPER_TEX}), "tar.gz"),
        (gzip.compress(PAPER_TEX), "tex.gz"),
        (b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n", "pdf"),
        (b"<!DOCTYPE html><html><body>busy</body></html>", "html"),
        (PAPER_TEX, "tex"),
        (b"\x00\x01\x02binary", "unknown"),
    ],
)
def test_the_kind_is_told_by_the_first_bytes(tmp_path: Path, data: bytes, kind: str) -> None:
    assert sniff(_file(tmp_path, data)) == kind


def test_a_tarball_in_a_top_folder_unpacks_to_that_folder(tmp_path: Path) -> None:
    dest = tmp_path / "paper"
    dest.mkdir()
    root = unpack(
        _file(tmp_path, tarball({"main.tex": PAPER_TEX}, top="src")), dest, DEFAULT_LIMITS
    )
    assert root == dest / "src"
    assert (root / "main.tex").read_bytes() == PAPER_TEX


def test_a_gzipped_single_file_becomes_main_tex(tmp_path: Path) -> None:
    dest = tmp_path / "paper"
    dest.mkdir()
    assert unpack(_file(tmp_path, gzip.compress(PAPER_TEX)), dest, DEFAULT_LIMITS) == dest
    assert (dest / "main.tex").read_bytes() == PAPER_TEX


@pytest.mark.parametrize(
    ("data", "status", "words"),
    [
        (b"%PDF-1.4\n", "pdf_only", "pdf only"),
        (b"<html><head></head><body>error</body></html>", "failed", "HTML"),
        (
            gzip.compress(b"This paper has been withdrawn by the author.\n"),
            "withdrawn",
            "withdrawn",
        ),
        (gzip.compress(b"\x00\x01" * 100), "failed", "binary"),
    ],
)
def test_what_is_not_a_source_says_so(tmp_path: Path, data: bytes, status: str, words: str) -> None:
    dest = tmp_path / "paper"
    dest.mkdir()
    with pytest.raises(NotASource) as caught:
        unpack(_file(tmp_path, data), dest, DEFAULT_LIMITS)
    assert caught.value.status == status
    assert words in caught.value.reason
    assert not any(dest.iterdir())
