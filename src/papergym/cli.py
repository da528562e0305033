"""The ``papergym`` command line.

Conventions every command follows: a readable summary by default and the same information as
JSON with ``--json``; exit code 0 on success, 2 on bad input or usage, 1 on an internal failure;
a one-line error message, with the traceback only under ``--debug``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from papergym import __version__
from papergym.audit.command import audit as audit_command
from papergym.cliutil import (
    HELP_SETTINGS,
    ApiKeyEnvOption,
    BaseUrlOption,
    DebugOption,
    HelpGroup,
    JsonOption,
    LLMConfigOption,
    ModelOption,
    reports_errors,
    stderr,
    stdout,
)
from papergym.errors import BadInputError
from papergym.eval.command import EVAL_EPILOG, eval_command
from papergym.eval.compare import compare as compare_command
from papergym.eval.report import report as report_command
from papergym.export.command import export as export_command
from papergym.fakellm.command import FAKE_LLM_EPILOG
from papergym.fakellm.command import fake_llm as fake_llm_command
from papergym.ingestion import IngestReport, ingest_sources
from papergym.jsonl import write_jsonl
from papergym.llm.check import check_backends
from papergym.llm.report import usage_table
from papergym.llm.types import ROLES, Role
from papergym.recipes.command import build as build_command
from papergym.review.command import review_app
from papergym.reward.calibrate import calibrate_reward as calibrate_reward_command
from papergym.reward.command import SERVE_REWARD_EPILOG
from papergym.reward.command import check_reward as check_reward_command
from papergym.reward.command import score as score_command
from papergym.reward.command import serve_reward as serve_reward_command
from papergym.settings.cli import (
    ConfigOption,
    OverridesArgument,
    config_app,
    llm_flags,
    resolve,
)
from papergym.train.command import train_app
from papergym.write.command import write_app

app = typer.Typer(
    name="papergym",
    help="Turn research papers into rubric-graded RL environments for research planning.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help at any width (see cliutil.HELP_SETTINGS)
    context_settings=HELP_SETTINGS,
    cls=HelpGroup,
)


def _version(value: bool) -> None:
    if value:
        stdout.print(f"papergym {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """PaperGym: research papers → rubric-graded RL environments for research planning."""


app.command("build")(build_command)
app.command("audit")(audit_command)
app.command("export")(export_command)
app.command("score")(score_command)
app.command("serve-reward", epilog=SERVE_REWARD_EPILOG)(serve_reward_command)
app.command("check-reward")(check_reward_command)
app.command("calibrate-reward")(calibrate_reward_command)
app.command("fake-llm", epilog=FAKE_LLM_EPILOG)(fake_llm_command)
app.command("report")(report_command)
app.command("eval", epilog=EVAL_EPILOG)(eval_command)
app.command("compare")(compare_command)
app.add_typer(train_app)
app.add_typer(review_app)
app.add_typer(write_app)
app.add_typer(config_app)


@app.command()
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
    progress = Progress(
        TextColumn("ingest"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )
    with progress:
        task = progress.add_task("", total=None)
        return ingest_sources(
            sources,
            on_discovered=lambda total: progress.update(task, total=total),
            on_paper=lambda source: progress.update(task, advance=1, description=source.path.name),
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


@app.command("llm-check")
@reports_errors
def llm_check(
    overrides: OverridesArgument = None,
    config_file: ConfigOption = None,
    llm_config: LLMConfigOption = None,
    base_url: BaseUrlOption = None,
    model: ModelOption = None,
    api_key_env: ApiKeyEnvOption = None,
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role", help="Check only these roles (repeatable). Default: every configured role."
        ),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", help="Token limit of each test call.")
    ] = 256,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Check that each configured LLM endpoint answers, and answers valid JSON for a schema.

    Sends one plain and one structured call to each distinct backend (never from the cache), then prints what worked, the latency, and the tokens used. Exit code 2 when a backend fails.

    The endpoints are the llm section of the configuration: -c FILE, key=value arguments (llm.default.model=M, llm.roles.judge.base_url=URL) and the LLM flags, which set the same keys.
    """
    resolved = resolve(config_file, overrides, llm_flags(llm_config, base_url, model, api_key_env))
    config = resolved.llm
    if not config.configured:
        raise BadInputError(
            None,
            "no LLM configured: pass --llm-config, or --base-url and --model, or set llm in the "
            "-c file",
        )
    roles = _roles(role)
    results, tracker = asyncio.run(check_backends(config, roles, max_tokens=max_tokens))
    if results and not any(r.ok for r in results) and not json_output:
        for failed in results:  # nothing worked: one line per backend says why, no table
            stderr.print(f"error: {failed.failure_line()}", markup=False, soft_wrap=True)
        raise typer.Exit(2)
    if json_output:
        payload = {
            "backends": [r.__dict__ | {"ok": r.ok} for r in results],
            "usage": tracker.as_dict(),
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        table = Table(title="LLM backends", title_justify="left")
        for column in ("roles", "model", "endpoint", "plain", "structured", "seconds"):
            table.add_column(column, overflow="fold")
        for r in results:
            plain = r.plain or next((e for e in r.errors if e.startswith("plain")), "")
            structured = r.structured or next(
                (e for e in r.errors if e.startswith("structured")), ""
            )
            table.add_row(
                ", ".join(r.roles),
                r.model,
                ", ".join(r.endpoints),
                plain,
                structured,
                f"{r.seconds:.2f}",
            )
        stdout.print(table)
        stdout.print(usage_table(tracker))
    if not all(r.ok for r in results):
        raise typer.Exit(2)


def _roles(names: list[str] | None) -> list[Role] | None:
    if not names:
        return None
    unknown = [n for n in names if n not in ROLES]
    if unknown:
        raise BadInputError(
            None, f"unknown role(s) {', '.join(unknown)}; roles are {', '.join(ROLES)}"
        )
    return [cast(Role, n) for n in names]


def main() -> None:
    """Entry point of the ``papergym`` script."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.exit(130)


if __name__ == "__main__":
    main()
