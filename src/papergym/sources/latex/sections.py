"""Splitting a document body into headed sections, with appendix flags and parent paths."""

from __future__ import annotations

import re
from dataclasses import dataclass

from papergym.sources.latex.blocks import read_arguments
from papergym.sources.latex.scan import is_escaped

HEADING_LEVELS = {
    "part": -1,
    "chapter": 0,
    "section": 1,
    "subsection": 2,
    "subsubsection": 3,
    "paragraph": 4,
    "subparagraph": 5,
}
_HEADING = re.compile(r"\\(" + "|".join(HEADING_LEVELS) + r"|appendix)(?![A-Za-z@])")
APPENDIX_MARKER = "\\appendix "
_APPENDIX_TITLE = re.compile(
    r"^\s*(appendix|appendices|supplementary|supplemental|online appendix)\b", re.IGNORECASE
)
_REFERENCES_TITLE = re.compile(r"^\s*(references|bibliography|works cited)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class RawSection:
    """A section still in LaTeX: its heading and body source."""

    level: int
    heading: str
    body: str
    appendix: bool


def split_sections(body: str) -> tuple[str, list[RawSection]]:
    """The text before the first heading, and every headed section in order.

    A section's body runs to the next heading of any level. ``\\appendix`` flags every section
    after it; so does a top-level heading that starts with "Appendix" or "Supplementary".
    """
    headings: list[tuple[int, int, int, str]] = []  # (start, end, level, heading latex)
    appendix_at: int | None = None
    for match in _HEADING.finditer(body):
        if is_escaped(body, match.start()):
            continue
        if match.group(1) == "appendix":
            appendix_at = match.start() if appendix_at is None else appendix_at
            continue
        parsed = read_arguments(body, match.end(), "*[{")
        if parsed is None:
            continue  # "\let\origsection\section" and friends: not a heading
        (_, short, title), end = parsed
        headings.append((match.start(), end, HEADING_LEVELS[match.group(1)], title or short or ""))
    if not headings:
        return body, []
    lead = body[: headings[0][0]]
    sections: list[RawSection] = []
    in_appendix = False
    for index, (start, end, level, title) in enumerate(headings):
        stop = headings[index + 1][0] if index + 1 < len(headings) else len(body)
        in_appendix = in_appendix or (appendix_at is not None and appendix_at < start)
        if level <= 1 and _APPENDIX_TITLE.match(_plain(title)):
            in_appendix = True
        sections.append(RawSection(level, title, body[end:stop], in_appendix))
    return lead, sections


def _plain(latex: str) -> str:
    return re.sub(r"\\[A-Za-z@]+|[{}]", "", latex)


def is_references_heading(heading: str) -> bool:
    """True for a hand-written "References" section, whose content is a citation list."""
    return _REFERENCES_TITLE.match(heading) is not None


def parent_paths(levels: list[int], headings: list[str]) -> list[tuple[str, ...]]:
    """For each section, the headings of its enclosing sections, outermost first."""
    stack: list[tuple[int, str]] = []
    paths: list[tuple[str, ...]] = []
    for level, heading in zip(levels, headings, strict=True):
        while stack and stack[-1][0] >= level:
            stack.pop()
        paths.append(tuple(h for _, h in stack))
        stack.append((level, heading))
    return paths
