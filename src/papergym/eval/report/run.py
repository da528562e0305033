"""``papergym report`` as a function: every input folder read and checked, then the page and
its Markdown written (:func:`write_report`); the command line (:mod:`papergym.cli.report`)
parses its options and says what was written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym.errors import BadInputError
from papergym.eval.report.compare import compare_section
from papergym.eval.report.eval import eval_section
from papergym.eval.report.parts import EvalDir, load_input
from papergym.eval.report.render import (
    HTML_TITLE,
    MARKDOWN_TITLE,
    render_html,
    render_markdown,
)
from papergym.jsonl import write_text_atomic

DEFAULT_EXAMPLES = 3


def refuse_foreign_file(path: Path) -> None:
    """An existing ``path`` is replaced only when an earlier report wrote it: report.md is
    written beside the page without being named, and must not replace the user's own."""
    if not path.exists():
        return
    if not path.is_file():
        raise BadInputError(path, "exists and is not a file; give the report another name (-o)")
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError as error:
        raise BadInputError(path, f"cannot be read: {error.strerror or error}") from None
    ours = head.startswith(MARKDOWN_TITLE) if path.suffix == ".md" else HTML_TITLE in head
    if not ours:
        raise BadInputError(
            path,
            "exists and was not written by `papergym report`; give the report another "
            "name (-o) or move that file",
        )


@dataclass(frozen=True)
class ReportResult:
    html: Path
    markdown: Path
    sections: int


def write_report(
    inputs: Sequence[Path], out: Path, examples: int = DEFAULT_EXAMPLES
) -> ReportResult:
    """Read every input, then write ``out`` (HTML) and ``out`` with suffix ``.md``."""
    if not inputs:
        raise BadInputError(None, "give at least one eval or compare folder")
    if out.suffix.lower() not in (".html", ".htm"):
        raise BadInputError(
            out, "the report's name must end in .html (report.md is written beside it)"
        )
    if out.is_dir():
        raise BadInputError(out, "is a folder; give the report's file name, e.g. report.html")
    markdown_path = out.with_suffix(".md")
    for path in (out, markdown_path):
        refuse_foreign_file(path)
    loaded = [load_input(path) for path in inputs]
    sections = [
        eval_section(item, examples, str(index))
        if isinstance(item, EvalDir)
        else compare_section(item, str(index))
        for index, item in enumerate(loaded)
    ]
    html = render_html(sections, inputs)
    markdown = render_markdown(sections)
    write_text_atomic(out, html)
    write_text_atomic(markdown_path, markdown)
    return ReportResult(out, markdown_path, len(sections))
