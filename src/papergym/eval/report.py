"""``papergym report``: one self-contained HTML page (and the same tables in Markdown) from
``papergym eval`` and ``papergym compare`` folders.

The page opens with no network: plots are inline SVG from :mod:`papergym.eval.plots`, the style
is inline, and there is no script at all. Answers, reasons and names are untrusted text: the
template escapes everything (Jinja2 autoescape), and a Content-Security-Policy forbids scripts
and every external load, so a ``<script>`` inside an answer is shown as text and could not run
even if an escape were missed.

Every input folder is read and checked before anything is written, so bad input leaves no file.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Annotated, TypeVar

import jinja2
import typer
from pydantic import BaseModel, ValidationError

from papergym import __version__
from papergym.cliutil import DebugOption, JsonOption, reports_errors, stdout
from papergym.errors import BadInputError
from papergym.eval import compare_records as cr
from papergym.eval import records as er
from papergym.eval.report_compare import compare_section
from papergym.eval.report_eval import eval_section
from papergym.eval.report_parts import CompareDir, EvalDir, ReportInput, Section, Table
from papergym.jsonl import read_jsonl, write_text_atomic
from papergym.sources.files import refuse_link_out

M = TypeVar("M", bound=BaseModel)

DEFAULT_EXAMPLES = 3


# ---------------------------------------------------------------------------------------- input


def _read_summary(path: Path, model: type[M]) -> M:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise BadInputError(path, "not UTF-8 text") from None
    except OSError as error:
        raise BadInputError(path, f"cannot be read: {error.strerror or error}") from None
    try:
        return model.model_validate_json(text)
    except ValidationError as error:
        first = str(error).splitlines()[0]
        raise BadInputError(path, f"not a valid {model.__name__}: {first}") from None


def load_input(path: Path) -> ReportInput:
    """Read an EVAL_DIR or a CMP_DIR; anything else is a one-line :class:`BadInputError`."""
    if not path.exists():
        raise BadInputError(path, "no such folder")
    if not path.is_dir():
        raise BadInputError(
            path, "not a folder: give a `papergym eval` or `papergym compare` folder"
        )
    files = (er.SUMMARY_FILE, cr.VERDICTS_FILE, er.SCORES_FILE, er.ANSWERS_FILE, er.QUESTIONS_FILE)
    for name in files:  # what the report shows, to whoever it is sent to
        if (path / name).exists():
            refuse_link_out(path / name, path)
    has_summary = (path / er.SUMMARY_FILE).is_file()
    if has_summary and (path / cr.VERDICTS_FILE).is_file():
        return CompareDir(
            path=path,
            summary=_read_summary(path / cr.SUMMARY_FILE, cr.CompareSummary),
            verdicts=read_jsonl(path / cr.VERDICTS_FILE, cr.CompareVerdict),
        )
    if has_summary and (path / er.SCORES_FILE).is_file():
        answers_path = path / er.ANSWERS_FILE
        questions_path = path / er.QUESTIONS_FILE  # absent in folders from before it existed
        questions = (
            {q.instance_id: q for q in read_jsonl(questions_path, er.EvalQuestion)}
            if questions_path.is_file()
            else {}
        )
        return EvalDir(
            path=path,
            summary=_read_summary(path / er.SUMMARY_FILE, er.EvalSummary),
            answers=read_jsonl(answers_path, er.EvalAnswer) if answers_path.is_file() else [],
            scores=read_jsonl(path / er.SCORES_FILE, er.EvalScore),
            questions=questions,
        )
    raise BadInputError(
        path,
        f"neither an eval folder ({er.SUMMARY_FILE} and {er.SCORES_FILE} from `papergym eval`) "
        f"nor a compare folder ({cr.SUMMARY_FILE} and {cr.VERDICTS_FILE} from `papergym compare`)",
    )


# ------------------------------------------------------------------------------------- rendering


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )


def render_html(sections: Sequence[Section], inputs: Sequence[Path]) -> str:
    template_text = (
        resources.files("papergym.eval")
        .joinpath("templates/report.html")
        .read_text(encoding="utf-8")
    )
    template = _environment().from_string(template_text)
    return template.render(
        sections=sections,
        inputs=[str(p) for p in inputs],
        version=__version__,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def md_cell(text: str) -> str:
    """A Markdown table cell: HTML escaped (renderers pass raw HTML through), pipes escaped,
    one line."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(text.replace("|", "\\|").split())


def md_table(table: Table) -> str:
    lines = []
    if table.title:
        lines.append(f"### {md_cell(table.title)}\n")
    lines.append("| " + " | ".join(md_cell(h) for h in table.headers) + " |")
    lines.append("|" + "---|" * len(table.headers))
    lines.extend("| " + " | ".join(md_cell(c) for c in row) + " |" for row in table.rows)
    if table.note:
        lines.append(f"\n{md_cell(table.note)}")
    return "\n".join(lines) + "\n"


def render_markdown(sections: Sequence[Section]) -> str:
    parts = [
        f"{MARKDOWN_TITLE}\n",
        f"Written by papergym {__version__}; the plots are in the HTML page.\n",
    ]
    for section in sections:
        parts.append(f"## {md_cell(section.title)}\n")
        parts.append(md_table(Table("", ["", ""], [[k, v] for k, v in section.facts])))
        parts.extend(f"{md_cell(note)}\n" for note in section.notes)
        parts.extend(md_table(t) for t in [*section.tables, *section.detail_tables])
    return "\n".join(parts)


MARKDOWN_TITLE = "# PaperGym evaluation report"
HTML_TITLE = "<title>PaperGym evaluation report</title>"
"""How a page or Markdown file this command wrote begins: only those are ever replaced."""


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
        eval_section(item, examples) if isinstance(item, EvalDir) else compare_section(item)
        for item in loaded
    ]
    html = render_html(sections, inputs)
    markdown = render_markdown(sections)
    write_text_atomic(out, html)
    write_text_atomic(markdown_path, markdown)
    return ReportResult(out, markdown_path, len(sections))


# ------------------------------------------------------------------------------------- command


@reports_errors
def report(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="Folders written by `papergym eval` (EVAL_DIR) or `papergym compare` "
            "(CMP_DIR), in the order the report shows them.",
            metavar="DIR...",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="The HTML page to write; the same tables in Markdown go beside it (report.md). "
            "An existing page or .md is replaced only when `papergym report` wrote it.",
        ),
    ] = Path("report.html"),
    examples: Annotated[
        int,
        typer.Option(
            "--examples",
            min=0,
            help="Questions shown with each system's answer and the judge's verdicts and "
            "reasons, per eval folder (those the systems disagree on most).",
        ),
    ] = DEFAULT_EXAMPLES,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Write a self-contained HTML report (plots, tables with intervals, example answers) and report.md.

    The page opens with no network (inline SVG plots and style, no script). Each folder must be an eval or a compare folder; anything else is one line naming it, exit code 2, and nothing is written.
    """
    result = write_report(inputs, out, examples)
    if json_output:
        payload = {
            "html": str(result.html),
            "markdown": str(result.markdown),
            "sections": result.sections,
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        stdout.print(f"wrote {result.html} and {result.markdown} ({result.sections} section(s))")
