"""What the anonymisation rules share: markup, blank-line blocks, headings and running prose, and
the patterns of an email address, a URL and an institution's name."""

from __future__ import annotations

import itertools
import re

_MARKUP = re.compile(r"[*_#`\[\]()]+")


def plain_text(line: str) -> str:
    return _MARKUP.sub(" ", line).strip()


SECTION_NUMBER = r"(?:[A-Z]|\d+)(?:\.\d+)*\.?"
EMAIL = re.compile(
    r"(?:\{[^{}\n]{1,200}\}|(?<![\w.+-])[\w.+-]+)@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", re.IGNORECASE
)
"""An email address. Its local part starts where its run of ``[\\w.+-]`` starts (the
look-behind): without it every position of a long run (``"a" * 80000``) is tried again, which
is quadratic. A match inside a run is also one from the run's start, so nothing is lost but two
addresses glued together by "_" or "+" (the second is not found)."""
_PROSE_MIN_WORDS = 12
_LOWERCASE_SHARE = 0.55
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
    plain = plain_text(stripped)
    words = re.findall(r"[A-Za-z]+", plain)
    if not words or len(plain.split()) > 10 or plain.endswith((".", ",", ";")):
        return False
    letters = "".join(words)
    return len(letters) >= 4 and letters.isupper()


def is_prose(block: str) -> bool:
    """Running text, as an abstract is: enough words, mostly lowercase, no email address. Author
    lists and affiliations are short and mostly capitalised."""
    if EMAIL.search(block):
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


def is_prose_line(line: str) -> bool:
    """A line of running text: eight or more words, mostly lowercase (not a name or an
    affiliation)."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", line)
    return len(words) >= 8 and sum(w[0].islower() for w in words) / len(words) >= 0.6


def blocks(lines: list[str]) -> list[tuple[int, int]]:
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


def paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """:func:`blocks`, each also split before a heading line inside it (a PDF extraction often
    leaves no blank line before "REFERENCES")."""
    spans = []
    for start, end in blocks(lines):
        cuts = [start, *(i for i in range(start + 1, end) if is_heading(lines[i])), end]
        spans += list(itertools.pairwise(cuts))
    return spans


def block_text(lines: list[str], span: tuple[int, int]) -> str:
    return "\n".join(lines[span[0] : span[1]])


AFFILIATION = re.compile(
    r"\b(?:universit\w*|institut\w*|college|school\s+of|department|laborator\w*|labs?|"
    r"research|academy|inc|ltd|llc|corporation|company|google|microsoft|meta|deepmind|facebook|"
    r"amazon|ibm|nvidia|huawei|tencent|alibaba|baidu|bytedance|samsung|intel|apple|adobe)\b",
    re.IGNORECASE,
)


def mentions(text: str, words: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``words`` (lowercase), in any case: a substring test, far
    cheaper than the search of a pattern that cannot match without one of them."""
    lowered = text.lower()
    return any(word in lowered for word in words)


_HOSTS = r"github\.com|gitlab\.com|bitbucket\.org|github\.io|4open\.science"
URL = re.compile(
    rf"(?:https?://|www\.)[^\s()<>\]]+|(?<![\w.-])(?:[\w-]+\.)*(?:{_HOSTS})(?:/[^\s()<>\]]*)?",
    re.IGNORECASE,
)
"""A URL, or a code host's address without its scheme (a PDF extraction breaks a URL over two
lines: "https://anonymous.4open." then "science/r/..."). Host names start where their run
starts (the look-behind), so the search stays linear."""
