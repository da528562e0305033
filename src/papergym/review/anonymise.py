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

import bisect
import functools
import itertools
import re
from collections.abc import Callable

from pydantic import Field

from papergym.records import Record
from papergym.review.records import Removal


class Anonymised(Record):
    """A paper's text with its identifying marks removed, and what was removed."""

    text: str
    removed: list[Removal] = Field(default_factory=list)


# -- venue headers and footers --------------------------------------------------------------------

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

_MARKUP = re.compile(r"[*_#`\[\]()]+")


def _plain(line: str) -> str:
    return _MARKUP.sub(" ", line).strip()


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


def _strip_venue(lines: list[str], removed: list[Removal]) -> list[str]:
    result = list(lines)
    for index, line in enumerate(lines):
        lowered = line.lower()
        if not any(word in lowered for word in _VENUE_WORDS):
            continue
        plain = _plain(line)
        if plain and len(plain.split()) <= _HEADER_MAX_WORDS and _VENUE.search(plain):
            for match in _VENUE.finditer(plain):
                removed.append(Removal(kind="venue-header", text=match.group(0).strip()))
            rest = _plain(_VENUE.sub(" ", plain))
            # what is left of a header line is page furniture (a page number, punctuation)
            result[index] = "" if len(re.findall(r"[A-Za-z]{3,}", rest)) < 2 else line
    return result


# -- line numbers -------------------------------------------------------------------------------

_NUMBER_LINE = re.compile(r"^\s*(\d{1,4})\s*$")
_NUMBER_PREFIX = re.compile(r"^(\d{1,4}) (?=\S)")
LINE_NUMBER_RUN = 15
"""Consecutive numbers (n, n+1, ...) on this many lines or more, each within
:data:`_LINE_NUMBER_GAP` lines of the last, are line numbers (of a submission template, a mark only
submissions carry, or of a code listing), not section numbers or table cells."""
_LINE_NUMBER_GAP = 4


def _strip_line_numbers(lines: list[str], removed: list[Removal]) -> list[str]:
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


# -- blocks, headings, prose ----------------------------------------------------------------------

_SECTION_NUMBER = r"(?:[A-Z]|\d+)(?:\.\d+)*\.?"
_INTRODUCTION = re.compile(
    rf"^\s*(?:#+\s*)?(?:\*\*|__)?\s*(?:{_SECTION_NUMBER}\s+)?introduction\b", re.IGNORECASE
)
_NUMBERED_HEADING = re.compile(
    r"^\s*(?:(?:\*\*)?\s*1\.?\s+[A-Z][A-Z0-9 ,:;&'()/-]{3,}(?:\*\*)?\s*$|#+\s*1\.?\s+[A-Z])"
)
"""The first section's heading: "1 INTRODUCTION", "# 1 Method"; not "1 Department of ..."."""
_ABSTRACT = re.compile(r"^\s*(?:#+\s*)?(?:\*\*|__|_)?\s*abstract\b", re.IGNORECASE)
_EMAIL = re.compile(
    r"(?:\{[^{}\n]{1,200}\}|(?<![\w.+-])[\w.+-]+)@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", re.IGNORECASE
)
"""An email address. Its local part starts where its run of ``[\\w.+-]`` starts (the
look-behind): without it every position of a long run (``"a" * 80000``) is tried again, which
is quadratic. A match inside a run is also one from the run's start, so nothing is lost but two
addresses glued together by "_" or "+" (the second is not found)."""
_PROSE_MIN_WORDS = 12
_LOWERCASE_SHARE = 0.55
_FRONT_MAX_LINES = 150


_LOWERCASE = re.compile(r"[a-z]")


def is_heading(line: str) -> bool:
    """A section heading: a markdown heading, a short all-capitals line ("2 RELATED WORK",
    "REFERENCES"), or a horizontal rule."""
    stripped = line.strip()
    if not stripped:
        return False
    if stripped.startswith("#") or re.fullmatch(r"[-*_=]{3,}", stripped):
        return True
    if _LOWERCASE.search(stripped):  # its letters are not all capitals (the common case, fast)
        return False
    plain = _plain(stripped)
    words = re.findall(r"[A-Za-z]+", plain)
    if not words or len(plain.split()) > 10 or plain.endswith((".", ",", ";")):
        return False
    letters = "".join(words)
    return len(letters) >= 4 and letters.isupper()


def _is_prose(block: str) -> bool:
    """Running text, as an abstract is: enough words, mostly lowercase, no email address. Author
    lists and affiliations are short and mostly capitalised."""
    if _EMAIL.search(block):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", block)
    if len(words) < _PROSE_MIN_WORDS:
        return False
    lowercase = sum(word[0].islower() for word in words) / len(words)
    return lowercase >= _LOWERCASE_SHARE and len(_FUNCTION_WORDS & set(words)) >= 3


_FUNCTION_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "and",
        "we",
        "is",
        "are",
        "that",
        "for",
        "with",
        "on",
        "this",
        "by",
        "our",
        "from",
        "as",
        "be",
        "which",
        "it",
    ]
)


def _is_prose_line(line: str) -> bool:
    """A line of running text: eight or more words, mostly lowercase (not a name or an
    affiliation)."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", line)
    return len(words) >= 8 and sum(w[0].islower() for w in words) / len(words) >= 0.6


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line ranges of the blank-line-separated blocks."""
    spans = []
    start: int | None = None
    for index, line in enumerate(lines):
        if line.strip():
            if start is None:
                start = index
        elif start is not None:
            spans.append((start, index))
            start = None
    if start is not None:
        spans.append((start, len(lines)))
    return spans


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """:func:`_blocks`, each also split before a heading line inside it (a PDF extraction often
    leaves no blank line before "REFERENCES")."""
    spans = []
    for start, end in _blocks(lines):
        cuts = [start, *(i for i in range(start + 1, end) if is_heading(lines[i])), end]
        spans += list(itertools.pairwise(cuts))
    return spans


def _block_text(lines: list[str], span: tuple[int, int]) -> str:
    return "\n".join(lines[span[0] : span[1]])


# -- the author block -----------------------------------------------------------------------------


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
    for span in _blocks(lines[abstract:intro]):
        if _is_prose(_block_text(lines[abstract:intro], span)):
            return abstract + span[1]
    return intro if intro < limit else start


def _front_blocks(front: list[str]) -> list[tuple[int, int]]:
    """The front matter's blocks, each also split before an abstract heading and where running
    prose follows a short line (an extraction with no blank line between authors and abstract;
    a bare line number does not count)."""
    spans = []
    for start, end in _blocks(front):
        cuts = [start]
        for i in range(start + 1, end):
            before = front[i - 1]
            short = len(before.split()) < 8 and re.search(r"[A-Za-z]", before) is not None
            prose_begins = _is_prose_line(front[i]) and short and not _is_prose_line(before)
            if _ABSTRACT.match(front[i]) or is_heading(front[i]) or prose_begins:
                cuts.append(i)
        cuts.append(end)
        spans += list(itertools.pairwise(cuts))
    return spans


def _looks_like_authors(block: str) -> bool:
    """Names, affiliations or addresses: an email, or words nearly all capitalised."""
    if _EMAIL.search(block):
        return True
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", block)
    return bool(words) and sum(w[0].islower() for w in words) / len(words) < 0.3


def _strip_author_block(lines: list[str], removed: list[Removal]) -> list[str]:
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
        block = _block_text(front, (first, last))
        if _ABSTRACT.match(front[first]):
            seen_abstract = True
            if len(block.split()) <= 3 or _is_prose(block):
                continue
        keep = _is_prose(block) or (seen_abstract and not _looks_like_authors(block))
        if not keep:
            removed.append(Removal(kind="author-block", text=block.strip()))
            drop.update(range(start + first, start + last))
    return ["" if i in drop else line for i, line in enumerate(lines)]


# -- affiliation footnotes ----------------------------------------------------------------------

_AFFILIATION = re.compile(
    r"\b(?:universit\w*|institut\w*|college|school\s+of|department|laborator\w*|labs?|"
    r"research|academy|inc|ltd|llc|corporation|company|google|microsoft|meta|deepmind|facebook|"
    r"amazon|ibm|nvidia|huawei|tencent|alibaba|baidu|bytedance|samsung|intel|apple|adobe)\b",
    re.IGNORECASE,
)
_NOTE_START = re.compile(r"^[\s_\[]*(?:[∗†‡§¶⋆⇤˚♠♦♣]|\*(?!\*)|\d{1,2}(?=\s?[A-Z]))[\s:]*")
_NOTE_MAX_WORDS = 25


def _strip_affiliation_notes(lines: list[str], removed: list[Removal]) -> list[str]:
    """A first-page footnote giving an author's affiliation ("†University of Oxford, UK",
    "1Department of ..."): a short line that starts with a footnote mark and names an
    institution. PDF extraction leaves these anywhere in the first pages' text."""
    result = []
    for line in lines:
        plain = line.strip()
        start = _NOTE_START.match(plain)
        if (
            start
            and _AFFILIATION.search(" ".join(_URL.sub(" ", plain[start.end() :]).split()[:6]))
            and len(plain.split()) <= _NOTE_MAX_WORDS
            and not is_heading(plain)
        ):
            removed.append(Removal(kind="affiliation", text=plain))
            result.append("")
            continue
        result.append(line)
    return result


# -- acknowledgements and funding -----------------------------------------------------------------

_ACK_WORDS = r"acknowledge?ments?|funding(?:\s+information)?|financial\s+(?:support|disclosure)"
_ACK_HEADING = re.compile(
    rf"^\s*(?:#+\s*)?(?:\*\*|__|_)?\s*(?:{_SECTION_NUMBER}\s+)?(?:{_ACK_WORDS})\s*[.:]?\s*"
    r"(?:\*\*|__|_)?\s*$",
    re.IGNORECASE,
)
_ACK_LEAD = re.compile(
    rf"^\s*(?:#+\s*)?(?:\*\*|__|_)?\s*(?:{_ACK_WORDS})\b\s*(?:\*\*|__|_)?\s*[.:—–-]?", re.IGNORECASE
)
_ACK_CONTENT = re.compile(
    r"\b(?:thank|grateful|gratitude|support(?:ed)?|fund(?:ed|ing)?|grants?|awards?|fellowships?|"
    r"sponsor(?:ed)?|foundation|acknowledge|council|program(?:me)?)\b",
    re.IGNORECASE,
)
_BOLD_LEAD = re.compile(r"^\s*(?:\*\*|__)[^*_\n]{2,60}?(?:\*\*|__|[.:])")


def _strip_acknowledgements(lines: list[str], removed: list[Removal]) -> list[str]:
    """An acknowledgement section: its heading (or a paragraph led by "Acknowledgements") and the
    paragraphs after it that read as thanks or funding, up to the next heading."""
    drop: set[int] = set()
    spans = _paragraphs(lines)
    index = 0
    while index < len(spans):
        span = spans[index]
        first = lines[span[0]]
        heading = _ACK_HEADING.match(first) is not None
        if not heading and _ACK_LEAD.match(first) is None:
            index += 1
            continue
        taken = [span]
        # a heading alone on its line owns the next paragraph whatever it says
        owns_next = heading and span[1] - span[0] == 1
        index += 1
        while index < len(spans):
            nxt = spans[index]
            text = _block_text(lines, nxt)
            if is_heading(lines[nxt[0]]) or _BOLD_LEAD.match(lines[nxt[0]]):
                break
            if not (owns_next and len(taken) == 1) and not _ACK_CONTENT.search(text):
                break
            taken.append(nxt)
            index += 1
        for start, end in taken:
            drop.update(range(start, end))
        text = "\n".join(_block_text(lines, s) for s in taken).strip()
        removed.append(Removal(kind="acknowledgements", text=text))
    return ["" if i in drop else line for i, line in enumerate(lines)]


_FUNDING = re.compile(
    r"\b(?:supported|funded|sponsored|financed)\b(?:\s+\w+){0,3}\s+by\b(?=[^.]{0,200}?\b(?:grants?|"
    r"awards?|fellowships?|foundation|council|agency|program(?:me)?|scholarships?|fund|ministry|"
    r"NSF|NIH|DARPA|ERC|EPSRC|NSERC|ONR|ARO|AFOSR|DOE|UKRI|DFG|JSPS)\b)",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"\b(?:we|the\s+authors?|authors?)\s+(?:would\s+(?:also\s+)?like\s+to\s+|wish\s+to\s+|also\s+|"
    r"are\s+(?:very\s+)?|gratefully\s+)?(?:thank|grateful|acknowledge\s+(?:the\s+)?(?:support|"
    r"funding|help))\b|\bthanks?\s+(?:go|goes)\s+to\b|\banonymous\s+reviewers\b",
    re.IGNORECASE,
)
_AUTHOR_NOTE = re.compile(
    r"\bequal(?:ly)?\s+contribut\w*\s*(?:[.,;:)*_]|$)|\bcontributed\s+equally\b|"
    r"\bcorresponding\s+authors?(?![a-z])|\b(?-i:[Cc]orrespondence(?:\s+to\s+[A-Z]|\s*:))|"
    r"\b(?:this\s+)?work\s+(?:was\s+)?(?:done|performed|conducted|carried\s+out)\s+(?:while|during|when|as)\b|"
    r"\binternship\s+(?:at|of)\b|\bwhile\s+(?:\w+\s+){0,3}interns?\s+at\b",
    re.IGNORECASE | re.MULTILINE,
)
_SENTENCE_END = re.compile(r"[.!?](?:\*\*|__|_|\]\([^\s()]*\)|\])?(?=\s|$)")
"""A sentence's end: its mark, then the close of bold or italics, or of a link ("... at URL.](URL)")."""


_FOOTNOTE_MARK = re.compile(r"[∗†‡⋆⇤§¶*˚]")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_ENDS_HERE = re.compile(r"[.!?](?:\*\*|__|_|\])?\Z")


class _Bounds:
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
        if finish - begin > _STATEMENT_MAX_CHARS:  # too long to be a statement: left whole
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


def _note_span(bounds: _Bounds, start: int, end: int) -> tuple[int, int]:
    """An author note's span: its sentence, but not beyond its line and from its footnote mark
    on (a PDF extraction drops a page's footnotes into the middle of a body sentence)."""
    begin, finish = bounds.sentence(start, end)
    line_start, line_end = bounds.line(start, end)
    mark = bounds.last_mark(line_start, start)
    begin = max(begin, line_start, -1 if mark is None else mark)
    return begin, min(finish, line_end)


def _strip_sentences(
    text: str,
    pattern: re.Pattern[str],
    kind: str,
    removed: list[Removal],
    span: Callable[[_Bounds, int, int], tuple[int, int]] = _Bounds.sentence,
) -> str:
    """Every sentence (or ``span``) holding a match of ``pattern`` removed, in one pass: the
    search goes on after each removed span."""
    if pattern in _NEEDS and not _mentions(text, _NEEDS[pattern]):
        return text
    bounds = _Bounds(text)
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


def _mentions(text: str, words: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``words`` (lowercase), in any case: a substring test, far
    cheaper than the search of a pattern that cannot match without one of them."""
    lowered = text.lower()
    return any(word in lowered for word in words)


# -- code URLs and code statements ---------------------------------------------------------------

_HOSTS = r"github\.com|gitlab\.com|bitbucket\.org|github\.io|4open\.science"
_URL = re.compile(
    rf"(?:https?://|www\.)[^\s()<>\]]+|(?<![\w.-])(?:[\w-]+\.)*(?:{_HOSTS})(?:/[^\s()<>\]]*)?",
    re.IGNORECASE,
)
"""A URL, or a code host's address without its scheme (a PDF extraction breaks a URL over two
lines: "https://anonymous.4open." then "science/r/..."). Host names start where their run
starts (the look-behind), so the search stays linear."""
_LINKED_URL = re.compile(r"\]\(((?:https?://|www\.)[^\s()]+)\)")
_LINK = re.compile(r"\[([^\[\]\n]*)\]\(((?:https?://|www\.)[^\s()]+)\)")
_CODE_HOST = re.compile(
    r"(?:github\.com|gitlab\.com|bitbucket\.org|github\.io|codeocean\.com|huggingface\.co|"
    r"sourceforge\.net|4open\.science|anonymous|anonym)",
    re.IGNORECASE,
)
_ANONYMOUS_HOST = re.compile(r"4open\.science|anonymous|anonym", re.IGNORECASE)
_NOT_LETTER = r"(?<![^\W\d_])"
"""Like ``\b`` before a word, but a footnote number fused to it ("1Project page") counts."""
_OWN_CODE = re.compile(
    rf"{_NOT_LETTER}our\s+(?:\w+\s+){{0,3}}(?:codes?|implementations?|repositor(?:y|ies)|"
    r"project|models?|datasets?|library|package|toolkit|benchmark|website|webpage)\b|"
    rf"{_NOT_LETTER}(?:source\s+)?codes?\s*(?:\w+\s+){{0,4}}(?:is|are|will\s+be|has\s+been|"
    r"have\s+been)?\s*(?:publicly\s+|made\s+|freely\s+)?(?:available|released|provided|hosted)|"
    rf"{_NOT_LETTER}codes?\s*:|{_NOT_LETTER}code\s+at\b|"
    rf"{_NOT_LETTER}project\s+(?:page|website|webpage)\b|"
    r"\bwe\s+(?:\w+\s+)?(?:release|open[- ]source|publish|make\s+(?:\w+\s+){0,3}available)\b|"
    r"\b(?:can\s+be\s+found|is\s+available|are\s+available|available)\s+(?:at|here|on|from)\b",
    re.IGNORECASE,
)
_HOST_WORD = re.compile(r"\b(?:github|gitlab|bitbucket)\b", re.IGNORECASE)
_OUR_CODE = re.compile(
    r"\bour\s+(?:\w+\s+){0,3}(?:codes?|implementations?|repositor(?:y|ies)|project|library|"
    r"package|toolkit)\b|\bwe\s+(?:\w+\s+)?(?:release|open[- ]source|publish|make\s+"
    r"(?:\w+\s+){0,3}available)\b",
    re.IGNORECASE,
)
_SUBMISSION_ONLY = re.compile(
    r"\banonym\w*\W+(?:\w+\W+){0,5}?(?:codes?|repositor(?:y|ies)|repo|links?|"
    r"urls?|github|gitlab|git)\b|"
    r"\b(?:upon|after|following)\s+(?:the\s+)?(?:paper'?s?\s+)?(?:acceptance|de-?anonymi[sz]ation)\b|"
    r"\bonce\s+(?:the\s+|this\s+|our\s+)?(?:paper|work|manuscript|submission)\s+(?:is|gets|has\s+"
    r"been)\s+(?:accepted|published)\b|"
    r"\bduring\s+the\s+(?:review(?:ing)?|discussion|rebuttal)\s+(?:phase|period|stage|process)\b",
    re.IGNORECASE,
)
"""What only a submission says of its code or data: an anonymous repository or link, a release
"upon acceptance", "during the discussion phase"."""
_STATEMENT_MAX_WORDS = 60
"""A sentence presenting the paper's code is removed whole up to this length (longer, it is
mostly something else, and only the URL goes)."""
_STATEMENT_MAX_CHARS = 4000
_LEAD_IN = re.compile(
    r"(?:\bURL|\b(?:available|found|released|hosted|provided)\s+(?:at|on|from|here|in)|"
    r"\b(?:link|page|code|repository)|\bat)\s*:?[\s*_\[]*$",
    re.IGNORECASE,
)
"""What introduces a URL ("available at", "URL", "Code:"): it goes with a removed URL, so no
"Code is available at ]" stub is left (a new surface mark)."""


_OWNER_PATH = re.compile(r"(?<![\w-])([\w-]{4,})/[^\s()<>\]]*")
"""An account's path without its host, ``owner/...`` (account names are letters, digits and
hyphens)."""


def _repository(url: str) -> str | None:
    """``host/owner/name`` of a code-hosting URL, to find the same repository elsewhere."""
    match = re.search(r"((?:github|gitlab)\.com|bitbucket\.org)/([\w.-]+)/([\w.-]+)", url)
    if not match:
        return None
    return f"{match.group(1)}/{match.group(2)}/{match.group(3).removesuffix('.git')}"


def _owner(url: str) -> str | None:
    """The account a code-hosting URL belongs to (``github.com/OWNER/...``, ``OWNER.github.io``),
    lowercased and letters only."""
    match = re.search(
        r"(?:github\.com|gitlab\.com|bitbucket\.org)/([\w.-]+)|([\w-]+)\.github\.io", url, re.I
    )
    if not match:
        return None
    return re.sub(r"[^a-z]", "", (match.group(1) or match.group(2)).lower()) or None


_NAME = re.compile(r"\b[A-Z][a-z]*[A-Z]?[a-z]{2,}\b")


def author_names(removed: list[Removal], body: str) -> frozenset[str]:
    """The authors' names as a code-hosting account would spell them: the capitalised words of
    4+ letters on the removed author block's lines that name no institution, and the letter
    runs of its emails' local parts, lowercased; not words the paper's text uses in lowercase."""
    block = "\n".join(r.text for r in removed if r.kind == "author-block")
    if not block:
        return frozenset()
    names: set[str] = set()
    for line in block.splitlines():
        if not _AFFILIATION.search(line):  # a line of names, not "Stanford University"
            names.update(w.lower() for w in _NAME.findall(_EMAIL.sub(" ", line)))
    for local in re.findall(r"(?<![\w.+-])([\w.+-]+)@|\{([^{}\n]{1,200})\}\s*@", block):
        names.update(re.findall(r"[a-z]{4,}", " ".join(local).lower()))
    lowercase_words = set(re.findall(r"\b[a-z]{4,}\b", body))
    return frozenset(n for n in names if len(n) >= 4 and n not in lowercase_words)


class _Sayings:
    """Where ``pattern`` matches in a text whose URLs are blanked out (same length), searched
    only in the ``regions`` asked about, so that whether a span says it is one binary search:
    many URLs in one long sentence stay linear, and a paper without code URLs costs nothing."""

    def __init__(
        self, blank: str, pattern: re.Pattern[str], regions: list[tuple[int, int]]
    ) -> None:
        found: list[tuple[int, int]] = []
        reach = 0
        for start, end in sorted(regions):
            if end > reach:
                found += (m.span() for m in pattern.finditer(blank, max(start, reach), end))
                reach = end
        self.starts = [start for start, _ in found]
        self.ends = [end for _, end in found]

    def within(self, start: int, end: int) -> bool:
        index = bisect.bisect_left(self.starts, start)
        return index < len(self.starts) and self.ends[index] <= end


class _Links:
    """A text's URLs, found once (the URL pattern is one of the slower scans), the text with
    them blanked out (same length: what the paper says around them), and its bounds."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.bounds = _Bounds(text)
        self.urls = [(m.start(), m.group(0)) for m in _URL.finditer(text)]
        pieces, done = [], 0
        for start, url in self.urls:
            pieces += [text[done:start], " " * len(url)]
            done = start + len(url)
        self.blank = "".join([*pieces, text[done:]])


def _own_code_urls(links: _Links, names: frozenset[str]) -> set[str]:
    """Code-hosting URLs the paper presents as its own (a sentence or footnote saying "our code
    is available at ..."), those of an account named after an author, and every
    anonymous-repository link."""
    contexts: list[tuple[str, tuple[int, int]]] = []
    for start, found in links.urls:
        url = found.rstrip(".,;:")
        if _CODE_HOST.search(url):
            begin, end = links.bounds.sentence(start, start + len(found))
            line_start, _ = links.bounds.line(start, start + len(found))
            contexts.append((url, (min(begin, line_start), end)))
    if not contexts:
        return set()
    saying = _Sayings(links.blank, _OWN_CODE, [span for _, span in contexts])
    own: set[str] = set()
    for url, span in contexts:
        owner = _owner(url)
        authored = owner is not None and any(name in owner for name in names)
        if _ANONYMOUS_HOST.search(url) or saying.within(*span) or authored:
            own.add(url)
    return own


def _code_statements(links: _Links, own: set[str]) -> list[tuple[int, int]]:
    """Sentences (within their paragraph) that present the paper's code: one holding its own
    or an anonymous repository's URL, or naming a code host, and saying "our code is
    available" or the like; and every sentence only a submission writes (an anonymous link, a
    release upon acceptance). Short ones only (:data:`_STATEMENT_MAX_WORDS`)."""
    bounds, blank = links.bounds, links.blank
    anonymous: list[tuple[int, int]] = []
    by_url: list[tuple[int, int]] = []
    by_word: list[tuple[int, int]] = []
    for start, found in links.urls:
        url = found.rstrip(".,;:")
        if url in own:
            span = bounds.statement(start, start + len(url))
            (anonymous if _ANONYMOUS_HOST.search(url) else by_url).append(span)
    if _mentions(blank, _NEEDS[_HOST_WORD]):
        for match in _HOST_WORD.finditer(blank):  # "on GitHub": "our" code only
            by_word.append(bounds.statement(match.start(), match.end()))
    own_code, our_code = _Sayings(blank, _OWN_CODE, by_url), _Sayings(blank, _OUR_CODE, by_word)
    spans = anonymous + [s for s in by_url if own_code.within(*s)]
    spans += [s for s in by_word if our_code.within(*s)]
    if _mentions(links.text, _NEEDS[_SUBMISSION_ONLY]):
        spans += (bounds.statement(*m.span()) for m in _SUBMISSION_ONLY.finditer(links.text))
    short: list[tuple[int, int]] = []
    for start, end in sorted(set(spans)):
        if end - start > _STATEMENT_MAX_CHARS or len(blank[start:end].split()) > (
            _STATEMENT_MAX_WORDS
        ):
            continue
        if short and start < short[-1][1]:
            short[-1] = (short[-1][0], max(end, short[-1][1]))
        else:
            short.append((start, end))
    return short


def _strip_code_urls(text: str, removed: list[Removal]) -> str:
    """The paper's code statements (:func:`_code_statements`), then its own code URLs wherever
    else they appear (a footnote, a reference), with the words that introduce them."""
    links = _Links(text)
    own = _own_code_urls(links, author_names(removed, text))
    pieces, done = [], 0
    for start, end in _code_statements(links, own):
        removed.append(Removal(kind="code-statement", text=" ".join(text[start:end].split())))
        pieces.append(text[done:start])
        done = end
    text = "".join([*pieces, text[done:]])
    repositories = {r for r in map(_repository, own) if r}
    prefixes = sorted(own | repositories, key=len, reverse=True)
    if not prefixes:
        return text
    owners = {r.split("/")[1] for r in repositories if len(r.split("/")[1]) >= 4}
    bare_prefixes = [re.sub(r"^(?:https?://)?(?:www\.)?", "", p).lower() for p in prefixes]

    def is_own(url: str) -> bool:
        bare = re.sub(r"^(?:https?://)?(?:www\.)?", "", url.rstrip(".,;:")).lower()
        return any(bare.startswith(p) for p in bare_prefixes)

    def unwrap(match: re.Match[str]) -> str:
        """A link to an own URL becomes its text (whose URLs go next)."""
        if not is_own(match.group(2)):
            return match.group(0)
        removed.append(Removal(kind="code-url", text=match.group(2)))
        return match.group(1)

    def drop(match: re.Match[str]) -> str:
        if not is_own(match.group(1)):
            return match.group(0)
        removed.append(Removal(kind="code-url", text=match.group(1)))
        return "]"

    def rest(match: re.Match[str]) -> str:
        """The rest of a URL the PDF broke over two lines ("https://github.com/" then
        "owner/repo")."""
        if match.group(1) not in owners:
            return match.group(0)
        removed.append(Removal(kind="code-url", text=match.group(0)))
        return ""

    text = _LINK.sub(unwrap, text)
    text = _LINKED_URL.sub(drop, text)
    text = _drop_urls(text, is_own, removed)
    return _OWNER_PATH.sub(rest, text) if owners else text


def _drop_urls(text: str, is_own: Callable[[str], bool], removed: list[Removal]) -> str:
    """Every URL ``is_own`` names removed, with the words introducing it on its line."""
    pieces, done = [], 0
    for match in _URL.finditer(text):
        if not is_own(match.group(0)):
            continue
        removed.append(Removal(kind="code-url", text=match.group(0)))
        line_start = text.rfind("\n", done, match.start()) + 1 or done
        lead = _LEAD_IN.search(text, max(done, line_start, match.start() - 40), match.start())
        pieces.append(text[done : lead.start() if lead else match.start()])
        done = match.end()
    return "".join([*pieces, text[done:]])


def _replace(text: str, pattern: str, kind: str, removed: list[Removal]) -> str:
    def record(match: re.Match[str]) -> str:
        removed.append(Removal(kind=kind, text=match.group(0)))
        return ""

    return re.sub(pattern, record, text)


# -- the whole ------------------------------------------------------------------------------------


def _tidy(text: str) -> str:
    """Blank runs left by removals collapsed to one blank line; trailing spaces dropped."""
    lines = [line.rstrip() for line in text.splitlines()]
    text = "\n".join(lines)
    text = re.sub(r"\[\s*\]", "", text)  # a link whose text was the URL removed
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


_LineStep = Callable[[list[str], list[Removal]], list[str]]
_LINE_STEPS: tuple[_LineStep, ...] = (
    _strip_venue,
    _strip_line_numbers,
    _strip_author_block,
    _strip_acknowledgements,
    _strip_affiliation_notes,
)


_NEEDS: dict[re.Pattern[str], tuple[str, ...]] = {
    _FUNDING: ("supported", "funded", "sponsored", "financed"),
    _THANKS: ("thank", "grateful", "acknowledge", "anonymous"),
    _SUBMISSION_ONLY: ("anonym", "acceptance", "accepted", "published", "during"),
    _HOST_WORD: ("github", "gitlab", "bitbucket"),
}
"""Words a pattern's every match holds: a text without any is not searched."""


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
    body = _strip_sentences(body, _FUNDING, "funding", removed)
    body = _strip_sentences(body, _THANKS, "acknowledgements", removed)
    body = _strip_sentences(body, _AUTHOR_NOTE, "author-note", removed, _note_span)
    body = _strip_code_urls(body, removed)
    if "@" in body:
        body = _replace(body, _EMAIL.pattern, "email", removed)
    return Anonymised(text=_tidy(body), removed=removed)
