"""A LaTeX paper folder → title, abstract and sections of clean text.

Read top to bottom, this is the ingestion recipe: choose the main file and inline its inputs;
learn the paper's own macros; take the title and abstract; cut the body down to what a reader
sees (no preamble, bibliography, float bodies or definitions); split it at the headings; turn
each piece into plain text.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from papergym.errors import BadInputError
from papergym.records import Section
from papergym.sources.latex.blocks import (
    Environment,
    find_commands,
    find_environments,
    remove_commands,
    remove_environments,
    replace_environments,
)
from papergym.sources.latex.flatten import (
    MainFile,
    document_body,
    find_main_file,
    flatten,
    read_source,
)
from papergym.sources.latex.macros import (
    Macro,
    MacroExpander,
    collect_macros,
    remove_definitions,
    used_packages,
)
from papergym.sources.latex.scan import is_escaped, read_group
from papergym.sources.latex.sections import (
    APPENDIX_MARKER,
    RawSection,
    is_references_heading,
    parent_paths,
    split_sections,
)
from papergym.sources.latex.totext import inline_text, latex_to_text

FLOATS = {
    "figure": "Figure",
    "figure*": "Figure",
    "table": "Table",
    "table*": "Table",
    "wrapfigure": "Figure",
    "wraptable": "Table",
    "sidewaysfigure": "Figure",
    "sidewaystable": "Table",
    "SCfigure": "Figure",
    "algorithm": "Algorithm",
    "algorithm*": "Algorithm",
    "listing": "Listing",
    "subfigure": "Figure",
    "subtable": "Table",
    "longtable": "Table",
    "deluxetable": "Table",
    "deluxetable*": "Table",
}
# Blocks with no reader-visible prose once outside a float: drawings, raw tables, pseudo-code.
NON_PROSE = (
    "tabular",
    "tabular*",
    "tabularx",
    "tabulary",
    "tikzpicture",
    "pgfpicture",
    "picture",
    "algorithmic",
    "algorithmic*",
    "forest",
    "circuitikz",
    "filecontents",
    "filecontents*",
    "thebibliography",
    "references",
    "comment",
)
_BIBLIOGRAPHY_COMMANDS = {
    "bibliography": "{",
    "printbibliography": "[",
    "bibliographystyle": "{",
    "addbibresource": "[{",
    "nobibliography": "{",
    "bibdata": "{",
}
_FRONT_MATTER = {"author": "[{", "title": "[{", "icmltitle": "{", "date": "{", "thanks": "{"}
_TITLE_COMMANDS = {"title": "[{", "icmltitle": "{", "Title": "{", "papertitle": "{"}
_CAPTIONS = {"caption": "*[{", "captionof": "*{[{", "subcaption": "*[{", "tablecaption": "{"}
_MIN_LEAD_WORDS = 40  # text before the first heading shorter than this is title-page residue


@dataclass
class LatexDocument:
    """What ingestion reads from a LaTeX paper, before it becomes a :class:`Paper`."""

    title: str
    abstract: str
    sections: list[Section]
    main_file: str
    main_file_reason: str
    files: list[str]
    warnings: list[str] = field(default_factory=list)


def read_latex_paper(
    root: Path, main_file: Path | None = None, *, cite_keys: bool = False
) -> LatexDocument:
    """Read the LaTeX paper whose sources are under ``root``.

    ``main_file`` skips the search for the main file (a single ``.tex`` given by the user).
    ``cite_keys`` keeps citations as ``\\cite{keys}`` in the text (``papergym write prepare``
    needs them); ingestion leaves it off, so its text has ``[cite]``.
    """
    root = root.resolve()
    main = _main_file(root, main_file)
    full = main.flattened.text
    warnings = list(main.flattened.warnings)
    begin = re.search(r"\\begin\s*\{document\}", full)
    preamble = full[: begin.start()] if begin else ""
    body = document_body(full) if begin else full
    expander = MacroExpander(_paper_macros(root, main.path.parent, preamble, body))
    # Definitions are not content: "\def\title#1{...}" or "\newcommand\abstract[1]{...}" in a
    # preamble was read as the title "#" or an abstract of "#1".
    preamble, body = remove_definitions(preamble), remove_definitions(body)

    title = _title(preamble + "\n" + body, expander)
    if not title:
        title = _title_page_title(body, expander)
        warnings.append(
            "no \\title; " + ("title taken from the title page" if title else "no title found")
        )
    abstract, body = _take_abstract(body, preamble, expander, cite_keys)
    body = expander.expand(clean_body(body))
    lead, raw_sections = split_sections(body)
    sections = _to_sections(lead, raw_sections, cite_keys)
    if not sections and not title and not abstract:
        raise BadInputError(main.path, "no LaTeX document: no title, abstract or sections found")
    if not sections:
        warnings.append("no sections found")
    if not abstract:
        abstract, source = _stand_in_abstract(sections)
        warnings.append(
            f"no abstract; the first paragraph of '{source}' stands in"
            if abstract
            else "no abstract found"
        )
    return LatexDocument(
        title=title,
        abstract=abstract,
        sections=sections,
        main_file=main.path.resolve().relative_to(root).as_posix(),
        main_file_reason=main.reason,
        files=main.flattened.files,
        warnings=warnings,
    )


def _main_file(root: Path, given: Path | None) -> MainFile:
    """The file given as the source, flattened; else the main file found under ``root``."""
    if given is not None:
        return MainFile(given.resolve(), "given as the source", flatten(root, given))
    # Regular files only: a FIFO named *.tex would block the first read of it forever.
    # ... and inside the paper folder: a link to a .tex elsewhere is not part of the paper.
    tex_files = sorted(
        p for p in root.rglob("*.tex") if not _hidden(p, root) and p.is_file() and _inside(p, root)
    )
    if not tex_files:
        raise BadInputError(root, "no .tex file found")
    return find_main_file(root, tex_files)


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith((".", "__MACOSX")) for part in path.relative_to(root).parts)


def _inside(path: Path, root: Path) -> bool:
    """``\\usepackage{../x}`` must not read a file outside the paper folder."""
    return path.resolve().is_relative_to(root)


def _paper_macros(root: Path, main_dir: Path, preamble: str, body: str) -> dict[str, Macro]:
    """Simple macros from the paper's own .sty files, its preamble and its body, in that order."""
    macros: dict[str, Macro] = {}
    for package in used_packages(preamble):
        # The main file's folder first: that is where LaTeX looks, and it need not be the root.
        places = (main_dir / f"{package}.sty", root / f"{package}.sty")
        for style in (*places, *root.glob(f"*/{package}.sty")):
            if style.is_file() and _inside(style, root):
                with contextlib.suppress(BadInputError):
                    macros.update(collect_macros(read_source(style)))
                break
    macros.update(collect_macros(preamble))
    macros.update(collect_macros(body))
    return macros


def _title(full: str, expander: MacroExpander) -> str:
    for command in find_commands(full, _TITLE_COMMANDS):
        latex = command.args[-1] or ""
        latex = remove_commands(latex, {"thanks": "{", "footnote": "[{"})
        text = inline_text(expander.expand(latex))
        if text:
            return text
    return ""


def _title_page_title(body: str, expander: MacroExpander) -> str:
    """A title typeset by hand on a title page: the first bold or large text of that page."""
    for env in find_environments(body, ["titlepage", "center", "flushleft", "flushright"]):
        page = env.body(body)
        emphasis = re.search(r"\\(textbf|LARGE|Large|huge|Huge|bfseries)(?![A-Za-z])", page)
        if emphasis is None:
            continue
        if emphasis.group(1) == "textbf":
            group = read_group(page, emphasis.end())
            latex = group.value if group else ""
        else:
            latex = _rest_of_group(page, emphasis.end())
        text = inline_text(expander.expand(latex))
        if text:
            return text
    return ""


def _rest_of_group(text: str, pos: int) -> str:
    """The text from ``pos`` to the end of the enclosing group, or to the next blank line."""
    depth = 0
    for index in range(pos, len(text)):
        char = text[index]
        if char == "{" and not is_escaped(text, index):
            depth += 1
        elif char == "}" and not is_escaped(text, index):
            if depth == 0:
                return text[pos:index]
            depth -= 1
        elif text.startswith("\n\n", index) and depth == 0:
            return text[pos:index]
    return text[pos:]


def _stand_in_abstract(sections: list[Section]) -> tuple[str, str]:
    """For a paper without an abstract: the first paragraph of its first section with text."""
    for section in sections:
        paragraph = section.text.split("\n\n", 1)[0].strip()
        if len(paragraph.split()) >= 20:
            return paragraph, section.heading
    return "", ""


def _take_abstract(
    body: str, preamble: str, expander: MacroExpander, cite_keys: bool = False
) -> tuple[str, str]:
    """The abstract's text, and the body without it (it must not reappear in a section)."""
    for source, is_body in ((body, True), (preamble, False)):
        envs = find_environments(source, ["abstract"])
        if envs:
            latex = expander.expand(remove_definitions(envs[0].body(source)))
            text = latex_to_text(latex, cite_keys=cite_keys)
            if is_body:
                body = source[: envs[0].start] + source[envs[0].end :]
            return text, body
        commands = find_commands(source, {"abstract": "{"})
        if commands:
            text = latex_to_text(expander.expand(commands[0].args[0] or ""), cite_keys=cite_keys)
            if is_body:
                body = source[: commands[0].start] + source[commands[0].end :]
            return text, body
    return "", body


def clean_body(body: str) -> str:
    """Cut the body down to reader-visible prose (still LaTeX)."""
    body = remove_definitions(body)
    body = remove_commands(body, {**_BIBLIOGRAPHY_COMMANDS, **_FRONT_MATTER})
    body = replace_environments(body, FLOATS, _float_captions)
    body = remove_environments(body, NON_PROSE)
    body = re.sub(
        r"\\begin\s*\{(appendix|appendices|subappendices)\}", lambda _: APPENDIX_MARKER, body
    )
    return re.sub(r"\\end\s*\{(appendix|appendices|subappendices)\}", "", body)


def _float_captions(env: Environment, text: str) -> str:
    """A float becomes its captions only: "Figure: ..." paragraphs."""
    kind = FLOATS[env.name]
    captions = [c.args[-1] or "" for c in find_commands(env.body(text), _CAPTIONS)]
    return "".join(f"\n\n{kind}: {caption}\n\n" for caption in captions if caption.strip()) or "\n"


def _to_sections(
    lead: str, raw_sections: list[RawSection], cite_keys: bool = False
) -> list[Section]:
    headings = [inline_text(raw.heading).rstrip(".:") for raw in raw_sections]
    kept = [
        (raw, heading)
        for raw, heading in zip(raw_sections, headings, strict=True)
        if not is_references_heading(heading)
    ]
    paths = parent_paths([raw.level for raw, _ in kept], [h for _, h in kept])
    sections = [
        Section(
            heading=h,
            level=raw.level,
            path=path,
            text=latex_to_text(raw.body, cite_keys=cite_keys),
            appendix=raw.appendix,
        )
        for (raw, h), path in zip(kept, paths, strict=True)
    ]
    lead_text = latex_to_text(lead, cite_keys=cite_keys)
    if len(lead_text.split()) >= _MIN_LEAD_WORDS:
        top = min((s.level for s in sections), default=1)
        sections.insert(0, Section(heading="", level=top, text=lead_text))
    return sections
