"""Acknowledgements and funding: an acknowledgement section (a line rule), and the sentences of
thanks, funding and author notes ("equal contribution", "work done while at ...") anywhere."""

from __future__ import annotations

import re

from papergym.review.anonymise.sentences import Bounds, strip_sentences
from papergym.review.anonymise.text import SECTION_NUMBER, block_text, is_heading, paragraphs
from papergym.review.records import Removal

_ACK_WORDS = r"acknowledge?ments?|funding(?:\s+information)?|financial\s+(?:support|disclosure)"
_ACK_HEADING = re.compile(
    rf"^\s*(?:#+\s*)?(?:\*\*|__|_)?\s*(?:{SECTION_NUMBER}\s+)?(?:{_ACK_WORDS})\s*[.:]?\s*"
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


def strip_acknowledgements(lines: list[str], removed: list[Removal]) -> list[str]:
    """An acknowledgement section: its heading (or a paragraph led by "Acknowledgements") and the
    paragraphs after it that read as thanks or funding, up to the next heading."""
    drop: set[int] = set()
    spans = paragraphs(lines)
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
            text = block_text(lines, nxt)
            if is_heading(lines[nxt[0]]) or _BOLD_LEAD.match(lines[nxt[0]]):
                break
            if not (owns_next and len(taken) == 1) and not _ACK_CONTENT.search(text):
                break
            taken.append(nxt)
            index += 1
        for start, end in taken:
            drop.update(range(start, end))
        text = "\n".join(block_text(lines, s) for s in taken).strip()
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


def _note_span(bounds: Bounds, start: int, end: int) -> tuple[int, int]:
    """An author note's span: its sentence, but not beyond its line and from its footnote mark
    on (a PDF extraction drops a page's footnotes into the middle of a body sentence)."""
    begin, finish = bounds.sentence(start, end)
    line_start, line_end = bounds.line(start, end)
    mark = bounds.last_mark(line_start, start)
    begin = max(begin, line_start, -1 if mark is None else mark)
    return begin, min(finish, line_end)


_FUNDING_WORDS = ("supported", "funded", "sponsored", "financed")
_THANKS_WORDS = ("thank", "grateful", "acknowledge", "anonymous")
"""Words every match of the pattern holds: a text without any is not searched."""


def strip_thanks(text: str, removed: list[Removal]) -> str:
    """The sentences of funding and of thanks, then the author notes (each from its footnote
    mark, within its line)."""
    text = strip_sentences(text, _FUNDING, "funding", removed, needs=_FUNDING_WORDS)
    text = strip_sentences(text, _THANKS, "acknowledgements", removed, needs=_THANKS_WORDS)
    return strip_sentences(text, _AUTHOR_NOTE, "author-note", removed, _note_span)
