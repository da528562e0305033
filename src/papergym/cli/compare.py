"""``papergym compare``: multi-way comparisons of eval folders' answers by LLM judges (the work
is :func:`papergym.eval.compare.run.run_compare`; :mod:`papergym.eval.compare` explains it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.table import Table

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    flags,
    paths_and_overrides,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.cli.flags import Given, llm_options
from papergym.cli.groups import single_app
from papergym.cli.progress import ProgressBar
from papergym.errors import BadInputError
from papergym.eval.compare.records import CompareSummary, CriterionResult
from papergym.eval.compare.run import refuse_foreign_folder, run_compare
from papergym.llm.report import usage_table
from papergym.settings.load import Override, config_yaml

app = single_app()

EVAL_DIRS_HELP = (
    "Folders written by `papergym eval -o` (their systems are compared together; all must be "
    "evaluated on the same data), and config overrides (compare.reference=true)."
)

EvalDirsArgument = Annotated[
    list[str],
    typer.Argument(help=EVAL_DIRS_HELP, metavar="EVAL_DIR... [KEY=VALUE]...", show_default=False),
]
OutOption = Annotated[
    Path,
    typer.Option(
        "-o",
        "--out",
        help="Output folder: verdicts.jsonl, summary.json, config.yaml. Running the same "
        "command again skips the verdicts already there; another command's folder is "
        "refused.",
        show_default=False,
    ),
]
JudgeSpecOption = Annotated[
    str | None,
    typer.Option(
        "--judge",
        help="The judge: a role of the llm config (default: judge) or openai:MODEL@URL. "
        "Sets compare.judges.",
        show_default=False,
    ),
]
JudgeSpecsOption = Annotated[
    str | None,
    typer.Option(
        "--judges",
        help="Several judges, comma-separated (J1,J2): each asked every question in every "
        "order; their agreement is reported as Fleiss' κ. Sets compare.judges.",
        show_default=False,
    ),
]
DataOption = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="The data the EVAL_DIRs were evaluated on, when it is no longer at the path "
        "their summary.json names (checked against their data_id).",
        show_default=False,
    ),
]


def judge_flags(judge: str | None, judges: str | None) -> list[Override]:
    """The overrides of --judge and --judges, which both set compare.judges."""
    if judge is not None and judges is not None:
        raise BadInputError(None, "give --judge or --judges, not both")
    listed = [j.strip() for j in judges.split(",") if j.strip()] if judges is not None else None
    if listed is not None and not listed:
        raise BadInputError(None, "--judges is empty; give J1,J2,...")
    return flags(
        judge=("compare.judges", "--judge", [judge] if judge is not None else None),
        judges=("compare.judges", "--judges", listed),
    )


@app.command("compare")
@reports_errors
@llm_options()
def compare(
    arguments: EvalDirsArgument,
    out: OutOption,
    judge: JudgeSpecOption = None,
    judges: JudgeSpecsOption = None,
    data: DataOption = None,
    config: ConfigOption = None,
    llm: Given = (),
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Compare the answers of several systems with an LLM judge: win, tie and loss rates with intervals.

    For each question the judge sees every system's answer, labelled A, B, C..., and picks the best overall, on method and on experiments (or a tie). Each question is shown in every order of the answers up to 3 systems, and in a balanced Latin square (Williams design) beyond, so each system holds each position equally often. Reported per system and criterion: win / tie / loss rates over the parsed verdicts with 95% intervals (bootstrap over questions); the position-bias rate (how often the answer shown first wins, against 1/n); with several judges, Fleiss' κ. A verdict the judge's answer could not be parsed for is counted apart, never as a loss. The reference answer is not shown unless compare.reference=true.

    Writes OUT/verdicts.jsonl (one per question × order × judge: the labels picked, the systems they map to, the reason), summary.json and config.yaml. Exit code 0 when done; 1 when some verdicts failed at the endpoint (run the same command again: finished verdicts are kept); 2 on bad input (EVAL_DIRs on different data, a broken answers file, no judge configured, an endpoint down), with nothing written.
    """
    paths, overrides = paths_and_overrides(arguments, "EVAL_DIR")
    refuse_foreign_folder(out)  # before the flags are checked: a foreign folder is named first
    given = [
        *judge_flags(judge, judges),
        *llm,
    ]
    resolved = resolve(config, overrides, given)
    with ProgressBar("compare") as bar:
        result = run_compare(
            paths,
            out,
            section=resolved.compare,
            llm=resolved.llm,
            config_yaml=config_yaml(resolved),
            data=data,
            on_start=bar.start,
            on_verdict=lambda _: bar.advance(""),
        )
    if result.summary is None:
        _exit_unfinished(result.failed, result.planned, result.kept, result.log)
    print_compare_summary(result.summary, json_output)
    if not json_output and result.usage.rows:
        stdout.print(usage_table(result.usage))


def _exit_unfinished(failed: Sequence[str], planned: int, kept: int, log: Path) -> NoReturn:
    """Say how many verdicts failed at the endpoint and where the finished ones are; exit 1."""
    stderr.print(
        f"error: {len(failed)} of {planned} verdicts failed at the endpoint "
        f"(first: {failed[0]}); run the same command again to finish them "
        f"({kept} are kept in {log})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(1)


def _cell(estimate: Any) -> str:
    if estimate.value is None:
        return "–"
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def _criterion_table(result: CriterionResult) -> Table:
    table = Table(
        title=f"{result.criterion}: {result.parsed} parsed of {result.verdicts} verdicts "
        f"({result.unparsed} unparsed, counted apart)",
        title_justify="left",
    )
    for column in ("system", "win [95% CI]", "tie", "loss", "wins", "ties", "losses"):
        table.add_column(column, no_wrap=column != "system")
    for rates in result.systems:
        table.add_row(
            rates.system,
            _cell(rates.win),
            _cell(rates.tie),
            _cell(rates.loss),
            str(rates.wins),
            str(rates.ties),
            str(rates.losses),
        )
    return table


def print_compare_summary(summary: CompareSummary, json_output: bool) -> None:
    """A table per criterion, then position bias, unparsed counts and agreement."""
    if json_output:
        print(json.dumps(summary.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    for result in summary.criteria:
        stdout.print(_criterion_table(result))
        bias = result.position_bias
        stdout.print(
            f"  position bias: answer shown first won {_cell(bias.first)} of "
            f"{bias.decisive} decisive verdicts (unbiased: {bias.expected:.3f})"
        )
    for kappa in summary.agreement:
        value = "–" if kappa.kappa is None else f"{kappa.kappa:.3f}"
        stdout.print(
            f"agreement ({kappa.criterion}): Fleiss' κ {value} over {kappa.items} items × "
            f"{kappa.judges} judges ({kappa.excluded} items excluded: a judge's verdict unparsed)"
        )
    stdout.print(
        f"{summary.questions} questions × {len(summary.orderings)} orderings ({summary.design}) "
        f"× {len(summary.judges)} judge(s) = {summary.verdicts} verdicts; {summary.unparsed} "
        "unparsed"
    )
