"""The report as a page (HTML from ``templates/report.html``) and as Markdown: the same
sections, tables and notes in both."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import jinja2
from markupsafe import Markup

from papergym import __version__
from papergym.report.browser import browser_script
from papergym.report.parts import Section, Table

TITLE = "PaperGym report"
KIND_NAMES = {
    "eval": "evaluation",
    "compare": "comparison",
    "train": "training",
    "review": "reviews",
    "review-eval": "reviewer evaluation",
    "build": "build",
}
# How a Markdown file or page this command wrote begins: only those are ever replaced (pages
# written before the report took every folder kind were all titled "evaluation report").
MARKDOWN_MARKERS = (f"# {TITLE}", "# PaperGym evaluation report")
HTML_MARKERS = (f"<title>{TITLE}", "<title>PaperGym evaluation report</title>")


def report_title(kinds: Sequence[str]) -> str:
    """The page's title from the kinds of folder it shows, each named once in order:
    "PaperGym report: training, build"."""
    names = list(dict.fromkeys(KIND_NAMES.get(kind, kind) for kind in kinds))
    return f"{TITLE}: {', '.join(names)}" if names else TITLE


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )


def render_html(sections: Sequence[Section], inputs: Sequence[Path], title: str = TITLE) -> str:
    template_text = (
        resources.files("papergym.report")
        .joinpath("templates/report.html")
        .read_text(encoding="utf-8")
    )
    template = _environment().from_string(template_text)
    # the sample browser's script, inline and allowed by its hash; no page without a browser
    # carries any script
    script = browser_script() if any(s.browser is not None for s in sections) else None
    return template.render(
        script=Markup(script.text) if script else None,
        script_csp=script.csp_source if script else "",
        sections=sections,
        title=title,
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


def render_markdown(sections: Sequence[Section], title: str = TITLE) -> str:
    parts = [
        f"# {md_cell(title)}\n",
        f"Written by papergym {__version__}; the plots are in the HTML page.\n",
    ]
    for section in sections:
        parts.append(f"## {md_cell(section.title)}\n")
        parts.append(md_table(Table("", ["", ""], [[k, v] for k, v in section.facts])))
        parts.extend(f"{md_cell(note)}\n" for note in section.notes)
        parts.extend(md_table(t) for t in [*section.tables, *section.detail_tables])
    return "\n".join(parts)
