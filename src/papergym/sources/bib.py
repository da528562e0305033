"""Bibliographies → :class:`Reference` records: ``.bib`` files, ``.bbl`` files and
``\\begin{thebibliography}``.

Ingestion keeps a paper's citations only as ``[cite]``; ``papergym write`` and
``papergym write prepare`` need the references themselves (key, title, authors, year, venue and,
where the bibliography has one, the abstract). :func:`read_bib` reads a ``.bib`` given by the
user (with ``bibtexparser``); :func:`references_of` finds and reads the bibliography a LaTeX
paper uses (its ``\\bibliography{}``/``\\addbibresource{}`` files, else its ``.bbl``, else an
inline ``thebibliography``) and keeps the references the paper cites, in citation order.

A ``.bib`` is split into entries by ``bibtexparser`` (in pieces, so a 100,000-entry file never
has all its objects alive at once), and each field value is read as BibTeX reads it
(:mod:`papergym.sources.bibvalue`: ``@string`` macros and ``#`` concatenation). Nothing is lost
silently: entries without a title are dropped and counted (a reference is known by its title),
entries that cannot be parsed are listed with their line and reason
(:attr:`BibParse.failures`), and repeated keys are counted. A ``.bib`` that does not parse, has
no entries, or has fewer usable entries than asked for is a :class:`BadInputError`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bibtexparser.entrypoint import parse_string
from bibtexparser.library import Library
from bibtexparser.model import (
    DuplicateBlockKeyBlock,
    DuplicateFieldKeyBlock,
    Entry,
    ParsingFailedBlock,
)

from papergym.errors import BadInputError
from papergym.records import Record
from papergym.sources.bibvalue import BadBibValue, bib_value
from papergym.sources.files import leads_out, read_text
from papergym.sources.latex.blocks import find_commands, find_environments
from papergym.sources.latex.flatten import document_body, find_main_file, flatten, read_source
from papergym.sources.latex.scan import read_group, strip_comments
from papergym.sources.latex.totext import CITE_COMMANDS, inline_text, latex_to_text

Origin = Literal["bib", "bbl", "thebibliography"]

_VENUE_FIELDS = (
    "journal",
    "journaltitle",
    "booktitle",
    "howpublished",
    "publisher",
    "school",
    "institution",
    "organization",
    "series",
)
_CITES = {name: "*[[{" for name in (*CITE_COMMANDS, "nocite")}
_BIB_COMMANDS = {
    "bibliography": "{",
    "nobibliography": "{",
    "addbibresource": "[{",
    "addglobalbib": "[{",
}


class Reference(Record):
    """One entry of a bibliography, as plain text."""

    key: str
    title: str
    authors: tuple[str, ...] = ()
    year: str | None = None
    abstract: str | None = None
    venue: str | None = None
    origin: Origin = "bib"


@dataclass(frozen=True)
class BibFailure:
    """One entry (or other block) of a ``.bib`` that could not be read, and why."""

    line: int  # 1-based, where the block starts
    key: str | None  # the entry's key, when it got that far
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"

    @property
    def described(self) -> str:
        """The failure with the entry's key, for listings: ``key (line 3: reason)``."""
        return f"{self.key or '(no key)'} ({self})"


@dataclass(frozen=True)
class BibParse:
    """What one bibliography held: the usable references and what was left out, counted."""

    references: tuple[Reference, ...]
    untitled: tuple[str, ...] = ()  # keys dropped for want of a title
    failed_blocks: int = 0  # entries that could not be parsed (bibtexparser's or ours)
    duplicates: int = 0  # entries whose key came earlier (the first is kept)
    first_failure: str = ""
    skipped: int = 0  # entries left unread: not among the keys asked for
    unconverted: tuple[str, ...] = ()  # keys of titled entries past ``limit``, left as LaTeX
    failures: tuple[BibFailure, ...] = ()
    strings: Mapping[str, str] = field(default_factory=dict)  # @string macros, lower-case names

    @property
    def keys(self) -> frozenset[str]:
        """Every usable key: the converted references' and the unconverted ones'."""
        return frozenset(r.key for r in self.references) | frozenset(self.unconverted)

    @property
    def usable(self) -> int:
        """Entries with a key and a title, converted or not."""
        return len(self.references) + len(self.unconverted)


# --- .bib -------------------------------------------------------------------------------------

_BLOCK_START = re.compile(r"^@[A-Za-z]+[ \t]*[{(]", re.MULTILINE)
_ENTRY_START = re.compile(r"@\s*[A-Za-z]+\s*[{(]\s*([^,\s{}()]*)")
CHUNK_CHARS = 1 << 20
"""A .bib is handed to bibtexparser in pieces of about this many characters, so that its
objects for a 100,000-entry file are never all alive at once."""


def _field_text(value: str) -> str:
    return inline_text(value)


def _authors(value: str) -> tuple[str, ...]:
    names = re.split(r"\s+and\s+", value.strip())
    return tuple(text for name in names if (text := _field_text(name)))


def _year(fields: dict[str, str]) -> str | None:
    for name in ("year", "date"):
        found = re.search(r"\d{4}", fields.get(name, ""))
        if found:
            return found.group()
    return None


def _entry_fields(entry: Entry, strings: Mapping[str, str]) -> dict[str, str]:
    """The entry's fields by lower-case name (BibDesk writes ``Title = {...}``), their values
    read (:func:`bib_value`). Raises :class:`BadBibValue` naming the field."""
    fields: dict[str, str] = {}
    for item in entry.fields:
        name = item.key.lower()
        if name in fields:  # a repeated field: BibTeX warns and keeps the first
            continue
        try:
            fields[name] = bib_value(str(item.value), strings)
        except BadBibValue as error:
            raise BadBibValue(f"field {item.key}: {error}") from None
    return fields


def _has_title(fields: dict[str, str]) -> bool:
    """Whether the title holds any text, judged without converting it (cheap)."""
    return bool(re.sub(r"[\s{}~]+", "", fields.get("title", "")))


def _entry_reference(key: str, fields: dict[str, str]) -> Reference | None:
    title = _field_text(fields.get("title", ""))
    if not title:
        return None
    abstract = latex_to_text(fields["abstract"]) if fields.get("abstract") else None
    venue = next((v for name in _VENUE_FIELDS if (v := _field_text(fields.get(name, "")))), None)
    return Reference(
        key=key,
        title=title,
        authors=_authors(fields.get("author", "") or fields.get("editor", "")),
        year=_year(fields),
        abstract=abstract or None,
        venue=venue,
        origin="bib",
    )


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """(lines before it, text) for consecutive pieces of ``text`` of about
    :data:`CHUNK_CHARS`, each cut just before a line that opens a block (``@article{``) where
    the braces so far balance (or, for a broken file, where the piece has grown 4 times too
    long: bibtexparser would stop the broken entry at that block anyway)."""
    start = line = 0
    while start < len(text):
        end, pos, balance = len(text), start, 0
        found = _BLOCK_START.search(text, start + CHUNK_CHARS)
        while found is not None:
            part = text[pos : found.start()]
            balance += part.count("{") - part.count("}")
            pos = found.start()
            if balance == 0 or pos - start > 4 * CHUNK_CHARS:
                end = pos
                break
            found = _BLOCK_START.search(text, pos + 1)
        piece = text[start:end]
        yield line, piece
        line += piece.count("\n")
        start = end


def _parser_failure(block: ParsingFailedBlock, lines_before: int) -> BibFailure:
    error = block.error
    reason = getattr(error, "abort_reason", None) or str(error) or type(error).__name__
    found = _ENTRY_START.match(block.raw or "")
    return BibFailure(
        line=lines_before + (block.start_line or 0) + 1,
        key=(found.group(1) or None) if found else None,
        reason=" ".join(str(reason).split()),
    )


def _library(text: str) -> Library:
    logger = logging.getLogger("bibtexparser")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # its per-block warnings go to our counts instead
    try:
        # no middleware: values come raw, and bib_value reads them (concatenation included)
        return parse_string(text, parse_stack=[])
    finally:
        logger.setLevel(level)


class _BibReader:
    """Reads a .bib piece by piece (:func:`_chunks`), keeping what :class:`BibParse` reports."""

    def __init__(
        self, only: Collection[str] | None, limit: int | None, strings: Mapping[str, str]
    ) -> None:
        self.only = only
        self.limit = limit
        self.strings = dict(strings)
        self.references: dict[str, Reference] = {}
        self.unconverted: dict[str, None] = {}
        self.untitled: list[str] = []
        self.seen: set[str] = set()
        self.failures: list[BibFailure] = []
        self.duplicates = self.skipped = 0

    def read(self, library: Library, lines_before: int) -> None:
        for macro in library.strings:  # each may use the ones before it
            try:
                self.strings[macro.key.lower()] = bib_value(str(macro.value), self.strings)
            except BadBibValue as error:
                line = lines_before + (macro.start_line or 0) + 1
                self.failures.append(BibFailure(line, macro.key, f"@string: {error}"))
        # an entry that repeats a field (two doi = ...) is a failed block to bibtexparser;
        # BibTeX keeps the first value, and so do we (in file order with the others)
        recovered = [
            b.ignore_error_block
            for b in library.failed_blocks
            if isinstance(b, DuplicateFieldKeyBlock) and isinstance(b.ignore_error_block, Entry)
        ]
        entries = [*library.entries, *recovered]
        if recovered:
            entries.sort(key=lambda e: e.start_line or 0)
        for entry in entries:
            self._entry(entry, lines_before + (entry.start_line or 0) + 1)
        for block in library.failed_blocks:
            if isinstance(block, DuplicateFieldKeyBlock):
                continue  # read above
            if isinstance(block, DuplicateBlockKeyBlock):
                self.duplicates += 1
            elif isinstance(block, ParsingFailedBlock):
                self.failures.append(_parser_failure(block, lines_before))
            else:
                line = lines_before + (block.start_line or 0) + 1
                self.failures.append(BibFailure(line, None, "could not be read"))

    def _entry(self, entry: Entry, line: int) -> None:
        key = entry.key
        if not key.strip():
            self.failures.append(BibFailure(line, None, "the entry has no key"))
            return
        if key in self.seen:
            self.duplicates += 1
            return
        self.seen.add(key)
        if self.only is not None and key not in self.only:
            self.skipped += 1
            return
        try:
            fields = _entry_fields(entry, self.strings)
        except BadBibValue as error:
            self.failures.append(BibFailure(line, key, str(error)))
            return
        if self.limit is not None and len(self.references) >= self.limit and _has_title(fields):
            self.unconverted[key] = None
            return
        reference = _entry_reference(key, fields)
        if reference is None:
            self.untitled.append(key)
        else:
            self.references[key] = reference

    def result(self) -> BibParse:
        failures = sorted(self.failures, key=lambda f: f.line)
        return BibParse(
            references=tuple(self.references.values()),
            untitled=tuple(self.untitled),
            failed_blocks=len(failures),
            duplicates=self.duplicates,
            first_failure=str(failures[0]) if failures else "",
            skipped=self.skipped,
            unconverted=tuple(self.unconverted),
            failures=tuple(failures),
            strings=self.strings,
        )


def parse_bib(
    text: str,
    only: Collection[str] | None = None,
    *,
    limit: int | None = None,
    strings: Mapping[str, str] | None = None,
) -> BibParse:
    """The references of a ``.bib`` text; never raises (see :func:`read_bib` for the checks).

    Every entry is parsed and checked (a key, field values BibTeX can read), but turning a
    field's LaTeX into text is the slow part, so only what is needed is converted: ``only``,
    just these keys (a shared .bib holds thousands a paper never cites); ``limit``, just the
    first ``limit`` titled entries (the rest are counted, and their keys kept, in
    :attr:`BibParse.unconverted`). ``strings``: @string macros defined before this text (a
    paper's earlier .bib files).
    """
    reader = _BibReader(only, limit, strings or {})
    for lines_before, piece in _chunks(text):
        reader.read(_library(piece), lines_before)
    return reader.result()


def read_bib(
    path: Path, *, limit: int | None = None, minimum: int = 1, minimum_setting: str = ""
) -> BibParse:
    """The references of the ``.bib`` at ``path`` (``limit``: as for :func:`parse_bib`).

    Raises :class:`BadInputError` (one line, naming the file) when it does not parse, holds no
    entry, or holds fewer than ``minimum`` usable entries (a key and a title; the message names
    ``minimum_setting``, the setting to lower). Untitled entries among titled ones are dropped
    and counted in :attr:`BibParse.untitled`; unparseable entries among good ones in
    :attr:`BibParse.failures`.
    """
    return check_bib(parse_bib(read_text(path), limit=limit), path, minimum, minimum_setting)


def _entries(count: int) -> str:
    return f"{count} entr{'y' if count == 1 else 'ies'}"


def lost_entries(parsed: BibParse) -> str:
    """What a bibliography lost, in words ("" when nothing): failed, untitled and duplicate
    entries, with the first failure."""
    parts = []
    if parsed.failed_blocks:
        parts.append(
            f"{_entries(parsed.failed_blocks)} could not be parsed (first at "
            f"{parsed.first_failure})"
        )
    if parsed.untitled:
        parts.append(f"{_entries(len(parsed.untitled))} without a title")
    if parsed.duplicates:
        parts.append(f"{_entries(parsed.duplicates)} repeating an earlier key")
    return "; ".join(parts)


def check_bib(
    parsed: BibParse, path: Path, minimum: int = 1, minimum_setting: str = ""
) -> BibParse:
    """``parsed``, or the one-line error that says why it cannot be used: no usable entry, or
    fewer than ``minimum`` (``minimum_setting``: the setting that asks for them)."""
    if parsed.usable >= max(minimum, 1):
        return parsed
    if parsed.usable:
        setting = f" ({minimum_setting})" if minimum_setting else ""
        raise BadInputError(
            path,
            f"only {parsed.usable} usable reference{'s' if parsed.usable > 1 else ''}, fewer "
            f"than the {minimum} needed{setting}: "
            f"{lost_entries(parsed) or 'the file holds no more'}",
        )
    if parsed.untitled and not parsed.failed_blocks:
        count = len(parsed.untitled)
        raise BadInputError(path, f"no BibTeX entry with a title ({count} without one)")
    if parsed.failed_blocks:
        raise BadInputError(
            path,
            f"does not parse as BibTeX ({_entries(parsed.failed_blocks)} failed; first at "
            f"{parsed.first_failure})",
        )
    raise BadInputError(path, "no BibTeX entries (expected @article{key, title={...}, ...})")


# --- .bbl and thebibliography -----------------------------------------------------------------

_BIBITEM = re.compile(r"\\bibitem(?![A-Za-z@])")
_NEWBLOCK = re.compile(r"\\newblock(?![A-Za-z@])")
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")


def _split_bibitems(latex: str) -> Iterable[tuple[str, str]]:
    """(key, item latex) for every ``\\bibitem[label]{key} ...`` in ``latex``."""
    starts = list(_BIBITEM.finditer(latex))
    for index, match in enumerate(starts):
        pos = match.end()
        while pos < len(latex) and latex[pos] in " \t\n":
            pos += 1
        if pos < len(latex) and latex[pos] == "[":  # the label may hold braces and brackets
            depth = 0
            while pos < len(latex):
                depth += {"[": 1, "]": -1}.get(latex[pos], 0)
                pos += 1
                if depth == 0:
                    break
        group = read_group(latex, pos)
        if group is None:
            continue
        stop = starts[index + 1].start() if index + 1 < len(starts) else len(latex)
        yield group.value.strip(), latex[group.end : stop]


def _bibitem_reference(key: str, item: str, origin: Origin) -> Reference | None:
    blocks = [b for b in _NEWBLOCK.split(item) if b.strip()]
    years = _YEAR.findall(item)
    if len(blocks) >= 2:  # natbib styles: authors \newblock title \newblock venue, year
        authors_text = inline_text(blocks[0]).rstrip(".")
        title = inline_text(blocks[1]).rstrip(".")
        venue = inline_text(blocks[2]).rstrip(".") if len(blocks) > 2 else None
        authors = tuple(a.strip() for a in re.split(r",\s*(?:and\s+)?|\s+and\s+", authors_text))
        authors = tuple(a for a in authors if a and a not in {"et al.", "et al"})
    else:  # a hand-written item: its whole text stands as the title
        title, authors, venue = inline_text(item), (), None
    if not title:
        return None
    return Reference(
        key=key,
        title=title,
        authors=authors,
        year=years[-1] if years else None,
        venue=venue or None,
        origin=origin,
    )


def parse_bibitems(latex: str, origin: Origin = "thebibliography") -> BibParse:
    """The references of ``\\bibitem`` lists (a ``thebibliography`` or a natbib ``.bbl``), or of
    a biblatex ``.bbl`` (``\\entry ... \\endentry``)."""
    if "\\endentry" in latex:
        return _parse_biblatex_bbl(latex)
    references: dict[str, Reference] = {}
    untitled: list[str] = []
    duplicates = 0
    for key, item in _split_bibitems(strip_comments(latex)):
        if key in references:
            duplicates += 1
            continue
        reference = _bibitem_reference(key, item, origin)
        if reference is None:
            untitled.append(key)
        else:
            references[key] = reference
    return BibParse(tuple(references.values()), tuple(untitled), duplicates=duplicates)


_BIBLATEX_ENTRY = re.compile(r"\\entry\{([^}]*)\}\{[^}]*\}\{[^}]*\}(.*?)\\endentry", re.DOTALL)


def _biblatex_field(body: str, name: str) -> str:
    match = re.search(r"\\field\{" + name + r"\}", body)
    group = read_group(body, match.end()) if match else None
    return inline_text(group.value) if group else ""


def _parse_biblatex_bbl(latex: str) -> BibParse:
    references: dict[str, Reference] = {}
    untitled: list[str] = []
    for match in _BIBLATEX_ENTRY.finditer(latex):
        key, body = match.group(1).strip(), match.group(2)
        title = _biblatex_field(body, "title")
        if not title:
            untitled.append(key)
            continue
        families = re.findall(r"family=\{([^}]*)\}", body)
        venue = _biblatex_field(body, "journaltitle") or _biblatex_field(body, "booktitle")
        abstract = _biblatex_field(body, "abstract")
        references.setdefault(
            key,
            Reference(
                key=key,
                title=title,
                authors=tuple(inline_text(f) for f in families),
                year=_biblatex_field(body, "year") or None,
                abstract=abstract or None,
                venue=venue or None,
                origin="bbl",
            ),
        )
    return BibParse(tuple(references.values()), tuple(untitled))


# --- a paper's own bibliography ---------------------------------------------------------------


@dataclass(frozen=True)
class PaperReferences:
    """The references a paper cites, in the order it first cites them, and where they came from.

    ``references`` are the cited entries found in the bibliography (all of it when the paper
    cites nothing it names, e.g. ``\\nocite{*}``); ``missing`` are cited keys the bibliography
    lacks; ``uncited`` counts bibliography entries the paper never cites.
    """

    references: tuple[Reference, ...]
    files: tuple[str, ...]  # the bibliography sources read, relative to the paper's root
    origin: Origin | None
    cited: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    uncited: int = 0
    untitled: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)


def cited_keys(latex: str) -> list[str]:
    """Every key cited in ``latex`` (``\\cite``, ``\\citep``, ``\\nocite``...), first use first."""
    keys: dict[str, None] = {}
    for command in find_commands(latex, _CITES):
        for key in (command.args[-1] or "").split(","):
            if key.strip():
                keys.setdefault(key.strip(), None)
    return list(keys)


def _bib_files(text: str, main_dir: Path, root: Path) -> tuple[list[Path], list[str]]:
    found: list[Path] = []
    warnings: list[str] = []
    for command in find_commands(text, _BIB_COMMANDS):
        for name in (command.args[-1] or "").split(","):
            name = name.strip()
            if not name:
                continue
            file = name if name.endswith(".bib") else f"{name}.bib"
            candidates = [main_dir / file, root / file, *root.glob(f"*/{Path(file).name}")]
            path = next(
                (p for p in candidates if p.is_file() and p.resolve().is_relative_to(root)), None
            )
            if path is None:
                warnings.append(f"bibliography {file} not found")
            elif path.resolve() not in found:
                found.append(path.resolve())
    return found, warnings


def _merge(parses: Iterable[BibParse]) -> BibParse:
    references: dict[str, Reference] = {}
    untitled: list[str] = []
    failed = duplicates = skipped = 0
    for parsed in parses:
        for reference in parsed.references:
            references.setdefault(reference.key, reference)
        untitled += parsed.untitled
        failed += parsed.failed_blocks
        duplicates += parsed.duplicates
        skipped += parsed.skipped
    return BibParse(
        tuple(references.values()), tuple(untitled), failed, duplicates, skipped=skipped
    )


def _paper_bibliography(
    full: str, main: Path, root: Path, only: Collection[str] | None
) -> tuple[BibParse, tuple[str, ...], Origin | None, list[str]]:
    """The paper's bibliography: its .bib files, else its .bbl, else its thebibliography."""
    bib_paths, warnings = _bib_files(full, main.parent, root)
    if bib_paths:
        parses: list[BibParse] = []
        strings: Mapping[str, str] = {}
        for path in bib_paths:  # as BibTeX reads them: an earlier file's @string holds later
            parses.append(parse_bib(read_text(path), only, strings=strings))
            strings = parses[-1].strings
        parsed = _merge(parses)
        if parsed.references:
            names = tuple(p.relative_to(root).as_posix() for p in bib_paths)
            return parsed, names, "bib", warnings
    for bbl in (main.with_suffix(".bbl"), *sorted(root.glob("*.bbl"))):
        if bbl.is_file() and not leads_out(bbl, root):
            parsed = parse_bibitems(read_source(bbl), "bbl")
            if parsed.references:
                return parsed, (bbl.relative_to(root).as_posix(),), "bbl", warnings
    for env in find_environments(full, ["thebibliography"]):
        parsed = parse_bibitems(env.body(full), "thebibliography")
        if parsed.references:
            return parsed, (main.relative_to(root).as_posix(),), "thebibliography", warnings
    return BibParse(()), (), None, warnings


def references_of(
    paper_dir: Path, main_file: Path | None = None, *, cited_only: bool = True
) -> PaperReferences:
    """The references of the LaTeX paper under ``paper_dir`` (``main_file``: as for
    :func:`~papergym.sources.latex.read_latex_paper`).

    With ``cited_only`` (the default) only the entries the paper cites are kept, in the order
    of first citation; a bibliography is often a shared file with many more entries. A paper
    with no bibliography at all gives no references and says so in ``warnings``.
    """
    root = paper_dir.resolve()
    if main_file is not None:
        main = main_file.resolve()
        full = flatten(root, main).text
    else:
        tex_files = sorted(  # inside the paper folder: a link out is not part of the paper
            p for p in root.rglob("*.tex") if p.is_file() and not leads_out(p, root)
        )
        if not tex_files:
            raise BadInputError(root, "no .tex file found")
        chosen = find_main_file(root, tex_files)
        main, full = chosen.path.resolve(), chosen.flattened.text
    cited = cited_keys(document_body(full))
    everything = "*" in cited or not cited or not cited_only
    parsed, files, origin, warnings = _paper_bibliography(
        full, main, root, None if everything else set(cited)
    )
    if origin is None:
        warnings.append("no bibliography found (.bib, .bbl or thebibliography)")
    by_key = {r.key: r for r in parsed.references}
    kept = list(parsed.references) if everything else [by_key[k] for k in cited if k in by_key]
    named = [k for k in cited if k != "*"]
    return PaperReferences(
        references=tuple(kept),
        files=files,
        origin=origin,
        cited=tuple(named),
        missing=tuple(k for k in named if k not in by_key) if origin else (),
        uncited=len(parsed.references) - len(kept) + parsed.skipped,
        untitled=len(parsed.untitled),
        warnings=tuple(warnings),
    )
