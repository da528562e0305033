"""``papergym report``: one self-contained HTML page (and the same tables in Markdown) from eval,
compare, train, review and build folders (the work is :func:`papergym.report.run.write_report`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from papergym.cli.common import DebugOption, JsonOption, reports_errors, stdout
from papergym.cli.groups import single_app
from papergym.report.run import DEFAULT_EXAMPLES, write_report

app = single_app()


@app.command("report")
@reports_errors
def report(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="Folders to report on, in the order the page shows them: `papergym eval` or "
            "`papergym compare` output, train runs (any stage, cycle included; several runs "
            "are overlaid in one section), `papergym review` or `review eval` output, paper or "
            "ARES builds (card.json). Each kind is told by its marker file.",
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
    """Write a self-contained HTML report (plots, tables with intervals, cost and latency, a browser of every question) and report.md.

    The page opens with no network (inline SVG plots and style; the sample browser's script is inline, allowed by its hash). Eval, compare, train run, review, review eval and build folders are drawn; anything else is one line naming it, exit code 2, and nothing is written.
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
