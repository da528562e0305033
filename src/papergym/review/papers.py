"""The papers ``papergym review`` reads: anything ``papergym ingest`` reads (LaTeX folders,
``.tex`` files, arXiv e-prints and archives, folders of those), plus plain-text and markdown
papers (``.txt``, ``.md``: PDF-to-text extractions such as the shared ICLR set), one file each or
a folder of them. Every paper is read before anything is written, so a bad one stops the run
with one line naming it and nothing half-written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from papergym.errors import BadInputError
from papergym.ingestion import read_paper
from papergym.recipes.reading import relative_source
from papergym.records import Paper
from papergym.sources.archive import is_archive
from papergym.sources.discover import discover
from papergym.sources.files import SNIFF_BYTES, decode_text, refuse_link_out

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown"})
"""Files read as the paper's text itself."""

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip", ".gz")
MAX_TEXT_BYTES = 20_000_000
"""A longer text file is refused (a paper is well under 1 MB of text)."""
MAX_NUL_SHARE = 0.01
"""Share of NUL bytes in a text file's first bytes above which it is binary (UTF-16, images)."""


@dataclass(frozen=True)
class PaperText:
    """One paper to review: its id (the file or folder name without suffix), where it came
    from, and its text."""

    paper_id: str
    source: str
    text: str
    shown: str = ""
    """Where it came from as its record says: relative to the PAPER argument it was found in, or
    the argument's own name (as builds name their sources); no local path is kept."""


def paper_id_of(path: Path) -> str:
    """The id of the paper at ``path``: its name without the archive or text suffix."""
    name = path.name
    for suffix in (*ARCHIVE_SUFFIXES, *sorted(TEXT_SUFFIXES), ".tex"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def render_paper(paper: Paper) -> str:
    """An ingested LaTeX paper as markdown-like text: title, abstract, headed sections, and an
    "Appendix" heading before the first appendix section (so fitting can drop appendices)."""
    parts = [f"# {paper.title}".rstrip()] if paper.title else []
    if paper.abstract:
        parts.append(f"Abstract\n\n{paper.abstract}")
    in_appendix = False
    for section in paper.sections:
        if section.appendix and not in_appendix:
            parts.append("## Appendix")
            in_appendix = True
        marks = "#" * min(6, max(2, section.level + 1))  # \section is level 1: "##"
        parts.append(f"{marks} {section.heading}\n\n{section.text}".rstrip())
    return "\n\n".join(parts).strip()


def read_paper_text(path: Path) -> str:
    """A text paper's content. PDF-to-text extractions now and then carry a stray NUL byte (the
    shared ICLR set has one with two), which :func:`~papergym.sources.files.looks_binary` alone
    would take for a binary file; so stray NULs are dropped, and a file is binary when more than
    :data:`MAX_NUL_SHARE` of its first bytes are NUL or it looks binary without them."""
    if not path.is_file():
        raise BadInputError(path, "not a regular file")
    size = path.stat().st_size
    if size > MAX_TEXT_BYTES:
        raise BadInputError(path, f"file too large ({size} bytes, limit {MAX_TEXT_BYTES})")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BadInputError(path, f"cannot read: {error.strerror or error}") from None
    head = data[:SNIFF_BYTES]
    if head and head.count(0) / len(head) > MAX_NUL_SHARE:
        raise BadInputError(path, "binary file, not text")
    return decode_text(data.replace(b"\x00", b""), path)


def _text_paper(path: Path, folder: Path | None = None) -> PaperText:
    """The paper in the text file at ``path``; one found in ``folder`` must not be a link
    leading out of it (it would be read and sent to the reviewer's endpoint)."""
    if folder is not None:
        refuse_link_out(path, folder)
    text = read_paper_text(path)  # refuses binary, oversized and unreadable files, naming them
    if not text.strip():
        raise BadInputError(path, "empty file: no paper text")
    return PaperText(paper_id_of(path), str(path), text)


def _latex_papers(path: Path) -> list[PaperText]:
    found = []
    for source in discover(path):
        paper = read_paper(source)
        text = render_paper(paper)
        if not text.strip():
            raise BadInputError(
                source.path, "no text: the LaTeX source holds no title, abstract or section"
            )
        found.append(PaperText(paper_id_of(source.path), str(source.path), text))
    return found


def _folder_papers(folder: Path) -> list[PaperText]:
    children = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
    if any(p.is_file() and p.suffix.lower() == ".tex" for p in children):
        return _latex_papers(folder)  # one LaTeX paper
    texts = [
        _text_paper(p, folder)
        for p in children
        if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
    ]
    others = [p for p in children if p.is_dir() or (p.is_file() and is_archive(p))]
    if not texts or others:
        texts += _latex_papers(folder)
    return texts


def load_papers(paths: list[Path]) -> list[PaperText]:
    """Every paper under ``paths``, in order; the first bad one is a :class:`BadInputError`,
    and two papers with the same id are refused (resuming finds a paper by its id)."""
    papers: list[PaperText] = []
    for path in paths:
        if not path.exists():
            raise BadInputError(path, "no such file or folder")
        if path.is_dir():
            found = _folder_papers(path)
        elif path.suffix.lower() in TEXT_SUFFIXES:
            found = [_text_paper(path)]
        else:
            found = _latex_papers(path)
        papers += [replace(p, shown=relative_source(p.source, [path])) for p in found]
    seen: dict[str, str] = {}
    for paper in papers:
        if paper.paper_id in seen:
            raise BadInputError(
                paper.source, f"paper id {paper.paper_id!r} also names {seen[paper.paper_id]}"
            )
        seen[paper.paper_id] = paper.source
    return papers
