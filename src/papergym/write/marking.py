"""Pure rules on written LaTeX: which numbers are reported results, marking them as simulated,
and keeping only citations the bibliography has.

A *reported number* is a numeral that stands as a quantity in the prose or a table cell:
``93.2``, ``-0.5``, ``12\\%``, ``3x``, ``\\textbf{71.4}``. Not one: digits inside a word or a
name (``ResNet-50``, ``GPT2``), in a superscript or a fraction (``x^2``, ``\\frac{1}{2}``), in a
length (``3cm``), or in the argument of a citation, reference, label, URL or environment name.
The writer marks every reported number of a results-bearing part as ``\\simulated{93.2}`` (a
dagger in the PDF); with ``--plan-only`` such a part must hold none.
"""

from __future__ import annotations

import re
from collections.abc import Collection

SIMULATED_MACRO = r"\newcommand{\simulated}[1]{#1\ensuremath{^{\dagger}}}"
"""The preamble line that typesets a marked number with a dagger."""

_PROTECTED = re.compile(
    r"\\(?:[A-Za-z]*cite[A-Za-z]*|nocite|ref|eqref|autoref|cref|Cref|pageref|nameref|label|"
    r"url|href|includegraphics|simulated|begin|end|input|include|bibliography[A-Za-z]*|"
    r"hspace|vspace|setlength|resizebox|scalebox|rule|multicolumn|multirow|cline|"
    r"cmidrule|arraystretch)\*?"
    r"(?:\s*\[[^\]]*\])*(?:\s*\{[^{}]*\})*"
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# Before a reported number: nothing, space, punctuation that opens or separates, a table's &.
_OPENERS = set(" \t\n(=<>~$,;:/&|") | {"\u2248", "\u00b1"}
_TEXT_FORMAT = re.compile(r"\\(?:textbf|textit|emph|underline|mathbf|mathrm|text|bm)\s*\{$")
_PLUS_MINUS = re.compile(r"\\(?:pm|approx|sim|times|leq|geq|le|ge)\s*$")
_SIMULATED = re.compile(r"\\simulated\s*\{([^{}]*)\}")
_CITE = re.compile(
    r"(~|\s)?\\([A-Za-z]*cite[A-Za-z]*|nocite)\*?((?:\s*\[[^\]]*\])*)\s*\{([^{}]*)\}"
)


def _protected_spans(latex: str) -> list[tuple[int, int]]:
    return [m.span() for m in _PROTECTED.finditer(latex)]


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _opens_number(latex: str, start: int) -> bool:
    """Whether the text before ``start`` lets a numeral there be a quantity."""
    if start == 0:
        return True
    before = latex[start - 1]
    if before in "-\u2212+" and (start == 1 or latex[start - 2] in _OPENERS):
        return True  # a signed number: " -0.5"
    if before in _OPENERS:
        return True
    if before == "{":
        return _TEXT_FORMAT.search(latex[max(0, start - 20) : start]) is not None
    return _PLUS_MINUS.search(latex[max(0, start - 10) : start]) is not None


def _closes_number(latex: str, end: int) -> bool:
    """Whether the text after ``end`` ends the numeral as a quantity (not a word or unit)."""
    after = latex[end : end + 2]
    if not after or (not after[0].isalnum() and after[0] != "_"):
        return after[:1] != "^" if after else True
    # "3x faster", "2\times": a multiplier is a quantity too
    return after[0] in "x\u00d7" and (len(after) == 1 or not after[1].isalpha())


def reported_numbers(latex: str) -> list[tuple[int, int]]:
    """Spans of the reported numbers of ``latex`` (see the module's rule), in order; numbers
    already marked ``\\simulated{}`` are not among them."""
    spans = _protected_spans(latex)
    found: list[tuple[int, int]] = []
    for match in _NUMBER.finditer(latex):
        start, end = match.span()
        if _inside(start, spans):
            continue
        if start > 0 and (latex[start - 1].isalpha() or latex[start - 1] in "_^.\\"):
            continue
        if _opens_number(latex, start) and _closes_number(latex, end):
            signed = start > 0 and latex[start - 1] in "-\u2212+"
            found.append((start - 1 if signed else start, end))
    return found


def mark_simulated(latex: str) -> tuple[str, list[tuple[str, str]]]:
    """``latex`` with every reported number wrapped in ``\\simulated{}``, and the marked numbers
    as (value, context) pairs — numbers the model had already marked included."""
    numbers = reported_numbers(latex)
    pieces: list[str] = []
    last = 0
    for start, end in numbers:
        pieces += [latex[last:start], f"\\simulated{{{latex[start:end]}}}"]
        last = end
    marked = "".join([*pieces, latex[last:]])
    found = [
        (m.group(1), _context(marked, m.start(), m.end())) for m in _SIMULATED.finditer(marked)
    ]
    return marked, found


def _context(text: str, start: int, end: int, width: int = 40) -> str:
    snippet = text[max(0, start - width) : min(len(text), end + width)]
    return re.sub(r"\s+", " ", snippet).strip()


def numbers_in_plan(latex: str) -> list[str]:
    """The reported numbers of an experiment plan, which must hold none: marked ones count."""
    values = [latex[s:e] for s, e in reported_numbers(latex)]
    return values + [m.group(1) for m in _SIMULATED.finditer(latex)]


def keep_known_cites(latex: str, keys: Collection[str]) -> tuple[str, list[str]]:
    """``latex`` citing only ``keys``: unknown keys are removed from each citation, and a
    citation left with none is removed whole. Returns the text and the keys removed."""
    removed: list[str] = []

    def keep(match: re.Match[str]) -> str:
        space, command, options, body = match.groups()
        cited = [k.strip() for k in body.split(",") if k.strip()]
        known = [k for k in cited if k in keys]
        removed.extend(k for k in cited if k not in keys)
        if not known:  # the citation goes, with the space that led to it
            return ""
        return f"{space or ''}\\{command}{options}{{{','.join(known)}}}"

    return _CITE.sub(keep, latex), removed


def cited(latex: str) -> list[str]:
    """The keys cited in ``latex``, first use first."""
    keys: dict[str, None] = {}
    for match in _CITE.finditer(latex):
        for key in match.group(4).split(","):
            if key.strip():
                keys.setdefault(key.strip(), None)
    return list(keys)


_LEADING_HEADING = re.compile(r"^\s*\\section\*?\{[^{}]*\}\s*")
_ABSTRACT_ENV = re.compile(r"\\(?:begin|end)\{abstract\}")
_BARE_PERCENT = re.compile(r"(?<=\d)(\s?)(?<!\\)%")
_TOP_HEADING = re.compile(r"\\section\*?\s*\{")


def tidy_body(latex: str) -> str:
    """A section body as models write it, made safe to paste: a leading ``\\section{}`` that
    repeats the heading and ``abstract`` environment markers go, and a bare ``%`` after a number
    (``91%``, which LaTeX would read as a comment eating the rest of the line) becomes ``\\%``."""
    latex = _LEADING_HEADING.sub("", latex.strip())
    latex = _ABSTRACT_ENV.sub("", latex)
    return _BARE_PERCENT.sub(r"\1\\%", latex).strip()


def has_top_heading(latex: str) -> bool:
    """Whether a section body opens a new top-level section (it must use ``\\subsection``)."""
    return _TOP_HEADING.search(latex) is not None
