"""``papergym audit``: criterion-leakage rates of rubric datasets, ours and others' (the work is
:func:`papergym.audit.run.run_audit`; the tables are drawn here)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from papergym.audit.formats import AuditFormat
from papergym.audit.report import AuditReport, MethodRate, snippet
from papergym.audit.run import CONFIG_FILE, INSTANCES_FILE, ITEMS_FILE, REPORT_FILE, run_audit
from papergym.audit.usefulness_report import run_usefulness
from papergym.cli.audit_usefulness import usefulness_lines, usefulness_table
from papergym.cli.common import (
    OVERRIDES_HELP,
    ConfigOption,
    DebugOption,
    JsonOption,
    paths_and_overrides,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.cli.flags import Given, config_flags, llm_options
from papergym.cli.groups import single_app
from papergym.cli.progress import ProgressBar
from papergym.errors import BadInputError
from papergym.llm.report import usage_table
from papergym.settings.load import Override, config_yaml, split_arguments
from papergym.train.usefulness import read_usefulness_folder

app = single_app()

FilesArgument = Annotated[
    list[str] | None,
    typer.Argument(
        help="Rubric datasets (.jsonl, .json or .parquet): PaperGym instances.jsonl, "
        "ResearchPlanGen, ResearchQA, RubricHub/HealthBench, or generic "
        '{"question", "criteria"} records. The format is detected per file. None with '
        "--usefulness. And config overrides: " + OVERRIDES_HELP,
        show_default=False,
    ),
]
UsefulnessOption = Annotated[
    Path | None,
    typer.Option(
        "--usefulness",
        help="Instead of leakage, audit the usefulness of each criterion in EVAL_DIR (a "
        "`papergym eval` folder) or RUN_DIR (a training run: its GRPO groups' verdicts, "
        "STAGE/rollouts.jsonl, else its final evaluation RUN/eval): pass rate, always/never "
        "met, within-group spread, correlation with the rest of the rubric, near-duplicates "
        "(token Jaccard), leakage; each criterion is kept, reweighted or dropped (thresholds: "
        "audit.usefulness.*). With -o it writes usefulness_report.json and instances.jsonl "
        "with the recommendations applied.",
        metavar="EVAL_DIR|RUN_DIR",
        show_default=False,
    ),
]
InstancesOption = Annotated[
    Path | None,
    typer.Option(
        "--instances",
        help="With --usefulness: the instances (a build folder or an instances.jsonl) the "
        "answers were judged on, instead of the data the folder recorded. Pass the "
        "instances.jsonl that `papergym audit -o` wrote to have leakage measured.",
        show_default=False,
    ),
]
FormatOption = Annotated[
    AuditFormat,
    typer.Option("--format", help="Force the format of every input instead of detecting it."),
]
OutOption = Annotated[
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
]


@app.command("audit")
@reports_errors
@config_flags(
    judge=("audit.judge", "--judge"),
    lexical_threshold="audit.lexical_threshold",
    embedding_threshold="audit.embedding_threshold",
    top="audit.top",
)
@llm_options()
def audit(
    files: FilesArgument = None,
    usefulness: UsefulnessOption = None,
    instances: InstancesOption = None,
    config: ConfigOption = None,
    format: FormatOption = AuditFormat.auto,
    llm: Given = (),
    out: OutOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
    given: Given = (),
) -> None:
    """Measure criterion leakage: the share of rubric criteria a reader could infer from the question alone.

    A cheap lexical/embedding overlap screen always runs; --judge adds the LLM judge. Rates are reported per dataset, dimension and origin, with the most-leaked criteria.

    With --usefulness EVAL_DIR|RUN_DIR it measures instead how useful each criterion was to the judged answers, and recommends keep, reweight or drop.
    """
    if usefulness is not None:
        _usefulness(usefulness, instances, files or [], config, [*given, *llm], out, json_output)
        return
    if instances is not None:
        raise BadInputError(None, "--instances goes with --usefulness")
    paths, overrides = paths_and_overrides(files or [], "dataset")
    resolved = resolve(config, overrides, [*given, *llm])
    with ProgressBar("judge") as bar:
        result = run_audit(
            paths,
            resolved.audit,
            resolved.llm,
            format=format,
            out=out,
            config_yaml=config_yaml(resolved),
            on_start=bar.start,
            on_judged=lambda _: bar.advance(""),
        )
    report = result.report
    if json_output:
        print(report.model_dump_json(indent=2))
    else:
        stdout.print(rates_table(report))
        if report.top:
            stdout.print(top_table(report))
        if result.usage is not None:
            stdout.print(usage_table(result.usage))
        for path in report.written:
            stdout.print(f"wrote {path}")
    if report.judge_scored_nothing():  # its rate would be meaningless: a failure, exit 1
        stderr.print(
            "[red]error:[/red] the judge could score none of the criteria; see the reasons with "
            "--json or in the written report",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _usefulness(
    folder: Path,
    instances: Path | None,
    arguments: list[str],
    config: Path | None,
    given: Sequence[Override],
    out: Path | None,
    json_output: bool,
) -> None:
    paths, overrides = split_arguments(arguments)
    if paths:
        raise BadInputError(Path(paths[0]), "--usefulness takes one folder, not datasets")
    resolved = resolve(config, overrides, given)
    data = read_usefulness_folder(folder, instances)
    report = run_usefulness(data, resolved.audit.usefulness, out)
    if json_output:
        print(report.model_dump_json(indent=2))
        return
    for line in usefulness_lines(report):
        stdout.print(line, highlight=False, soft_wrap=True)
    stdout.print(usefulness_table(report))
    for path in report.written:
        stdout.print(f"wrote {path}")


def _percent(rate: MethodRate | None) -> str:
    if rate is None:
        return "—"
    if rate.rate is None:
        return "n/a (0 scored)"
    return f"{rate.rate:.1%} ({rate.leaked}/{rate.scored})"


def rates_table(report: AuditReport) -> Table:
    """Leakage per dataset, dimension and origin, one column per method that ran."""
    table = Table(title="Criterion leakage", title_justify="left")
    table.add_column("dataset", overflow="fold", max_width=40)
    table.add_column("group", no_wrap=True)
    table.add_column("criteria", justify="right")
    for method in report.methods:
        table.add_column(method, justify="right", no_wrap=True)
    if "judge" in report.methods:
        table.add_column("unscored", justify="right")
    for row in report.rates:
        if row.by == "all":
            table.add_section()
        label = row.by if row.by in ("dataset", "all") else f"{row.by}={row.value}"
        cells = [row.dataset if row.by in ("dataset", "all") else "", label, f"{row.criteria:,}"]
        cells += [_percent(getattr(row, method)) for method in report.methods]
        if "judge" in report.methods:
            cells.append(str(row.judge.unscored) if row.judge else "—")
        table.add_row(*cells)
    return table


def _mark(value: bool | None) -> str:
    return {True: "leaked", False: "no", None: "—"}[value]


def top_table(report: AuditReport) -> Table:
    """The most-leaked criteria next to the start of their question."""
    table = Table(
        title=f"Most-leaked criteria (top {len(report.top)} by overlap score)", title_justify="left"
    )
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("overlap", no_wrap=True)
    if "judge" in report.methods:
        table.add_column("judge", no_wrap=True)
    table.add_column("criterion", overflow="fold", ratio=3)
    table.add_column("question", overflow="fold", ratio=2)
    for leaked in report.top:
        cells = [f"{leaked.score:.2f}" if leaked.score is not None else "—", _mark(leaked.overlap)]
        if "judge" in report.methods:
            cells.append(_mark(leaked.judge))
        cells += [leaked.text, snippet(leaked.question, 100)]
        table.add_row(*cells)
    return table
