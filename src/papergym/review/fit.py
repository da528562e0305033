"""Fitting a long paper into a reviewer model's context by a fixed, recorded rule.

A reviewer reads at most ``max_words`` words of a paper. A paper longer than that is cut, always
the same way, and the rule applied is returned as one readable line for
:attr:`~papergym.review.records.PaperReview.fit`:

1. the references (everything from a "References"/"Bibliography" heading to the next appendix
   heading, or to the end) are dropped: they say little about the paper's merit and are long;
2. then the appendices (an "Appendix" heading, or any heading after the references);
3. then every remaining section is cut to its first ``c`` words, with ``c`` the largest cap
   under which the paper fits ("water filling"): short sections stay whole, long ones are cut
   evenly, and every section's beginning — method, experiments, conclusion — stays visible.

Sections are found by heading lines: markdown headings (``# …``), numbered or lettered
headings in capitals (``3 EXPERIMENTS``, ``A.1 PROOFS``) as PDF-to-text gives them, and the
bare names of the back matter. Pure and deterministic: the same text and budget give the same
cut.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKDOWN_HEADING = re.compile(r"^#{1,6}\s+\S")
_NUMBERED_HEADING = re.compile(
    r"^(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*)\.?\s+[A-Z][A-Z0-9 ,:;&'()/\-]{2,}$"
)
_REFERENCES = re.compile(r"^(?:#+\s*)?(?:\d+\.?\s*)?(?:references|bibliography)\s*$", re.I)
# an appendix heading: a markdown heading or a line in capitals that names it, or "Appendix"
# alone, or "Appendix B: Title" (a sentence wrapped at "Appendix A." is not one)
_APPENDIX = re.compile(
    r"^#+\s*.*\b(?i:appendix|appendices|supplementary)\b"
    r"|^(?:[A-Z](?:\.\d+)*\.?\s+)?(?:APPENDIX|APPENDICES|SUPPLEMENTARY)\b[^a-z]*$"
    r"|^(?:Appendix|Appendices)(?:\s+[A-Z](?:\.\d+)*)?(?:\s*[:\-\u2013]\s*[A-Z][^.]*)?$"
)
MAX_HEADING_WORDS = 14
"""A longer line is prose, not a heading."""


@dataclass(frozen=True)
class Block:
    """A heading and the lines under it (the text before the first heading has no heading)."""

    heading: str
    lines: tuple[str, ...]
    kind: str  # "body", "references" or "appendix"

    @property
    def words(self) -> int:
        return sum(len(line.split()) for line in (self.heading, *self.lines))


@dataclass(frozen=True)
class Fitted:
    """The text a reviewer reads and, when it had to be cut, the rule that cut it."""

    text: str
    rule: str | None
    words: int
    original_words: int


def is_heading(line: str) -> bool:
    """Whether ``line`` reads as a section heading (see the module docstring)."""
    stripped = line.strip()
    if not stripped or len(stripped.split()) > MAX_HEADING_WORDS:
        return False
    return bool(
        _MARKDOWN_HEADING.match(stripped)
        or _NUMBERED_HEADING.match(stripped)
        or _REFERENCES.match(stripped)
        or _APPENDIX.match(stripped)
    )


def blocks(text: str) -> list[Block]:
    """The paper split at its headings, each block marked body, references or appendix."""
    found: list[Block] = []
    heading, lines = "", []
    kind, seen_references = "body", False
    for line in text.splitlines():
        if not is_heading(line):
            lines.append(line)
            continue
        found.append(Block(heading, tuple(lines), kind))
        heading, lines = line, []
        name = line.strip()
        if _REFERENCES.match(name):
            kind, seen_references = "references", True
        elif _APPENDIX.match(name) or seen_references:
            kind = "appendix"
    found.append(Block(heading, tuple(lines), kind))
    return [b for b in found if b.heading or any(line.strip() for line in b.lines)]


def _render(kept: list[Block], cap: int | None) -> str:
    parts = []
    for block in kept:
        body = "\n".join(block.lines)
        if cap is not None:
            words = body.split()
            if len(words) > cap:
                body = " ".join(words[:cap]) + " […]"
        parts.append(f"{block.heading}\n{body}" if block.heading else body)
    return "\n".join(parts).strip()


def _cap(sizes: list[int], budget: int) -> int:
    """The largest per-section cap c with sum(min(size, c)) <= budget (0 when none fits)."""
    low, high = 0, max(sizes, default=0)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(size, middle) for size in sizes) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def fit_paper(text: str, max_words: int) -> Fitted:
    """``text`` cut to at most ``max_words`` words by the module's rule, and the rule applied."""
    original = len(text.split())
    if original <= max_words:
        return Fitted(text, None, original, original)
    kept = blocks(text)
    steps: list[str] = []
    for kind in ("references", "appendix"):
        dropped = [b for b in kept if b.kind == kind]
        if dropped and sum(b.words for b in kept) > max_words:
            kept = [b for b in kept if b.kind != kind]
            steps.append(f"dropped {kind} ({sum(b.words for b in dropped)} words)")
    cap: int | None = None
    if sum(b.words for b in kept) > max_words:
        heading_words = sum(len(b.heading.split()) for b in kept)
        sizes = [b.words - len(b.heading.split()) for b in kept]
        # room for the " […]" mark of each cut section
        cap = _cap(sizes, max(0, max_words - heading_words - len(kept)))
        cut = sum(size > cap for size in sizes)
        steps.append(f"cut {cut} of {len(kept)} sections to their first {cap} words")
    fitted = _render(kept, cap)
    words = len(fitted.split())
    rule = f"kept {words} of {original} words (limit {max_words}): " + "; ".join(steps)
    return Fitted(fitted, rule, words, original)
