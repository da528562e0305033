"""A BibTeX field value read as BibTeX reads it: :func:`bib_value`.

bibtexparser splits a ``.bib`` into entries and fields; its own string middleware replaces a
value that is exactly one ``@string`` name, but not a concatenation (``s38 # " " # s39``), and
its brace-removing middleware turns ``{a} # {b}`` into ``a} # {b``. PaperGym therefore takes the
raw values and reads them here: ``{...}`` and ``"..."`` parts, numbers and ``@string`` names,
joined by ``#``. Text that is none of these (``{x} year={2019}``: a comma missing) is a
:class:`BadBibValue`, so the entry is reported instead of read with a garbled title.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
MONTHS = {name[:3].lower(): name for name in _MONTH_NAMES}
"""BibTeX's built-in macros ``jan`` ... ``dec``."""
_NAME = re.compile(r"[^\s\"#%'(),={}]+")  # an @string name, as BibTeX allows it
_NUMBER = re.compile(r"\d+")
_BRACES = re.compile(r"[{}]")


class BadBibValue(ValueError):
    """A field value that is not BibTeX: e.g. ``{x} year={2019}``, where a comma is missing."""


def _group_end(raw: str, start: int) -> int:
    """The index just past the ``}`` that closes the ``{`` at ``start``."""
    depth = 0
    for match in _BRACES.finditer(raw, start):
        depth += 1 if match.group() == "{" else -1
        if depth == 0:
            return match.end()
    raise BadBibValue("a brace is never closed")


def _quoted_end(raw: str, start: int) -> int:
    """The index just past the ``"`` that closes the one at ``start`` (braces protect quotes)."""
    depth, pos = 0, start + 1
    while pos < len(raw):
        char = raw[pos]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == '"' and depth == 0:
            return pos + 1
        pos += 1
    raise BadBibValue("a quote is never closed")


def _skip_space(raw: str, pos: int) -> int:
    while pos < len(raw) and raw[pos].isspace():
        pos += 1
    return pos


def _pieces(raw: str) -> list[tuple[str, str]]:
    """The parts of a value joined by ``#``: ``("text", ...)`` for ``{...}``/``"..."``,
    ``("number", ...)``, and ``("name", ...)`` for an @string macro."""
    pieces: list[tuple[str, str]] = []
    pos = _skip_space(raw, 0)
    while True:
        if pos == len(raw):
            raise BadBibValue("a value is missing")
        char = raw[pos]
        if char in '{"':
            end = _group_end(raw, pos) if char == "{" else _quoted_end(raw, pos)
            pieces.append(("text", raw[pos + 1 : end - 1]))
        elif (match := _NUMBER.match(raw, pos)) or (match := _NAME.match(raw, pos)):
            end = match.end()
            pieces.append(("number" if match.re is _NUMBER else "name", match.group()))
        else:
            raise BadBibValue(f"unexpected {char!r}")
        pos = _skip_space(raw, end)
        if pos == len(raw):
            return pieces
        if raw[pos] != "#":
            shown = " ".join(raw[pos : pos + 30].split())
            raise BadBibValue(f"unexpected text after a value: {shown!r} (a comma missing?)")
        pos = _skip_space(raw, pos + 1)


def bib_value(raw: str, strings: Mapping[str, str]) -> str:
    """A field's value as BibTeX reads it: ``{...}`` and ``"..."`` parts, numbers, and @string
    names (``strings``, keyed by lower-case name; the month names built in), concatenated
    with ``#``.

    A name no @string defines is kept as written (a venue abbreviation such as ``NIPS`` from a
    strings file the paper loads separately still says something). Raises
    :class:`BadBibValue` for text that is not a BibTeX value.
    """
    if len(raw) > 1 and raw[0] == "{" and raw[-1] == "}" and _group_end(raw, 0) == len(raw):
        return raw[1:-1]  # the common case: one braced value
    parts: list[str] = []
    for kind, text in _pieces(raw):
        if kind == "name":
            lowered = text.lower()
            text = strings.get(lowered, MONTHS.get(lowered, text))
        parts.append(text)
    return "".join(parts)
