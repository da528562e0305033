"""The cheap heuristic prefilter: documents no question should be asked from, without an LLM.

The rules are those web-corpus quality filters apply (Gopher's quality and repetition rules,
C4's boilerplate lines, FineWeb's line punctuation), written afresh as pure functions over the
text and the limits of the ``ares`` config section. Each rule returns ``None`` when the document
passes it, or the reason it fails, which starts with the rule's name (``min_words: ...``) so
that drops can be counted per rule. The cheapest rules run first and the first failure wins:
every document the prefilter rejects is one LLM classifier call saved.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from papergym.settings.models import AresSection

Rule = Callable[[str, AresSection], str | None]

STOP_WORDS = frozenset({"the", "be", "to", "of", "and", "that", "have", "with"})
"""Gopher's function words: any real English prose uses a few of them."""

TERMINAL_PUNCTUATION = (".", "!", "?", ":", ";", '"', "'", ")", "”", "’", "»", "。", "！", "？")
# A bullet glyph, or a dash or star before a space ("**Bold** text" starts no list item).
_BULLET = re.compile(r"[•●▪◦‣]|[-*+–]\s")
# What starts a line of its own even inside a paragraph: a bullet, a numbered or lettered list
# item, a Markdown heading or table row.
_ITEM = re.compile(_BULLET.pattern + r"|(?:\d{1,3}[.)]|\(?[a-zA-Z0-9]{1,3}\)|#{1,6})\s|\|")
ELLIPSES = ("...", "…")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_LETTER = re.compile(r"[^\W\d_]")
_QUOTE_MARKS = re.compile(r"^(?:[ \t]*>)+[ \t]?")
_MARKDOWN_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^()\s]*(?:\s+\"[^\"]*\")?\)")
_HEADING_MARKS = re.compile(r"(?m)^#{1,6}(?=\s)")
_HYPHENATED = re.compile(r"\w-$")
WRAPPED_LINE = 30
"""Shortest line taken as hard-wrapped: a paragraph wrapped at 40 to 200 characters (mail at
72, terminals at 80, PDF extractions at 50 to 130) leaves no shorter line but its last one;
list items, menu entries and headings are shorter."""


@lru_cache(maxsize=16)
def _quoted_lines(text: str) -> tuple[tuple[int, str], ...]:
    """Every line as (quote depth, what a reader reads of it): no quote marks, no outer
    spaces, a Markdown link or image as its text alone (``[text](url)`` → ``text``)."""
    lines = []
    for raw in text.splitlines():
        marks = _QUOTE_MARKS.match(raw)
        depth = marks.group().count(">") if marks else 0
        line = (raw[marks.end() :] if marks else raw).strip()
        lines.append((depth, _MARKDOWN_LINK.sub(r"\1", line) if "](" in line else line))
    return tuple(lines)


@lru_cache(maxsize=16)
def body_of(text: str) -> str:
    """The words a reader reads: the text without e-mail quote marks (``> ``), Markdown link
    targets and heading marks (``## ``), which are markup, not words (a heading mark is no
    hashtag, a badge's URL no long word)."""
    return _HEADING_MARKS.sub("", "\n".join(line for _, line in _quoted_lines(text)))


def continues(line: str, following: str) -> bool:
    """Whether ``following`` carries on the sentence ``line`` was cut in by hard wrapping: a
    long line that does not end a sentence, followed by a line that starts in lower case, with
    a bracket, or with a digit after a word, and is no list item or heading. A capital does not
    continue a line: a menu, a list of titles or links, or a table is never joined into one
    line, so the rules still see its lines (a wrapped sentence cut before a name stays cut,
    which only costs a prose document a line that does not end in punctuation)."""
    return (
        len(line) >= WRAPPED_LINE
        and not line.endswith(TERMINAL_PUNCTUATION + ELLIPSES)
        and (
            following[0].islower()
            or following[0] == "("
            or (following[0].isdigit() and line[-1].isalpha())  # not a table's next row
        )
        and _ITEM.match(following) is None
    )


@lru_cache(maxsize=16)
def _logical_lines(text: str) -> tuple[str, ...]:
    joined: list[str] = []
    previous: tuple[int, str] | None = None
    for depth, line in _quoted_lines(text):
        if not line:
            previous = None
            continue
        if previous is not None and previous[0] == depth and continues(previous[1], line):
            glue = "" if _HYPHENATED.search(previous[1]) else " "
            joined[-1] = f"{joined[-1]}{glue}{line}"
        else:
            joined.append(line)
        previous = (depth, line)
    return tuple(joined)


def lines_of(text: str) -> list[str]:
    """The lines the line rules judge: non-blank, stripped, without quote marks, and the lines
    of a hard-wrapped paragraph joined back where a sentence was cut (:func:`continues`).

    The rules come from web corpora, whose extractors give a paragraph a line; text wrapped at
    a fixed width (PDF extractions, mail, plain-text files) would otherwise have most of its
    lines end mid-sentence, and read as a menu to ``punctuated_lines``."""
    return list(_logical_lines(text))


def paragraphs_of(text: str) -> list[str]:
    """Blocks separated by blank lines, whitespace-normalised."""
    return [" ".join(p.split()) for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def share(count: int, total: int) -> float:
    return count / total if total else 0.0


def duplicate_share(items: Sequence[str]) -> float:
    """Share of ``items`` equal to an earlier item."""
    seen: set[str] = set()
    repeats = 0
    for item in items:
        if item in seen:
            repeats += 1
        seen.add(item)
    return share(repeats, len(items))


# --- the rules, cheapest first ---------------------------------------------------------------


def word_count(text: str, limits: AresSection) -> str | None:
    words = len(body_of(text).split())
    if words < limits.min_words:
        return f"min_words: {words} words, fewer than {limits.min_words}"
    if words > limits.max_words:
        return f"max_words: {words} words, more than {limits.max_words}"
    return None


def mean_word_length(text: str, limits: AresSection) -> str | None:
    words = body_of(text).split()
    mean = sum(len(w) for w in words) / len(words) if words else 0.0
    if mean < limits.min_mean_word_length:
        return f"mean_word_length: {mean:.1f} characters, below {limits.min_mean_word_length}"
    if mean > limits.max_mean_word_length:
        return f"mean_word_length: {mean:.1f} characters, above {limits.max_mean_word_length}"
    return None


def symbol_ratio(text: str, limits: AresSection) -> str | None:
    body = body_of(text)
    words = max(len(body.split()), 1)
    symbols = body.count("#") + sum(body.count(e) for e in ELLIPSES)
    ratio = symbols / words
    if ratio > limits.max_symbol_word_ratio:
        return (
            f"symbol_ratio: {ratio:.2f} '#'/ellipsis per word, above {limits.max_symbol_word_ratio}"
        )
    return None


def alphabetic_words(text: str, limits: AresSection) -> str | None:
    words = body_of(text).split()
    ratio = share(sum(bool(_LETTER.search(w)) for w in words), len(words))
    if ratio < limits.min_alpha_words:
        return f"alpha_words: {ratio:.2f} of words hold a letter, below {limits.min_alpha_words}"
    return None


def non_alphabetic_chars(text: str, limits: AresSection) -> str | None:
    visible = [c for c in body_of(text) if not c.isspace()]
    ratio = share(sum(not c.isalpha() for c in visible), len(visible))
    if ratio > limits.max_non_alpha_chars:
        return f"non_alpha_chars: {ratio:.2f} of characters are not letters, above {limits.max_non_alpha_chars}"
    return None


def stop_words(text: str, limits: AresSection) -> str | None:
    found = sum(1 for w in body_of(text).lower().split() if w.strip(".,;:!?\"'()") in STOP_WORDS)
    if found < limits.min_stop_words:
        return f"stop_words: {found} common function words, fewer than {limits.min_stop_words}"
    return None


def placeholder_text(text: str, limits: AresSection) -> str | None:
    if "lorem ipsum" in " ".join(body_of(text).lower().split()):  # wrapped between the words too
        return "boilerplate: lorem ipsum placeholder text"
    return None


def bullet_lines(text: str, limits: AresSection) -> str | None:
    lines = lines_of(text)
    ratio = share(sum(_BULLET.match(line) is not None for line in lines), len(lines))
    if ratio > limits.max_bullet_lines:
        return f"bullet_lines: {ratio:.2f} of lines are bullets, above {limits.max_bullet_lines}"
    return None


def ellipsis_lines(text: str, limits: AresSection) -> str | None:
    lines = lines_of(text)
    ratio = share(sum(line.endswith(ELLIPSES) for line in lines), len(lines))
    if ratio > limits.max_ellipsis_lines:
        return f"ellipsis_lines: {ratio:.2f} of lines end in an ellipsis, above {limits.max_ellipsis_lines}"
    return None


def punctuated_lines(text: str, limits: AresSection) -> str | None:
    lines = lines_of(text)
    ratio = share(sum(line.endswith(TERMINAL_PUNCTUATION) for line in lines), len(lines))
    if ratio < limits.min_punctuated_lines:
        return f"punctuated_lines: {ratio:.2f} of lines end in punctuation, below {limits.min_punctuated_lines}"
    return None


def duplicate_lines(text: str, limits: AresSection) -> str | None:
    ratio = duplicate_share(lines_of(text))
    if ratio > limits.max_duplicate_lines:
        return f"duplicate_lines: {ratio:.2f} of lines repeat an earlier one, above {limits.max_duplicate_lines}"
    return None


def duplicate_paragraphs(text: str, limits: AresSection) -> str | None:
    ratio = duplicate_share(paragraphs_of(text))
    if ratio > limits.max_duplicate_paragraphs:
        return f"duplicate_paragraphs: {ratio:.2f} of paragraphs repeat an earlier one, above {limits.max_duplicate_paragraphs}"
    return None


def boilerplate_lines(text: str, limits: AresSection) -> str | None:
    phrases = [p.lower() for p in limits.boilerplate if p.strip()]
    lines = lines_of(text)
    hits = sum(any(p in line.lower() for p in phrases) for line in lines)
    ratio = share(hits, len(lines))
    if ratio > limits.max_boilerplate_lines:
        return f"boilerplate: {ratio:.2f} of lines are boilerplate (cookies, javascript, rights...), above {limits.max_boilerplate_lines}"
    return None


RULES: tuple[Rule, ...] = (
    word_count,
    mean_word_length,
    symbol_ratio,
    alphabetic_words,
    non_alphabetic_chars,
    stop_words,
    placeholder_text,
    bullet_lines,
    ellipsis_lines,
    punctuated_lines,
    duplicate_lines,
    duplicate_paragraphs,
    boilerplate_lines,
)


def prefilter_reason(text: str, limits: AresSection) -> str | None:
    """Why the first failing rule rejects ``text``, or None when every rule passes."""
    if not text.strip():
        return "empty: the document has no text"
    for rule in RULES:
        reason = rule(text, limits)
        if reason is not None:
            return reason
    return None


def rule_of(reason: str) -> str:
    """The rule a prefilter reason names (the part before the first colon)."""
    return reason.split(":", 1)[0]
