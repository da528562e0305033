"""Reading a build's sources lazily, and knowing which were read before without parsing them.

``discover`` lists the sources (cheap: directory listings); each is then read only when the runner
reaches it. Every source read is recorded in ``OUT/sources/<key>.json``: its path relative to
SOURCE, a fingerprint of its files and what reading it gave (a paper id, or why it could not be
read). A resumed build whose source still has the recorded fingerprint takes the paper from
``papers/<id>/paper.json`` (or nothing at all, when the paper is finished) instead of parsing the
LaTeX again.

The fingerprint is the one ``git`` uses for its index, in two tiers: sizes and modification times
first (no file is read), then, when they differ, a SHA-256 of names and contents, so a touched or
copied source with the same bytes is still known.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from papergym.errors import BadInputError
from papergym.ingestion import read_paper
from papergym.jsonl import write_text_atomic
from papergym.records import Paper, content_hash
from papergym.redact import redact
from papergym.sources.discover import PaperSource, discover


class SourceEntry(BaseModel):
    """What reading one source gave; saved as ``OUT/sources/<key>.json``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str  # relative to the SOURCE argument, as in every record
    files: tuple[str, ...]  # the files fingerprinted, relative to the source's root
    stat: str
    content: str
    paper_id: str | None = None
    title: str = ""
    failure: str | None = None  # why no paper could be read (an "ingest" drop)


@dataclass(frozen=True)
class Opened:
    """One source, read now (``paper`` or ``entry.failure`` set) or known from an earlier run."""

    entry: SourceEntry
    paper: Paper | None = None
    known: bool = False


# --- relative paths --------------------------------------------------------------------------------


def relative_source(path: str, roots: Sequence[Path]) -> str:
    """``path`` relative to the SOURCE argument it was found under, or the argument's own name
    when it is the paper itself, so that shared datasets never carry the builder's local paths."""
    found = Path(path)
    for root in sorted(roots, key=lambda r: len(r.parts), reverse=True):
        if found == root:
            return root.name or root.resolve().name
        if found.is_relative_to(root):
            return found.relative_to(root).as_posix()
    return found.name or path


def renamed(text: str, source: str, relative: str) -> str:
    """``text`` with the paper's local path replaced by its relative one (files inside it too)."""
    return text.replace(source, relative) if "/" in source else text


def relative_paper(paper: Paper, relative: str) -> Paper:
    source = paper.meta.source_path
    meta = paper.meta.model_copy(
        update={
            "source_path": relative,
            "warnings": tuple(renamed(w, source, relative) for w in paper.meta.warnings),
        }
    )
    return paper.model_copy(update={"meta": meta})


# --- fingerprints -----------------------------------------------------------------------------------


def _root(source: PaperSource) -> Path:
    return source.path if source.kind == "folder" else source.path.parent


def _listed(source: PaperSource, paper: Paper | None, known: SourceEntry | None) -> tuple[str, ...]:
    """The files that make up a source: a folder's every file; an archive itself; a .tex file
    and the files it read (its folder may hold other papers, which must not count)."""
    if source.kind == "folder":
        root = source.path
        found = (
            Path(top, name).relative_to(root).as_posix()
            for top, _, names in os.walk(root)
            for name in names
        )
        return tuple(sorted(found))
    main = source.path.name
    if source.kind == "archive":
        return (main,)
    read = paper.meta.files_read if paper is not None else known.files if known else ()
    return tuple(dict.fromkeys((main, *read)))


def _stat(root: Path, files: Sequence[str]) -> str | None:
    try:
        stats = [(root / name).stat() for name in files]
    except OSError:
        return None
    return content_hash([[n, s.st_size, s.st_mtime_ns] for n, s in zip(files, stats, strict=True)])


def _content(root: Path, files: Sequence[str]) -> str | None:
    digest = hashlib.sha256()
    try:
        for name in files:
            digest.update(name.encode("utf-8") + b"\0")
            with (root / name).open("rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
    except OSError:
        return None
    return digest.hexdigest()


def _fingerprint(root: Path, files: tuple[str, ...]) -> tuple[str, str]:
    return _stat(root, files) or "", _content(root, files) or ""


# --- the sources of one build ------------------------------------------------------------------------


@dataclass
class SourceReader:
    """The sources of a build in the order they are built (by relative path), read on demand."""

    sources: list[tuple[PaperSource, str]]
    out: Path
    # Sources read before the run (to check that one can be read at all), kept for the run.
    read_ahead: dict[int, Opened] = field(default_factory=dict)

    @classmethod
    def discover(cls, paths: Sequence[Path], out: Path) -> SourceReader:
        """List the sources under ``paths`` (a path holding none is a BadInputError); reads none."""
        roots = [Path(p) for p in paths]
        found = [
            (source, relative_source(str(source.path), roots))
            for root in roots
            for source in discover(root)
        ]
        return cls(sorted(found, key=lambda pair: pair[1]), out)

    def only(self, relatives: Sequence[str]) -> SourceReader:
        """These sources of the listed ones (by relative path), in build order; nothing read."""
        kept = set(relatives)
        return SourceReader([pair for pair in self.sources if pair[1] in kept], self.out)

    def entry_file(self, relative: str) -> Path:
        return self.out / "sources" / f"{content_hash(relative)}.json"

    def prefetch(self, index: int) -> Opened:
        """Open source ``index`` ahead of the run; the run's :meth:`open` takes it from here."""
        self.read_ahead[index] = opened = self.open(index)
        return opened

    def open(self, index: int, *, fresh: bool = False) -> Opened:
        """Source ``index``: known from an earlier run when its fingerprint matches (unless
        ``fresh``), else read now."""
        ahead = self.read_ahead.pop(index, None)
        if ahead is not None and not (fresh and ahead.known):
            return ahead
        source, relative = self.sources[index]
        known = None if fresh else self._known(source, relative)
        if known is not None:
            return Opened(known, known=True)
        try:
            paper: Paper | None = relative_paper(read_paper(source), relative)
            failure = None
        except BadInputError as error:
            paper, failure = None, _reason(error, source)
        except Exception as error:  # one paper's bug must not lose the others' work
            paper, failure = None, f"internal error: {type(error).__name__}: {error}"
        files = _listed(source, paper, None)
        stat, content = _fingerprint(_root(source), files)
        entry = SourceEntry(
            source=relative,
            files=files,
            stat=stat,
            content=content,
            paper_id=paper.id if paper else None,
            title=paper.title if paper else "",
            failure=redact(renamed(failure, str(source.path), relative)) if failure else None,
        )
        return Opened(entry, paper)

    def _known(self, source: PaperSource, relative: str) -> SourceEntry | None:
        path = self.entry_file(relative)
        try:
            entry = SourceEntry.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return None  # never recorded, or a record from a version that wrote another shape
        root, files = _root(source), _listed(source, None, entry)
        if entry.source != relative or files != entry.files:
            return None
        if _stat(root, files) == entry.stat:
            return entry
        content = _content(root, files)
        if content is None or content != entry.content:
            return None
        fresh = entry.model_copy(update={"stat": _stat(root, files) or ""})
        write_text_atomic(path, fresh.model_dump_json())  # next time the cheap tier suffices
        return fresh

    def record(self, opened: Opened) -> None:
        """Save what reading the source gave (after its paper.json, so the entry never points at
        a paper that is not on disk)."""
        if not opened.known:
            path = self.entry_file(opened.entry.source)
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, opened.entry.model_dump_json())


def _reason(error: BadInputError, source: PaperSource) -> str:
    """The reason, naming the file inside the paper when it is not the source itself."""
    if error.path and Path(error.path) != source.path:
        return f"{error.path}: {error.reason}"
    return error.reason
