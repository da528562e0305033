"""What a SOURCE argument holds: one paper, or a folder of many.

A SOURCE is a paper folder (it has ``.tex`` files at its top level), a ``.tex`` file, an archive
(an arXiv e-print, a tar, a zip), or a folder of papers (one per sub-folder or archive).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from papergym.errors import BadInputError
from papergym.sources.archive import is_archive
from papergym.sources.files import leads_out, looks_binary, refuse_link_out

SourceKind = Literal["folder", "tex", "archive"]


@dataclass(frozen=True)
class PaperSource:
    """One paper to read, and how it is stored."""

    path: Path
    kind: SourceKind
    within: Path | None = None
    """The folder of papers it was found in (None: named itself): it must not lead out of it."""

    def check_inside(self) -> None:
        """Refuse a paper that is a link leading out of the folder it was found in (a paper
        named on the command line is read wherever it is)."""
        if self.within is not None:
            refuse_link_out(self.path, self.within)


def discover(source: Path) -> list[PaperSource]:
    """The papers under ``source``; a path that holds none is a :class:`BadInputError`."""
    if not source.exists():
        raise BadInputError(source, "no such file or folder")
    if source.is_file():
        return [_file_source(source)]
    if not source.is_dir():
        raise BadInputError(source, "not a regular file or folder")
    if _has_top_level_tex(source):
        return [PaperSource(source, "folder")]
    children = sorted(p for p in source.iterdir() if not p.name.startswith("."))
    if not children:
        raise BadInputError(source, "empty folder")
    papers = [PaperSource(p, "folder", source) for p in children if p.is_dir()]
    papers += [PaperSource(p, "archive", source) for p in children if p.is_file() and is_archive(p)]
    papers += [
        PaperSource(p, "tex", source)
        for p in children
        if p.is_file() and p.suffix.lower() == ".tex"
    ]
    if not papers:
        raise BadInputError(source, "no LaTeX sources here: no .tex file, paper folder or archive")
    return sorted(papers, key=lambda p: p.path.name)


def _has_top_level_tex(folder: Path) -> bool:
    return any(
        p.is_file() and p.suffix.lower() == ".tex" and not leads_out(p, folder)
        for p in folder.iterdir()
    )


def _file_source(path: Path) -> PaperSource:
    if path.stat().st_size == 0:
        raise BadInputError(path, "empty file")
    if path.suffix.lower() in {".tex", ".ltx", ".latex"}:
        return PaperSource(path, "tex")
    if is_archive(path):
        return PaperSource(path, "archive")
    with path.open("rb") as handle:
        head = handle.read(8192)
    if not head:
        raise BadInputError(path, "empty file")
    if looks_binary(head):
        raise BadInputError(path, "binary file, not LaTeX source or a source archive")
    if b"\\documentclass" in head or b"\\begin{document}" in head or b"\\section" in head:
        return PaperSource(path, "tex")
    raise BadInputError(path, "not LaTeX: expected a .tex file, a paper folder or an archive")
