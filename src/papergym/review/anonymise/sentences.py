"""Sentences, lines and paragraphs of a text, found once: the spans that the sentence rules
(thanks, funding, author notes, code statements) remove."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable

from papergym.review.anonymise.text import is_heading, mentions
from papergym.review.records import Removal

STATEMENT_MAX_CHARS = 4000
"""A span longer than this is not a statement: :meth:`Bounds.statement` leaves it whole."""
_SENTENCE_END = re.compile(r"[.!?](?:\*\*|__|_|\]\([^\s()]*\)|\])?(?=\s|$)")
"""A sentence's end: its mark, then the close of bold or italics, or of a link ("... at URL.](URL)")."""
_FOOTNOTE_MARK = re.compile(r"[∗†‡⋆⇤§¶*˚]")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_ENDS_HERE = re.compile(r"[.!?](?:\*\*|__|_|\])?\Z")


class Bounds:
    """Sentence ends, line breaks and footnote marks of one text, found once, so that a pass
    over many matches asks each question by a binary search and stays linear in the text (a
    search backwards from every match, or a restart from the top after every removal, is
    quadratic on a long text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        ends = list(_SENTENCE_END.finditer(text))
        self.end_starts = [m.start() for m in ends]
        self.ends = [m.end() for m in ends]
        lengths = (len(line) + 1 for line in text.split("\n"))
        # the "\n" after each line but the last
        self.newlines = list(itertools.accumulate(lengths, initial=-1))[1:-1]

    @functools.cached_property
    def marks(self) -> list[int]:
        return [m.start() for m in _FOOTNOTE_MARK.finditer(self.text)]

    def sentence(self, start: int, end: int) -> tuple[int, int]:
        """The sentence holding ``text[start:end]``, by the nearest sentence ends (one right
        before ``start`` counts even when no space follows it; a span inside an end, the URL
        of "... at URL.](URL)", is in the sentence that end closes)."""
        inside = bisect.bisect_right(self.end_starts, start) - 1
        if inside >= 0 and self.ends[inside] > start:
            return (self.ends[inside - 1] if inside else 0), self.ends[inside]
        index = bisect.bisect_right(self.ends, start)
        before = self.ends[index - 1] if index else 0
        if _ENDS_HERE.search(self.text[max(0, start - 3) : start]):
            before = start
        after = bisect.bisect_left(self.end_starts, end)
        return before, (self.ends[after] if after < len(self.ends) else len(self.text))

    def line(self, start: int, end: int) -> tuple[int, int]:
        """From the start of ``start``'s line to the end of ``end``'s line."""
        index = bisect.bisect_left(self.newlines, start)
        begin = self.newlines[index - 1] + 1 if index else 0
        after = bisect.bisect_left(self.newlines, end)
        return begin, (self.newlines[after] if after < len(self.newlines) else len(self.text))

    @functools.cached_property
    def breaks(self) -> list[tuple[int, int]]:
        """The blank-line runs between paragraphs, as (start, end)."""
        return [m.span() for m in _PARAGRAPH_BREAK.finditer(self.text)]

    def statement(self, start: int, end: int) -> tuple[int, int]:
        """:meth:`sentence`, kept inside the paragraph of ``text[start:end]`` and between its
        headings (a PDF extraction often has no full stop after a URL or before a heading)."""
        begin, finish = self.sentence(start, end)
        index = bisect.bisect_right(self.breaks, (start, len(self.text)))
        if index and self.breaks[index - 1][1] <= start:
            begin = max(begin, self.breaks[index - 1][1])
        after = bisect.bisect_left(self.breaks, (end, -1))
        if after < len(self.breaks):
            finish = min(finish, self.breaks[after][0])
        if finish - begin > STATEMENT_MAX_CHARS:  # too long to be a statement: left whole
            return begin, finish
        for line_start in self.line_starts(begin, finish):
            line_end = self.line(line_start, line_start)[1]
            if is_heading(self.text[line_start:line_end]):
                if line_end <= start:
                    begin = line_end
                elif line_start >= end:
                    return begin, line_start
        return begin, finish

    def line_starts(self, start: int, end: int) -> list[int]:
        """Where the lines that begin inside ``text[start:end]`` begin (``start`` first)."""
        first = bisect.bisect_left(self.newlines, start)
        last = bisect.bisect_left(self.newlines, end - 1)
        return [start, *(n + 1 for n in self.newlines[first:last])]

    def last_mark(self, start: int, end: int) -> int | None:
        """The last footnote mark in ``text[start:end]``."""
        index = bisect.bisect_left(self.marks, end) - 1
        return self.marks[index] if index >= 0 and self.marks[index] >= start else None


def strip_sentences(
    text: str,
    pattern: re.Pattern[str],
    kind: str,
    removed: list[Removal],
    span: Callable[[Bounds, int, int], tuple[int, int]] = Bounds.sentence,
    needs: tuple[str, ...] = (),
) -> str:
    """Every sentence (or ``span``) holding a match of ``pattern`` removed, in one pass: the
    search goes on after each removed span. ``needs``: words every match holds (lowercase); a
    text without any of them is not searched."""
    if needs and not mentions(text, needs):
        return text
    bounds = Bounds(text)
    kept: list[str] = []
    done = 0  # text[:done] is settled
    while (match := pattern.search(text, done)) is not None:
        start, end = span(bounds, match.start(), match.end())
        start, end = max(start, done), max(end, match.end())
        removed.append(Removal(kind=kind, text=" ".join(text[start:end].split())))
        kept.append(text[done:start])
        done = end
    kept.append(text[done:])
    return "".join(kept)
