"""``papergym ingest``: LaTeX paper sources → clean papers (title, abstract, sections)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from papergym.cli.common import DebugOption, JsonOption, reports_errors, stderr, stdout
from papergym.cli.groups import single_app
from papergym.cli.progress import ProgressBar
from papergym.errors import BadInputError
from papergym.ingestion import IngestReport, ingest_sources
from papergym.jsonl import write_jsonl

app = single_app()


@app.command("ingest")
@reports_errors
def ingest(
    sources: Annotated[
        list[Path],
        typer.Argument(
            help="Paper sources: a paper folder, a .tex file, an arXiv e-print (.tar.gz, .tgz, "
            "or a gzipped .tex), or a folder holding many papers (one per sub-folder or archive).",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Output folder; papers.jsonl (and ingest_failures.jsonl if any failed) is "
            "written there. Default: ./out, or nothing written with --json.",
        ),
    ] = None,
    json_output: JsonOption = False,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with code 2 if any paper could not be read.")
    ] = False,
    debug: DebugOption = False,
) -> None:
    """Read LaTeX paper sources into clean papers (title, abstract, sections) as papers.jsonl.

    Bad papers are reported and skipped while the rest finish; exit code 2 when nothing could be read (or, with --strict, when anything could not be read).
    """
    if out is None and not json_output:
        out = Path("out")
    if out is not None and out.exists() and not out.is_dir():
        raise BadInputError(out, "output path exists and is not a folder")
    report = _ingest_with_progress(sources)
    if not report.papers and all(f.kind == "bad_input" for f in report.failures):
        for failure in report.failures:
            stderr.print(
                f"[red]error:[/red] {escape(failure.source)}: {escape(failure.reason)}",
                highlight=False,
                soft_wrap=True,
            )
        raise typer.Exit(2)
    written: Path | None = None
    if out is not None and report.papers:
        written = out / "papers.jsonl"
        write_jsonl(written, report.papers)
    if out is not None and report.failures:
        (out / "ingest_failures.jsonl").parent.mkdir(parents=True, exist_ok=True)
        _write_failures(out / "ingest_failures.jsonl", report)
    if json_output:
        print(json.dumps(_ingest_json(report, written), ensure_ascii=False, indent=2))
    else:
        _print_ingest_summary(report, written)
    if any(f.kind == "internal" for f in report.failures):
        raise typer.Exit(1)
    if not report.papers or (strict and report.failures):
        raise typer.Exit(2)


def _ingest_with_progress(sources: list[Path]) -> IngestReport:
    with ProgressBar("ingest") as bar:
        bar.start(None)  # drawn while the sources are still being found, before their count
        return ingest_sources(
            sources,
            on_discovered=bar.set_total,
            on_paper=lambda source: bar.advance(source.path.name),
        )


def _write_failures(path: Path, report: IngestReport) -> None:
    lines = [json.dumps(f.__dict__, ensure_ascii=False) for f in report.failures]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _ingest_json(report: IngestReport, written: Path | None) -> dict[str, Any]:
    return {
        "papers": [p.model_dump(mode="json") for p in report.papers],
        "failures": [f.__dict__ for f in report.failures],
        "written": str(written) if written else None,
    }


def _print_ingest_summary(report: IngestReport, written: Path | None) -> None:
    table = Table(title=f"Ingested {len(report.papers)} paper(s)", title_justify="left")
    table.add_column("title", no_wrap=True, overflow="ellipsis", max_width=48)
    table.add_column("main file", no_wrap=True, overflow="ellipsis", max_width=28)
    for column in ("sections", "words", "warnings"):
        table.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    for paper in report.papers:
        table.add_row(
            paper.title or "(untitled)",
            paper.meta.main_file or "",
            str(len(paper.sections)),
            f"{paper.words:,}",
            str(len(paper.meta.warnings)),
        )
    stdout.print(table)
    if report.failures:
        failed = Table(title=f"{len(report.failures)} source(s) skipped", title_justify="left")
        failed.add_column("source")
        failed.add_column("reason")
        for failure in report.failures:
            failed.add_row(failure.source, failure.reason)
        stdout.print(failed)
    if written:
        stdout.print(f"wrote {written}")
