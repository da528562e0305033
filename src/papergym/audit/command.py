"""``papergym audit``: criterion-leakage rates of rubric datasets (ours and others').

Registered in :mod:`papergym.cli` as ``app.command("audit")(audit)``. It follows the CLI
conventions: a summary table by default, the same as JSON with ``--json``, exit code 0 on
success, 2 on bad input or usage, 1 on a failure on our side (including a judge that scored
nothing), and one-line errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from papergym.audit.formats import AuditDataset, AuditFormat, AuditItem, read_dataset
from papergym.audit.judge import judge_items
from papergym.audit.overlap import (
    EMBEDDING_THRESHOLD,
    LEXICAL_THRESHOLD,
    attach_verdicts,
    screen_items,
)
from papergym.audit.report import AuditReport, build_report, rates_table, top_table
from papergym.cli.common import (
    OVERRIDES_HELP,
    ApiKeyEnvOption,
    BaseUrlOption,
    CacheDirOption,
    ConfigOption,
    DebugOption,
    JsonOption,
    LLMConfigOption,
    ModelOption,
    NoCacheOption,
    flags,
    llm_flags,
    paths_and_overrides,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.report import usage_table
from papergym.llm.usage import UsageTracker
from papergym.records import Instance
from papergym.settings.load import config_yaml
from papergym.settings.models import PaperGymConfig

REPORT_FILE = "leakage_report.json"
ITEMS_FILE = "audited.jsonl"
INSTANCES_FILE = "instances.jsonl"
CONFIG_FILE = "audit.config.yaml"


@reports_errors
def audit(
    files: Annotated[
        list[str],
        typer.Argument(
            help="Rubric datasets (.jsonl, .json or .parquet): PaperGym instances.jsonl, "
            "ResearchPlanGen, ResearchQA, RubricHub/HealthBench, or generic "
            '{"question", "criteria"} records. The format is detected per file. And config '
            "overrides: " + OVERRIDES_HELP,
            show_default=False,
        ),
    ],
    config: ConfigOption = None,
    format: Annotated[
        AuditFormat,
        typer.Option("--format", help="Force the format of every input instead of detecting it."),
    ] = AuditFormat.auto,
    judge: Annotated[
        bool | None,
        typer.Option(
            "--judge",
            help="Sets audit.judge: also ask the LLM serving the judge role, per question, which "
            "criteria can be inferred from the question alone (needs an LLM: --llm-config or "
            "--base-url/--model, or llm in the -c file).",
            show_default=False,
        ),
    ] = None,
    llm_config: LLMConfigOption = None,
    base_url: BaseUrlOption = None,
    model: ModelOption = None,
    api_key_env: ApiKeyEnvOption = None,
    no_cache: NoCacheOption = False,
    cache_dir: CacheDirOption = None,
    lexical_threshold: Annotated[
        float | None,
        typer.Option(
            "--lexical-threshold",
            min=0.0,
            max=1.0,
            help=f"Sets audit.lexical_threshold (default {LEXICAL_THRESHOLD}). Overlap screen: "
            "share of a criterion's content words found in the question at which it counts as "
            "leaked.",
            show_default=False,
        ),
    ] = None,
    embedding_threshold: Annotated[
        float | None,
        typer.Option(
            "--embedding-threshold",
            min=0.0,
            max=1.0,
            help=f"Sets audit.embedding_threshold (default {EMBEDDING_THRESHOLD}). Overlap "
            "screen: cosine similarity to a question sentence at which a criterion counts as "
            "leaked.",
            show_default=False,
        ),
    ] = None,
    top: Annotated[
        int | None,
        typer.Option(
            "--top",
            min=0,
            help="Sets audit.top (default 10): how many of the most-leaked criteria to list.",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help=f"Folder to write {REPORT_FILE}, {ITEMS_FILE} (every criterion with its "
            f"verdicts), {CONFIG_FILE} (the resolved configuration, secrets masked; not "
            "config.yaml, so a build folder's own is kept) and, for PaperGym inputs, "
            f"{INSTANCES_FILE} with the verdicts attached.",
            show_default=False,
        ),
    ] = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Measure criterion leakage: the share of rubric criteria a reader could infer from the question alone.

    A cheap lexical/embedding overlap screen always runs; --judge adds the LLM judge. Rates are reported per dataset, dimension and origin, with the most-leaked criteria.
    """
    instances, overrides = paths_and_overrides(files, "dataset")
    resolved = resolve(
        config,
        overrides,
        [
            *flags(
                judge=("audit.judge", "--judge", judge),
                lexical=("audit.lexical_threshold", "--lexical-threshold", lexical_threshold),
                embedding=(
                    "audit.embedding_threshold",
                    "--embedding-threshold",
                    embedding_threshold,
                ),
                top=("audit.top", "--top", top),
            ),
            *llm_flags(llm_config, base_url, model, api_key_env, no_cache, cache_dir),
        ],
    )
    settings = resolved.audit
    llm = _judge_config(resolved.llm) if settings.judge else None
    if out is not None and out.exists() and not out.is_dir():
        raise BadInputError(out, "output path exists and is not a folder")
    datasets = [read_dataset(path, format) for path in instances]
    items = screen_items(
        [item for d in datasets for item in d.items],
        lexical_threshold=settings.lexical_threshold,
        embedding_threshold=settings.embedding_threshold,
    )
    tracker: UsageTracker | None = None
    if llm is not None:
        items, tracker = asyncio.run(_judge(llm, items))
    datasets = _regroup(datasets, items)
    report = build_report(
        datasets,
        top=settings.top,
        thresholds={
            "lexical": settings.lexical_threshold,
            "embedding": settings.embedding_threshold,
        },
    )
    if tracker is not None:
        report = report.model_copy(update={"usage": tracker.as_dict()})
    if out is not None:
        written = _write(out, datasets, report, resolved)
        report = report.model_copy(update={"written": [str(p) for p in written]})
    _print(report, tracker, json_output=json_output)
    _fail_if_judge_scored_nothing(report)


def _judge_config(config: LLMConfig) -> LLMConfig:
    """The LLM configuration for ``--judge``; none at all is a usage error (exit 2)."""
    if not config.configured:
        raise BadInputError(
            None, "--judge needs an LLM: pass --llm-config, or --base-url and --model"
        )
    config.for_role("judge")  # a config without a judge (and no default) fails here, not later
    return config


async def _judge(config: LLMConfig, items: list[AuditItem]) -> tuple[list[AuditItem], UsageTracker]:
    llm = LLMClient.from_config(config)
    progress = Progress(
        TextColumn("judge"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )
    try:
        await llm.ping(["judge"])  # fail fast on a dead endpoint, before any item
        with progress:
            task = progress.add_task("", total=len(items))
            judged = await judge_items(
                llm, items, on_done=lambda _: progress.update(task, advance=1)
            )
    finally:
        await llm.aclose()
    return judged, llm.tracker


def _regroup(datasets: Sequence[AuditDataset], items: Sequence[AuditItem]) -> list[AuditDataset]:
    """The datasets with their audited items, which come back in the order they were sent."""
    regrouped: list[AuditDataset] = []
    start = 0
    for dataset in datasets:
        end = start + len(dataset.items)
        regrouped.append(replace(dataset, items=list(items[start:end])))
        start = end
    return regrouped


def _write(
    out: Path, datasets: Sequence[AuditDataset], report: AuditReport, config: PaperGymConfig
) -> list[Path]:
    """The report, every audited item, the configuration, and our own instances with their
    verdicts attached."""
    written = [out / REPORT_FILE, out / ITEMS_FILE, out / CONFIG_FILE]
    write_jsonl(out / ITEMS_FILE, (item for d in datasets for item in d.items))
    write_text_atomic(out / CONFIG_FILE, config_yaml(config))
    audited: list[Instance] = [
        attach_verdicts(instance, item)
        for d in datasets
        if d.instances is not None
        for instance, item in zip(d.instances, d.items, strict=True)
    ]
    if audited:
        write_jsonl(out / INSTANCES_FILE, audited)
        written.append(out / INSTANCES_FILE)
    final = report.model_copy(update={"written": [str(p) for p in written]})
    write_text_atomic(out / REPORT_FILE, final.model_dump_json(indent=2) + "\n")
    return written


def _print(report: AuditReport, tracker: UsageTracker | None, *, json_output: bool) -> None:
    if json_output:
        print(report.model_dump_json(indent=2))
        return
    stdout.print(rates_table(report))
    if report.top:
        stdout.print(top_table(report))
    if tracker is not None:
        stdout.print(usage_table(tracker))
    for path in report.written:
        stdout.print(f"wrote {path}")


def _fail_if_judge_scored_nothing(report: AuditReport) -> None:
    """Exit 1 when the judge ran but could score no criterion: its rate would be meaningless."""
    if "judge" not in report.methods:
        return
    totals = [r.judge for r in report.rates if r.by == "dataset" and r.judge is not None]
    if sum(t.scored for t in totals) == 0 and sum(t.unscored for t in totals) > 0:
        stderr.print(
            "[red]error:[/red] the judge could score none of the criteria; see the reasons with "
            "--json or in the written report",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
