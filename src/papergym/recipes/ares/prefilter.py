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

from papergym.recipes.ares.settings import AresSection

Rule = Callable[[str, AresSection], str | None]

STOP_WORDS = frozenset({"the", "be", "to", "of", "and", "that", "have", "with"})
"""Gopher's function words: any real English prose uses a few of them."""

TERMINAL_PUNCTUATION = (".", "!", "?", ":", ";", '"', "'", ")", "”", "’", "»", "。", "！", "？")
BULLETS = ("•", "●", "▪", "◦", "‣", "-", "*", "–")
ELLIPSES = ("...", "…")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_LETTER = re.compile(r"[^\W\d_]")


def lines_of(text: str) -> list[str]:
    """The non-blank lines, stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]


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
    words = len(text.split())
    if words < limits.min_words:
        return f"min_words: {words} words, fewer than {limits.min_words}"
    if words > limits.max_words:
        return f"max_words: {words} words, more than {limits.max_words}"
    return None


def mean_word_length(text: str, limits: AresSection) -> str | None:
    words = text.split()
    mean = sum(len(w) for w in words) / len(words) if words else 0.0
    if mean < limits.min_mean_word_length:
        return f"mean_word_length: {mean:.1f} characters, below {limits.min_mean_word_length}"
    if mean > limits.max_mean_word_length:
        return f"mean_word_length: {mean:.1f} characters, above {limits.max_mean_word_length}"
    return None


def symbol_ratio(text: str, limits: AresSection) -> str | None:
    words = max(len(text.split()), 1)
    symbols = text.count("#") + sum(text.count(e) for e in ELLIPSES)
    ratio = symbols / words
    if ratio > limits.max_symbol_word_ratio:
        return (
            f"symbol_ratio: {ratio:.2f} '#'/ellipsis per word, above {limits.max_symbol_word_ratio}"
        )
    return None


def alphabetic_words(text: str, limits: AresSection) -> str | None:
    words = text.split()
    ratio = share(sum(bool(_LETTER.search(w)) for w in words), len(words))
    if ratio < limits.min_alpha_words:
        return f"alpha_words: {ratio:.2f} of words hold a letter, below {limits.min_alpha_words}"
    return None


def non_alphabetic_chars(text: str, limits: AresSection) -> str | None:
    visible = [c for c in text if not c.isspace()]
    ratio = share(sum(not c.isalpha() for c in visible), len(visible))
    if ratio > limits.max_non_alpha_chars:
        return f"non_alpha_chars: {ratio:.2f} of characters are not letters, above {limits.max_non_alpha_chars}"
    return None


def stop_words(text: str, limits: AresSection) -> str | None:
    found = sum(1 for w in text.lower().split() if w.strip(".,;:!?\"'()") in STOP_WORDS)
    if found < limits.min_stop_words:
        return f"stop_words: {found} common function words, fewer than {limits.min_stop_words}"
    return None


def placeholder_text(text: str, limits: AresSection) -> str | None:
    if "lorem ipsum" in text.lower():
        return "boilerplate: lorem ipsum placeholder text"
    return None


def bullet_lines(text: str, limits: AresSection) -> str | None:
    lines = lines_of(text)
    ratio = share(sum(line.startswith(BULLETS) for line in lines), len(lines))
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
