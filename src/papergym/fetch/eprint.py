"""What an e-print download holds, told by its first bytes, and unpacking it into a paper folder.

arXiv serves a source as a gzipped tarball, a gzipped single ``.tex``, occasionally a plain
tarball or ``.tex``; a paper submitted as PDF only answers a PDF. A server in trouble (or a
mirror's error page) answers HTML: that is a failure, never a paper. A withdrawn paper's source
is often a few lines saying so.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Literal

from papergym.errors import BadInputError
from papergym.sources.archive import ArchiveLimits, extract_archive

EprintKind = Literal["tar.gz", "tex.gz", "tar", "tex", "pdf", "html", "unknown"]
TEX_FILE = "main.tex"
"""The name a single-file source is given (arXiv serves it without one)."""
WITHDRAWN_MAX_BYTES = 4096
"""A single-file source this short that says "withdrawn" is a withdrawal note, not a paper."""
_WITHDRAWN = re.compile(rb"withdrawn|withdraw this paper", re.I)
_HTML = re.compile(rb"^\s*(?:<!doctype html|<html|<head|<body)", re.I)


class NotASource(Exception):
    """The download is not a LaTeX source: ``status`` (pdf_only, withdrawn, failed) and why."""

    def __init__(self, status: Literal["pdf_only", "withdrawn", "failed"], reason: str) -> None:
        self.status = status
        self.reason = reason
        super().__init__(reason)


def sniff(path: Path) -> EprintKind:
    """The kind of the file at ``path``, from its first bytes (and a gzip's first member)."""
    with path.open("rb") as handle:
        head = handle.read(1024)
    if head.startswith(b"\x1f\x8b"):
        inner = _gunzip_head(path)
        return "tar.gz" if _is_tar(inner) else "tex.gz"
    if head.startswith(b"%PDF"):
        return "pdf"
    if _is_tar(head):
        return "tar"
    if _HTML.match(head):
        return "html"
    if head and b"\x00" not in head:
        return "tex"
    return "unknown"


def unpack(download: Path, folder: Path, limits: ArchiveLimits) -> Path:
    """Put the paper of ``download`` into the empty ``folder`` and return the folder that holds
    it: a tarball unpacked safely with ingestion's limits (descending into a lone top folder,
    as ingestion does), a single file as ``main.tex``. Raises :class:`NotASource` for a PDF, an
    HTML page, a withdrawal note or bytes of no known kind."""
    kind = sniff(download)
    if kind == "pdf":
        raise NotASource("pdf_only", "pdf only, no source")
    if kind == "html":
        raise NotASource("failed", "the server answered an HTML page, not a source archive")
    if kind == "unknown":
        raise NotASource("failed", "the download is neither a tarball, gzip, PDF nor text")
    if kind in ("tar.gz", "tar"):
        try:
            extract_archive(download, folder, limits)
        except BadInputError as error:
            raise NotASource("failed", f"unusable source archive: {error.reason}") from None
        return _lone_top_folder(folder)
    text = _single_file(download, kind, limits.max_member_bytes)
    if len(text) <= WITHDRAWN_MAX_BYTES and _WITHDRAWN.search(text):
        raise NotASource("withdrawn", "withdrawn (the source is a withdrawal note)")
    (folder / TEX_FILE).write_bytes(text)
    return folder


def _lone_top_folder(folder: Path) -> Path:
    """Archives often wrap the paper in one top folder: the paper folder is that one."""
    entries = [p for p in folder.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    while len(entries) == 1 and entries[0].is_dir():
        folder = entries[0]
        entries = [p for p in folder.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    return folder


def _single_file(download: Path, kind: EprintKind, max_bytes: int) -> bytes:
    if kind == "tex":
        return download.read_bytes()[: max_bytes + 1]
    try:
        with gzip.open(download, "rb") as handle:
            text = handle.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise NotASource("failed", f"corrupt gzip: {error}") from None
    if len(text) > max_bytes:
        raise NotASource("failed", f"the source is over {max_bytes} bytes unpacked")
    if b"\x00" in text[:1024]:
        raise NotASource("failed", "the gzipped file is binary, not LaTeX")
    return text


def _gunzip_head(path: Path) -> bytes:
    try:
        with gzip.open(path, "rb") as handle:
            return handle.read(1024)
    except (OSError, EOFError, zlib.error):
        return b""


def _is_tar(block: bytes) -> bool:
    return len(block) >= 262 and block[257:262] == b"ustar"
