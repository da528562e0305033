"""The writer's text format, shared by ``papergym write`` (paper.tex) and the training targets of
``papergym write prepare`` (the SFT completion), so a trained policy writes what the writer
writes.

A paper is its outline as ``%`` comment lines (LaTeX ignores them, so ingestion and reviewers see
only the paper), then ``\\title{}``, the abstract, and each section::

    % Outline
    % title: Parallel linear recurrences
    % abstract plan: ...
    % section 1: Introduction | kind: introduction | purpose: ... | references: a2016, b2017
    % end outline

    \\title{Parallel linear recurrences}

    \\begin{abstract}
    ...
    \\end{abstract}

    \\section{Introduction}
    ... \\cite{a2016} ...
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from papergym.write.marking import mark_simulated
from papergym.write.records import Outline, OutlineSection, SectionKind

RESULTS_KINDS: frozenset[str] = frozenset({"experiments", "results", "discussion", "conclusion"})
"""Section kinds whose numbers are results: marked simulated, or absent with --plan-only."""

_RESULTS_HEADING = re.compile(
    r"experiment|result|evaluat|empirical|benchmark|ablation|finding|simulation stud|"
    r"numerical stud|performance|conclu|discussion",
    re.IGNORECASE,
)
_KIND_HEADINGS: tuple[tuple[SectionKind, str], ...] = (
    ("introduction", r"introduc|motivation|overview"),
    ("related_work", r"related|prior work|literature|previous work"),
    ("experiments", r"experiment|evaluat|empirical|benchmark"),
    ("results", r"result|finding|ablation|analysis"),
    ("background", r"background|preliminar|notation|setup|problem|setting"),
    ("discussion", r"discussion|limitation|future"),
    ("conclusion", r"conclu|summary"),
    ("method", r"method|model|approach|algorithm|framework|estimat|design|architecture"),
    ("experiments", r"simulation|application|data"),
)


def kind_of_heading(heading: str) -> SectionKind:
    """The kind a section's heading suggests (real papers carry no kinds); ``other`` if none."""
    for kind, pattern in _KIND_HEADINGS:
        if re.search(pattern, heading, re.IGNORECASE):
            return kind
    return "other"


def results_bearing(section: OutlineSection) -> bool:
    """Whether a section's numbers are results: by its kind, or by its heading whatever kind the
    model gave it (a results section labelled "method" is still marked)."""
    return section.kind in RESULTS_KINDS or _RESULTS_HEADING.search(section.heading) is not None


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).replace("|", "/").strip()


def escape_plain(text: str) -> str:
    """A plain-text title or heading made safe in LaTeX: ``&``, ``%``, ``#`` and ``_`` escaped
    (unless they already are)."""
    return re.sub(r"(?<!\\)([&%#_])", r"\\\1", _one_line(text))


def render_outline(outline: Outline) -> str:
    """The outline as ``%`` comment lines."""
    lines = [
        "% Outline",
        f"% title: {_one_line(outline.title)}",
        f"% abstract plan: {_one_line(outline.abstract_plan)}",
    ]
    for number, s in enumerate(outline.sections, start=1):
        lines.append(
            f"% section {number}: {_one_line(s.heading)} | kind: {s.kind} | purpose: "
            f"{_one_line(s.purpose)} | references: {', '.join(s.references)}"
        )
    return "\n".join([*lines, "% end outline"])


def render_paper(
    outline: Outline, abstract: str, sections: Sequence[tuple[str, str]], *, notice: str = ""
) -> str:
    """The paper in the writer's format: outline comments, title, abstract, then sections as
    (heading, LaTeX body). ``notice`` (the writer's note on how the paper was made) goes before
    the abstract."""
    parts = [render_outline(outline), f"\\title{{{escape_plain(outline.title)}}}"]
    if notice:
        parts.append(notice)
    parts.append(f"\\begin{{abstract}}\n{abstract.strip()}\n\\end{{abstract}}")
    parts += [f"\\section{{{escape_plain(h)}}}\n{body.strip()}" for h, body in sections]
    return "\n\n".join(parts) + "\n"


@dataclass(frozen=True)
class ParsedPaper:
    """A text in the writer's format, read back."""

    outline_lines: tuple[str, ...]
    title: str
    abstract: str
    sections: tuple[tuple[str, str], ...]


_SECTION = re.compile(r"^\\section\*?\{(.*)\}\s*$", re.MULTILINE)
_ABSTRACT = re.compile(r"(\\begin\{abstract\})(.*?)(\\end\{abstract\})", re.DOTALL)


def parse_paper(text: str) -> ParsedPaper:
    """Read a text in the writer's format (a generated one may lack any part: it is empty)."""
    outline = tuple(
        line[1:].strip()
        for line in text.splitlines()
        if line.startswith("%") and line.strip() not in {"% Outline", "% end outline"}
    )
    title = re.search(r"\\title\{(.*)\}", text)
    abstract = re.search(r"\\begin\{abstract\}(.*?)\\end\{abstract\}", text, re.DOTALL)
    heads = list(_SECTION.finditer(text))
    sections = tuple(
        (m.group(1), text[m.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)])
        for i, m in enumerate(heads)
    )
    return ParsedPaper(
        outline_lines=outline,
        title=title.group(1) if title else "",
        abstract=abstract.group(1).strip() if abstract else "",
        sections=tuple((h, body.strip()) for h, body in sections),
    )


def mark_results(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A whole paper in the writer's format (a trained policy's output, say) with every reported
    number of its results-bearing parts marked ``\\simulated{}``: the abstract, and each section
    whose heading names experiments, results, discussion or a conclusion. Returns the text and
    (section, value, context) for each marked number."""
    found: list[tuple[str, str, str]] = []

    def abstract(match: re.Match[str]) -> str:
        marked, numbers = mark_simulated(match.group(2))
        found.extend(("Abstract", value, context) for value, context in numbers)
        return match.group(1) + marked + match.group(3)

    text = _ABSTRACT.sub(abstract, text, count=1)
    heads = list(_SECTION.finditer(text))
    pieces = [text[: heads[0].start()] if heads else text]
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[head.end() : end]
        if _RESULTS_HEADING.search(head.group(1)):
            body, numbers = mark_simulated(body)
            found.extend((head.group(1), value, context) for value, context in numbers)
        pieces.append(head.group(0) + body)
    return "".join(pieces), found
