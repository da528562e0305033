"""Ingestion: paper sources on disk → :class:`~papergym.records.Paper` records.

``ingest(path)`` is the one-call API; :func:`ingest_sources` is what the CLI uses, and reports
each paper that could not be read instead of stopping at the first.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from papergym.errors import BadInputError
from papergym.records import Paper, PaperMeta
from papergym.sources.archive import ArchiveLimits, extract_archive
from papergym.sources.arxiv import arxiv_date, arxiv_id_from_name
from papergym.sources.discover import PaperSource, discover
from papergym.sources.fetched import FetchedMetadata, read_fetched_metadata
from papergym.sources.latex import LatexDocument, read_latex_paper


@dataclass(frozen=True)
class IngestFailure:
    """A source that could not be read, and why (``kind``: bad input or our own bug)."""

    source: str
    reason: str
    kind: Literal["bad_input", "internal"] = "bad_input"


@dataclass
class IngestReport:
    """Papers read and sources that failed, in the order given."""

    papers: list[Paper] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)


def read_paper(source: PaperSource, limits: ArchiveLimits | None = None) -> Paper:
    """Read one paper from a folder, a ``.tex`` file or an archive; one found in a folder of
    papers must not be a link leading out of it."""
    source.check_inside()
    if source.kind == "archive":
        with tempfile.TemporaryDirectory(prefix="papergym-") as tmp:
            try:
                root = _paper_root(
                    extract_archive(source.path, Path(tmp), limits or ArchiveLimits())
                )
                return _to_paper(source, read_latex_paper(root))
            except BadInputError as error:
                raise _inside_archive(error, source.path, Path(tmp)) from error
    if source.kind == "tex":  # a .tex named on the command line may be a link: its target's folder
        main = source.path.resolve()
        return _to_paper(source, read_latex_paper(main.parent, main_file=main))
    return _to_paper(source, read_latex_paper(source.path))


def _inside_archive(error: BadInputError, archive: Path, tmp: Path) -> BadInputError:
    """Name a file inside an archive as ``archive:member``, never by its temporary path."""
    if error.path is None:
        return error
    try:
        member = Path(error.path).resolve().relative_to(tmp.resolve()).as_posix()
    except ValueError:
        return error
    return BadInputError(f"{archive}:{member}" if member != "." else archive, error.reason)


def _paper_root(folder: Path) -> Path:
    """Archives often wrap the paper in one top folder; descend into it."""
    entries = [p for p in folder.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    while len(entries) == 1 and entries[0].is_dir():
        folder = entries[0]
        entries = [p for p in folder.iterdir() if not p.name.startswith((".", "__MACOSX"))]
    return folder


def _to_paper(source: PaperSource, doc: LatexDocument) -> Paper:
    fetched = read_fetched_metadata(source.path) if source.kind == "folder" else None
    if fetched is not None:  # what arXiv stated beats what the folder's name suggests
        arxiv_id: str | None = fetched.versioned_id
        date = fetched.submitted or arxiv_date(fetched.id)
    else:
        arxiv_id = arxiv_id_from_name(source.path.name)
        date = arxiv_date(arxiv_id) if arxiv_id else None
    meta = PaperMeta(
        source_path=str(source.path),
        main_file=doc.main_file,
        main_file_reason=doc.main_file_reason,
        arxiv_id=arxiv_id,
        date=date,
        licence=fetched.licence if fetched else None,
        files_read=tuple(doc.files),
        warnings=tuple(doc.warnings),
    )
    return Paper.create(
        title=doc.title or _fetched_title(fetched),
        abstract=doc.abstract,
        sections=tuple(doc.sections),
        meta=meta,
    )


def _fetched_title(fetched: FetchedMetadata | None) -> str:
    """arXiv's title, for a fetched paper whose LaTeX states none."""
    return fetched.title if fetched else ""


def ingest_sources(
    paths: Sequence[str | Path],
    *,
    limits: ArchiveLimits | None = None,
    on_paper: Callable[[PaperSource], None] | None = None,
    on_discovered: Callable[[int], None] | None = None,
) -> IngestReport:
    """Read every paper under ``paths``; bad papers are reported in ``failures`` and skipped.

    A path that does not exist or holds no LaTeX at all is a failure too. Papers with the same
    content (the same id) are kept once.
    """
    report = IngestReport()
    sources: list[PaperSource] = []
    for path in paths:
        try:
            sources.extend(discover(Path(path)))
        except BadInputError as error:
            report.failures.append(IngestFailure(str(path), error.reason))
    if on_discovered:
        on_discovered(len(sources))
    seen: dict[str, str] = {}
    for source in sources:
        try:
            paper = read_paper(source, limits)
        except BadInputError as error:
            report.failures.append(IngestFailure(str(source.path), _reason(error, source)))
        except Exception as error:  # one paper's bug must not lose the others' work
            report.failures.append(
                IngestFailure(
                    str(source.path), f"internal error: {type(error).__name__}: {error}", "internal"
                )
            )
        else:
            if paper.id in seen:
                report.failures.append(
                    IngestFailure(str(source.path), f"duplicate of {seen[paper.id]} (same content)")
                )
            else:
                seen[paper.id] = str(source.path)
                report.papers.append(paper)
        if on_paper:
            on_paper(source)
    return report


def _reason(error: BadInputError, source: PaperSource) -> str:
    """The reason, naming the file inside the paper when it is not the source itself."""
    if error.path and Path(error.path) != source.path:
        return f"{error.path}: {error.reason}"
    return error.reason


def ingest(*paths: str | Path, limits: ArchiveLimits | None = None) -> list[Paper]:
    """Read the papers under ``paths``: paper folders, ``.tex`` files, archives, folders of papers.

    Raises :class:`BadInputError` for the first source that cannot be read; use
    :func:`ingest_sources` to skip bad papers and collect the reasons instead. Papers with the
    same content are returned once.
    """
    papers: dict[str, Paper] = {}
    for path in paths:
        for source in discover(Path(path)):
            paper = read_paper(source, limits)
            papers.setdefault(paper.id, paper)
    return list(papers.values())
