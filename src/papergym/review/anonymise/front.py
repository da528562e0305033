"""The front matter and page furniture: venue headers and footers, a submission's line numbers,
the author block between the title and the abstract, and first-page affiliation footnotes.
Each rule takes the text's lines and returns them with its marks removed (and recorded)."""

from __future__ import annotations

import itertools
import re

from papergym.review.anonymise.text import (
    AFFILIATION,
    EMAIL,
    SECTION_NUMBER,
    URL,
    block_text,
    blocks,
    is_heading,
    is_prose,
    is_prose_line,
    plain_text,
)
from papergym.review.records import Removal

# -- venue headers and footers ----------------------------------------------------------------

_VENUE_PATTERNS = [
    r"(?:published|accepted|appearing|to appear)\s+(?:as\s+an?\s+)?(?:\w+\s+){0,2}"
    r"(?:paper\s+)?(?:at|in|to)\s+[^\n]{0,60}?\b(?:19|20)\d\d\b",
    r"under\s+review\s+(?:as\s+an?\s+(?:\w+\s+){0,2}paper\s+)?(?:at|for|by)\s+[^\n]{0,60}?"
    r"(?:\b(?:19|20)\d\d\b|$)",
    r"(?:paper\s+)?under\s+double[- ]blind\s+review",
    r"anonymous\s+(?:authors?|submission)",
    r"preprint\.?\s+under\s+review\.?",
    r"(?:work\s+)?in\s+submission\s+to\s+[^\n]{0,60}",
    r"copyright\s+(?:©\s*)?(?:19|20)\d\d\s+by\s+the\s+authors?\.?",
    r"camera[- ]ready(?:\s+version)?",
]
_VENUE = re.compile("|".join(f"(?:{p})" for p in _VENUE_PATTERNS), re.IGNORECASE | re.MULTILINE)
_HEADER_MAX_WORDS = 16
"""A venue phrase is removed on a line of at most this many words: a page header or a front-matter
line, not a sentence of the paper or a reference ("In Proceedings of ...")."""
_VENUE_WORDS = (
    "published",
    "accepted",
    "appear",
    "review",
    "blind",
    "anonymous",
    "preprint",
    "submission",
    "copyright",
    "camera",
)
"""Every venue phrase holds one of these words whole: a line without one is not parsed further
(a substring test per line instead of a markup substitution and a regex search)."""


def strip_venue(lines: list[str], removed: list[Removal]) -> list[str]:
    result = list(lines)
    for index, line in enumerate(lines):
        lowered = line.lower()
        if not any(word in lowered for word in _VENUE_WORDS):
            continue
        plain = plain_text(line)
        if plain and len(plain.split()) <= _HEADER_MAX_WORDS and _VENUE.search(plain):
            for match in _VENUE.finditer(plain):
                removed.append(Removal(kind="venue-header", text=match.group(0).strip()))
            rest = plain_text(_VENUE.sub(" ", plain))
            # what is left of a header line is page furniture (a page number, punctuation)
            result[index] = "" if len(re.findall(r"[A-Za-z]{3,}", rest)) < 2 else line
    return result


# -- line numbers -----------------------------------------------------------------------------

_NUMBER_LINE = re.compile(r"^\s*(\d{1,4})\s*$")
_NUMBER_PREFIX = re.compile(r"^(\d{1,4}) (?=\S)")
LINE_NUMBER_RUN = 15
"""Consecutive numbers (n, n+1, ...) on this many lines or more, each within
:data:`_LINE_NUMBER_GAP` lines of the last, are line numbers (of a submission template, a mark only
submissions carry, or of a code listing), not section numbers or table cells."""
_LINE_NUMBER_GAP = 4


def strip_line_numbers(lines: list[str], removed: list[Removal]) -> list[str]:
    """Line numbers printed by a submission template, alone on their lines or in front of the
    text: runs of at least :data:`LINE_NUMBER_RUN` consecutive numbers."""
    found: list[tuple[int, int]] = []  # (line index, number)
    for index, line in enumerate(lines):
        match = _NUMBER_LINE.match(line) or _NUMBER_PREFIX.match(line)
        if match:
            found.append((index, int(match.group(1))))
    # a run continues at its next number, past stray numbers in between ("1 INTRODUCTION")
    runs: list[list[tuple[int, int]]] = []
    waiting: dict[int, list[tuple[int, int]]] = {}
    for item in found:
        run = waiting.pop(item[1], None)
        if run is not None and item[0] - run[-1][0] > _LINE_NUMBER_GAP:
            run = None  # numbers far apart are table cells or axis labels, not line numbers
        if run is None:
            run = []
            runs.append(run)
        run.append(item)
        waiting[item[1] + 1] = run
    result: list[str | None] = list(lines)
    for run in runs:
        if len(run) < LINE_NUMBER_RUN:
            continue
        removed.append(Removal(kind="line-numbers", text=f"{run[0][1]}-{run[-1][1]}"))
        for index, _ in run:
            line = lines[index]
            # a number alone on its line goes with its line, so no blank line splits a paragraph
            standalone = _NUMBER_LINE.match(line) is not None
            result[index] = None if standalone else _NUMBER_PREFIX.sub("", line, count=1)
    return [line for line in result if line is not None]


# -- the author block -------------------------------------------------------------------------

_INTRODUCTION = re.compile(
    rf"^\s*(?:#+\s*)?(?:\*\*|__)?\s*(?:{SECTION_NUMBER}\s+)?introduction\b", re.IGNORECASE
)
_NUMBERED_HEADING = re.compile(
    r"^\s*(?:(?:\*\*)?\s*1\.?\s+[A-Z][A-Z0-9 ,:;&'()/-]{3,}(?:\*\*)?\s*$|#+\s*1\.?\s+[A-Z])"
)
"""The first section's heading: "1 INTRODUCTION", "# 1 Method"; not "1 Department of ..."."""
_ABSTRACT = re.compile(r"^\s*(?:#+\s*)?(?:\*\*|__|_)?\s*abstract\b", re.IGNORECASE)
_FRONT_MAX_LINES = 150


def _is_caps(line: str) -> bool:
    letters = "".join(re.findall(r"[A-Za-z]+", line))
    return len(letters) >= 4 and letters.isupper()


def _title_end(lines: list[str]) -> int:
    """The line after the title: a markdown heading near the top and the heading lines after it
    (a long title wraps), else the first line and the lines of its block that continue it (in
    capitals like it, or a short block of at most three lines)."""
    filled = [i for i, line in enumerate(lines) if line.strip()][:5]
    headings = [i for i in filled if lines[i].lstrip().startswith("#")]
    if headings:
        index = headings[0] + 1
        while index < len(lines) and (
            lines[index].lstrip()[:1] == "#"
            or (not lines[index].strip() and lines[index + 1 : index + 2] != [""])
            or (_is_caps(lines[index]) and lines[index - 1].strip())
        ):
            if _ABSTRACT.match(lines[index]) or _INTRODUCTION.match(lines[index]):
                break
            index += 1
        return index
    if not filled:
        return len(lines)
    first = filled[0]
    end = next((i for i in range(first, len(lines)) if not lines[i].strip()), len(lines))
    if _is_caps(lines[first]):
        index = first + 1
        while index < end and _is_caps(lines[index]) and not _ABSTRACT.match(lines[index]):
            index += 1
        return index
    if end - first <= 3 and not any(_ABSTRACT.match(line) for line in lines[first:end]):
        return end
    return first + 1


def _front_end(lines: list[str], start: int) -> int:
    """Where the front matter ends: the introduction (or first numbered section) heading, or the
    end of the first block of prose after the abstract heading (or after the title when there is
    none), whichever comes first. Author blocks sit before the abstract's text, even when a
    PDF extraction put the abstract heading above them; a teaser figure after it is left alone."""
    limit = min(len(lines), start + _FRONT_MAX_LINES)
    intro = next(
        (
            i
            for i in range(start, limit)
            if _INTRODUCTION.match(lines[i]) or _NUMBERED_HEADING.match(lines[i])
        ),
        limit,
    )
    abstract = next((i for i in range(start, intro) if _ABSTRACT.match(lines[i])), start)
    for span in blocks(lines[abstract:intro]):
        if is_prose(block_text(lines[abstract:intro], span)):
            return abstract + span[1]
    return intro if intro < limit else start


def _front_blocks(front: list[str]) -> list[tuple[int, int]]:
    """The front matter's blocks, each also split before an abstract heading and where running
    prose follows a short line (an extraction with no blank line between authors and abstract;
    a bare line number does not count)."""
    spans = []
    for start, end in blocks(front):
        cuts = [start]
        for i in range(start + 1, end):
            before = front[i - 1]
            short = len(before.split()) < 8 and re.search(r"[A-Za-z]", before) is not None
            prose_begins = is_prose_line(front[i]) and short and not is_prose_line(before)
            if _ABSTRACT.match(front[i]) or is_heading(front[i]) or prose_begins:
                cuts.append(i)
        cuts.append(end)
        spans += list(itertools.pairwise(cuts))
    return spans


def _looks_like_authors(block: str) -> bool:
    """Names, affiliations or addresses: an email, or words nearly all capitalised."""
    if EMAIL.search(block):
        return True
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", block)
    return bool(words) and sum(w[0].islower() for w in words) / len(words) < 0.3


def strip_author_block(lines: list[str], removed: list[Removal]) -> list[str]:
    """Between the title and the introduction keep the abstract: before the abstract's heading
    every block that is not running prose is author names, affiliations, emails or notes; after
    it (a PDF extraction may put the heading above the authors) only blocks that look like
    names or addresses go, so an abstract broken by line numbers or formulas stays whole."""
    start = _title_end(lines)
    end = _front_end(lines, start)
    front = lines[start:end]
    drop: set[int] = set()
    seen_abstract = False
    for first, last in _front_blocks(front):
        block = block_text(front, (first, last))
        if _ABSTRACT.match(front[first]):
            seen_abstract = True
            if len(block.split()) <= 3 or is_prose(block):
                continue
        keep = is_prose(block) or (seen_abstract and not _looks_like_authors(block))
        if not keep:
            removed.append(Removal(kind="author-block", text=block.strip()))
            drop.update(range(start + first, start + last))
    return ["" if i in drop else line for i, line in enumerate(lines)]


# -- affiliation footnotes --------------------------------------------------------------------

_NOTE_START = re.compile(r"^[\s_\[]*(?:[∗†‡§¶⋆⇤˚♠♦♣]|\*(?!\*)|\d{1,2}(?=\s?[A-Z]))[\s:]*")
_NOTE_MAX_WORDS = 25


def strip_affiliation_notes(lines: list[str], removed: list[Removal]) -> list[str]:
    """A first-page footnote giving an author's affiliation ("†University of Oxford, UK",
    "1Department of ..."): a short line that starts with a footnote mark and names an
    institution. PDF extraction leaves these anywhere in the first pages' text."""
    result = []
    for line in lines:
        plain = line.strip()
        start = _NOTE_START.match(plain)
        if (
            start
            and AFFILIATION.search(" ".join(URL.sub(" ", plain[start.end() :]).split()[:6]))
            and len(plain.split()) <= _NOTE_MAX_WORDS
            and not is_heading(plain)
        ):
            removed.append(Removal(kind="affiliation", text=plain))
            result.append("")
            continue
        result.append(line)
    return result
