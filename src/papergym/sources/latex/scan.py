"""Low-level scanning of LaTeX source: comments, balanced groups and macro arguments.

These helpers work on raw source text before it is handed to the LaTeX parser. They know just
enough TeX to find the end of a ``{...}`` group, skip an escaped ``\\%`` and read the arguments
of a command, so that the steps built on them (input resolution, macro expansion, cutting out
environments) never need a regular expression to match nested braces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONTROL_WORD = re.compile(r"\\([A-Za-z@]+)")


def is_escaped(text: str, pos: int) -> bool:
    """True when the character at ``pos`` is preceded by an odd number of backslashes."""
    count = 0
    pos -= 1
    while pos >= 0 and text[pos] == "\\":
        count += 1
        pos -= 1
    return count % 2 == 1


def strip_comments(text: str) -> str:
    """Remove ``%`` comments (but not ``\\%``); a line that was only a comment disappears.

    Keeping the newline after a trailing comment preserves paragraph breaks, which matter more
    for readable text than TeX's exact treatment of the end of a commented line.
    """
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        cut = _comment_start(line)
        if cut is None:
            out.append(line)
        elif line[:cut].strip():
            out.append(line[:cut].rstrip(" \t") + ("\n" if line.endswith("\n") else ""))
        # a whole-line comment vanishes, newline included
    return "".join(out)


def _comment_start(line: str) -> int | None:
    start = 0
    while True:
        pos = line.find("%", start)
        if pos < 0:
            return None
        if not is_escaped(line, pos):
            return pos
        start = pos + 1


def skip_space(text: str, pos: int, *, newlines: bool = True) -> int:
    """Index of the first character at or after ``pos`` that is not white space."""
    while pos < len(text) and text[pos] in (" \t\r\n" if newlines else " \t"):
        if not newlines and text[pos] == "\n":
            break
        pos += 1
    return pos


def find_matching(text: str, pos: int, open_char: str = "{", close_char: str = "}") -> int:
    """Index of the delimiter closing the one at ``pos``, or -1 when it is never closed.

    Braces inside the group nest; escaped delimiters (``\\{``) do not count.
    """
    depth = 0
    i = pos
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == open_char:
            depth += 1
        elif char == close_char:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def find_bracket_end(text: str, pos: int) -> int:
    """Index of the ``]`` closing the ``[`` at ``pos``, skipping ``{...}`` groups; -1 if none."""
    i = pos + 1
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            end = find_matching(text, i)
            if end < 0:
                return -1
            i = end + 1
            continue
        if char == "]":
            return i
        i += 1
    return -1


@dataclass(frozen=True)
class Argument:
    """One argument read from the source: its content and where it ended (exclusive)."""

    value: str
    end: int


def read_group(text: str, pos: int) -> Argument | None:
    """Read a mandatory argument at ``pos`` (after optional spaces).

    A braced group returns its content; otherwise a single token (a control sequence or one
    character) is the argument, as in TeX (``\\frac12``). ``None`` when the text ends or the
    group is never closed.
    """
    pos = skip_space(text, pos)
    if pos >= len(text):
        return None
    if text[pos] == "{":
        end = find_matching(text, pos)
        return None if end < 0 else Argument(text[pos + 1 : end], end + 1)
    if text[pos] == "\\":
        word = CONTROL_WORD.match(text, pos)
        end = word.end() if word else min(pos + 2, len(text))
        return Argument(text[pos:end], end)
    if text[pos] in "}]":
        return None
    return Argument(text[pos], pos + 1)


def read_optional(text: str, pos: int) -> Argument | None:
    """Read an optional ``[...]`` argument at ``pos`` (after spaces on the same line), if any."""
    start = skip_space(text, pos, newlines=False)
    if start >= len(text) or text[start] != "[":
        return None
    end = find_bracket_end(text, start)
    return None if end < 0 else Argument(text[start + 1 : end], end + 1)


def read_star(text: str, pos: int) -> tuple[bool, int]:
    """Whether a ``*`` follows at ``pos``, and the position after it."""
    if pos < len(text) and text[pos] == "*":
        return True, pos + 1
    return False, pos
