"""``papergym fetch``: arXiv e-print sources and their metadata into PAPERS/<id>/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    flags,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.cli.groups import single_app
from papergym.cli.progress import ProgressBar
from papergym.configload import split_arguments
from papergym.errors import BadInputError
from papergym.fetch.ids import expand_id_arguments
from papergym.fetch.licences import FAMILIES, NONE_STATED, check_families
from papergym.fetch.run import STATUSES, FetchOptions, FetchReport, Listing, fetch_papers
from papergym.fetch.settings import FetchSection

app = single_app()


@app.command("fetch")
@reports_errors
def fetch(
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="The PAPERS folder: each paper goes to PAPERS/<id>/ (hep-th/9901001 as "
            "hep-th_9901001), its source unpacked beside metadata.json. Papers already there "
            "are skipped, so running again resumes.",
            show_default=False,
        ),
    ],
    arguments: Annotated[
        list[str] | None,
        typer.Argument(
            help="arXiv ids (2401.01234, 2401.01234v2, hep-th/9901001), files of ids (one a "
            "line, # comments), and key=value config overrides (fetch.delay_s=5). Leave out "
            "with --category.",
            show_default=False,
        ),
    ] = None,
    category: Annotated[
        str | None,
        typer.Option(
            "--category",
            help="List the papers of this arXiv category (cs.LG, hep-th, econ.EM) through the "
            "arXiv API instead of naming ids; needs --from and --until.",
            show_default=False,
        ),
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="First month (YYYY-MM) of the listing, by first submission.",
            show_default=False,
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="Last month (YYYY-MM) of the listing, included.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="At most this many papers from the listing (oldest first).",
            show_default=False,
        ),
    ] = None,
    licence: Annotated[
        list[str] | None,
        typer.Option(
            "--licence",
            help="Keep only papers under this licence family (repeat for several): "
            f"{', '.join(FAMILIES)}, or {NONE_STATED} (no licence stated). cc-by is any version "
            "of CC BY, not CC BY-SA or -NC. Others are reported as filtered.",
            show_default=False,
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="A mirror serving arXiv's paths (/api/query, /oai2, /e-print/<id>) in place of "
            "https://export.arxiv.org (fetch.base_url).",
            show_default=False,
        ),
    ] = None,
    delay: Annotated[
        float | None,
        typer.Option(
            "--delay",
            help="Seconds between two requests (fetch.delay_s; default 3, as arXiv asks).",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Download arXiv e-print sources and their metadata (id, version, title, categories, dates, licence) into PAPERS/<id>/.

    One request at a time, fetch.delay_s apart, with a descriptive User-Agent (fetch.user_agent: put your contact there) and retries with back-off on 503/429. A malformed id is reported and the rest go on. Withdrawn and PDF-only papers are reported as such. Exit code 0 when nothing failed, 1 when a download failed or the run stopped (a full disk), 2 on bad input (a malformed id, a listing with no results).
    """
    ids, overrides = split_arguments(arguments or [])
    section = resolve(
        config,
        overrides,
        flags(
            base_url=("fetch.base_url", "--base-url", base_url),
            delay=("fetch.delay_s", "--delay", delay),
        ),
    ).fetch
    wanted = _wanted(ids, category, start, until, limit)
    options = FetchOptions(licences=check_families(licence or []))
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "output path exists and is not a folder")
    report = _fetch_with_progress(wanted, out, section, options)
    if json_output:
        print(json.dumps(_report_json(report), ensure_ascii=False, indent=2))
    else:
        _print_summary(report, out)
    raise typer.Exit(_exit_code(report))


def _wanted(
    ids: list[str], category: str | None, start: str | None, until: str | None, limit: int | None
) -> list[str] | Listing:
    if category is None:
        if start or until or limit:
            raise BadInputError(None, "--from, --until and --limit go with --category")
        if not ids:
            raise BadInputError(None, "name arXiv ids (or a file of them), or a --category")
        return expand_id_arguments(ids)
    if ids:
        raise BadInputError(None, "give either ids or --category, not both")
    if not start or not until:
        raise BadInputError(None, "--category needs --from and --until (YYYY-MM)")
    return Listing(category, start, until, limit)


def _fetch_with_progress(
    wanted: list[str] | Listing, out: Path, section: FetchSection, options: FetchOptions
) -> FetchReport:
    with ProgressBar("fetch") as bar:
        bar.start(None)
        drawn = FetchOptions(
            licences=options.licences,
            on_total=bar.set_total,
            on_outcome=lambda outcome: bar.advance(f"{outcome.id} {outcome.status}"),
        )
        return fetch_papers(wanted, out, section, drawn)


def _exit_code(report: FetchReport) -> int:
    failed = [o for o in report.outcomes if o.status == "failed"]
    if report.aborted or any(not o.bad_input for o in failed):
        return 1
    return 2 if failed else 0


def _report_json(report: FetchReport) -> dict[str, Any]:
    return {
        "counts": {status: report.count(status) for status in STATUSES},
        "bytes": report.bytes,
        "requests": report.requests,
        "aborted": report.aborted,
        "outcomes": [o.__dict__ for o in report.outcomes],
    }


def _print_summary(report: FetchReport, out: Path) -> None:
    table = Table(title=f"Fetched into {out}", title_justify="left", show_header=False)
    for status in STATUSES:
        table.add_row(status.replace("_", " "), str(report.count(status)))
    table.add_row("bytes downloaded", f"{report.bytes:,}")
    table.add_row("requests", str(report.requests))
    stdout.print(table)
    noted = [o for o in report.outcomes if o.status not in ("fetched", "skipped")]
    if noted:
        reasons = Table(title="Not fetched", title_justify="left")
        for column in ("id", "status", "reason"):
            reasons.add_column(column)
        for outcome in noted:
            reasons.add_row(outcome.id, outcome.status.replace("_", " "), outcome.reason)
        stdout.print(reasons)
    for outcome in report.outcomes:
        if outcome.bad_input:
            stderr.print(f"error: {outcome.reason}", markup=False, soft_wrap=True)
    if report.aborted:
        stderr.print(f"error: stopped: {report.aborted}", markup=False, soft_wrap=True)
