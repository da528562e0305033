"""Anonymisation of a paper before review: what a double-blind reviewer would not see.

Camera-ready papers carry marks an anonymous submission does not (author names, affiliations,
emails, "Published as a conference paper at ...", acknowledgements, funding, the authors' own
code repository) and submissions carry marks of their own ("Anonymous authors", "Paper under
double-blind review", anonymous repository links). A reviewer that sees either predicts the
decision without reading the science, so both kinds are removed, and every removal is recorded.

The rules are general, not fitted to particular papers: they work on PDF-to-markdown text (page
headers, bold author lines, footnote lines) and on text rendered from LaTeX ingestion (markdown
headings, no author block). Pure and deterministic: the same text always gives the same result.

Order matters: venue marks first (they sit in the front matter and in page headers), then the
front matter's author block, acknowledgement sections, stray funding and thanks sentences and
author notes, the sentences presenting the paper's code (removing the URL alone would leave a
"Code is available at ]" stub, itself a camera-ready mark) and its code URLs elsewhere, and
finally any email left.

Linear time in the text's length: a review server anonymises whatever answer it is sent, so no
pattern may retry every position of a long run, and no pass may start over after a removal.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import Field

from papergym.records import Record
from papergym.review.anonymise.code import strip_code_urls
from papergym.review.anonymise.front import (
    strip_affiliation_notes,
    strip_author_block,
    strip_line_numbers,
    strip_venue,
)
from papergym.review.anonymise.text import EMAIL
from papergym.review.anonymise.thanks import strip_acknowledgements, strip_thanks
from papergym.review.records import Removal


class Anonymised(Record):
    """A paper's text with its identifying marks removed, and what was removed."""

    text: str
    removed: list[Removal] = Field(default_factory=list)


def _replace(text: str, pattern: str, kind: str, removed: list[Removal]) -> str:
    def record(match: re.Match[str]) -> str:
        removed.append(Removal(kind=kind, text=match.group(0)))
        return ""

    return re.sub(pattern, record, text)


def _tidy(text: str) -> str:
    """Blank runs left by removals collapsed to one blank line; trailing spaces dropped."""
    lines = [line.rstrip() for line in text.splitlines()]
    text = "\n".join(lines)
    text = re.sub(r"\[\s*\]", "", text)  # a link whose text was the URL removed
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


_LineStep = Callable[[list[str], list[Removal]], list[str]]
_LINE_STEPS: tuple[_LineStep, ...] = (
    strip_venue,
    strip_line_numbers,
    strip_author_block,
    strip_acknowledgements,
    strip_affiliation_notes,
)


def anonymise(text: str) -> Anonymised:
    """``text`` without author block, venue headers and footers, acknowledgements, funding and
    thanks, author notes, the sentences presenting the paper's code and only a submission's
    (anonymous links, release upon acceptance), its own code URLs and emails; each removal
    recorded."""
    removed: list[Removal] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for step in _LINE_STEPS:
        lines = step(lines, removed)
    body = "\n".join(lines)
    body = strip_thanks(body, removed)
    body = strip_code_urls(body, removed)
    if "@" in body:
        body = _replace(body, EMAIL.pattern, "email", removed)
    return Anonymised(text=_tidy(body), removed=removed)
