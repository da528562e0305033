"""``papergym report`` as a function: every input folder read and checked, then the page and
its Markdown written (:func:`write_report`); the command line (:mod:`papergym.cli.report`)
parses its options and says what was written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl, write_text_atomic
from papergym.report.build import build_section, load_build
from papergym.report.compare import compare_section
from papergym.report.eval import eval_section
from papergym.report.kinds import REVIEW_EVAL_FILE, REVIEWS_FILE, folder_kind
from papergym.report.parts import EvalDir, Section, load_input, read_summary
from papergym.report.render import (
    HTML_MARKERS,
    MARKDOWN_MARKERS,
    render_html,
    render_markdown,
    report_title,
)
from papergym.report.review import (
    ReviewDir,
    ReviewEvalDir,
    review_eval_section,
    review_section,
)
from papergym.report.train import load_train_run, train_section
from papergym.review.evaluation import PAPERS_FILE, PaperPoint, ReviewEvalSummary
from papergym.review.records import PaperReview
from papergym.sources.files import refuse_link_out

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
    if path.suffix == ".md":
        ours = head.startswith(MARKDOWN_MARKERS)
    else:
        ours = any(marker in head for marker in HTML_MARKERS)
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
        raise BadInputError(None, "give at least one folder to report on")
    if out.suffix.lower() not in (".html", ".htm"):
        raise BadInputError(
            out, "the report's name must end in .html (report.md is written beside it)"
        )
    if out.is_dir():
        raise BadInputError(out, "is a folder; give the report's file name, e.g. report.html")
    markdown_path = out.with_suffix(".md")
    for path in (out, markdown_path):
        refuse_foreign_file(path)
    sections = read_sections(inputs, examples)
    title = report_title([folder_kind(path) for path in inputs])
    html = render_html(sections, inputs, title)
    markdown = render_markdown(sections, title)
    write_text_atomic(out, html)
    write_text_atomic(markdown_path, markdown)
    return ReportResult(out, markdown_path, len(sections))


def read_sections(inputs: Sequence[Path], examples: int) -> list[Section]:
    """Every input read into its section, in the order given; the train runs together in one
    section at the place of the first (their curves overlaid)."""
    kinds = [folder_kind(path) for path in inputs]
    runs = [load_train_run(p) for p, kind in zip(inputs, kinds, strict=True) if kind == "train"]
    sections: list[Section] = []
    for path, kind in zip(inputs, kinds, strict=True):
        if kind == "train":
            if runs:
                sections.append(train_section(runs))
                runs = []
        elif kind in ("eval", "compare"):
            item = load_input(path)
            index = str(len(sections))  # the section's own ids in the page (sample browser)
            section = (
                eval_section(item, examples, index)
                if isinstance(item, EvalDir)
                else compare_section(item, index)
            )
            sections.append(section)
        elif kind == "review":
            refuse_link_out(path / REVIEWS_FILE, path)
            reviews = read_jsonl(path / REVIEWS_FILE, PaperReview)
            sections.append(review_section(ReviewDir(str(path), reviews)))
        elif kind == "review-eval":
            sections.append(review_eval_section(_review_eval(path)))
        else:
            refuse_link_out(path / "card.json", path)
            sections.append(build_section(load_build(path)))
    return sections


def _review_eval(path: Path) -> ReviewEvalDir:
    for name in (REVIEW_EVAL_FILE, PAPERS_FILE):
        if (path / name).exists():
            refuse_link_out(path / name, path)
    summary = read_summary(path / REVIEW_EVAL_FILE, ReviewEvalSummary)
    papers_path = path / PAPERS_FILE
    papers = read_jsonl(papers_path, PaperPoint) if papers_path.is_file() else []
    return ReviewEvalDir(str(path), summary, papers)
