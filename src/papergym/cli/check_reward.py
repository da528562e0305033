"""``papergym check-reward``: the reward's self-test against gaming probes."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    OverridesArgument,
    numbers_table,
    reports_errors,
    stderr,
    stdout,
)
from papergym.cli.groups import single_app
from papergym.cli.reward_options import (
    AlphaOption,
    InstancesArgument,
    JudgeOption,
    MaxAnswerCharsOption,
    reward_config,
)
from papergym.records import Instance
from papergym.reward.check import CheckReport
from papergym.reward.check import check_reward as run_check
from papergym.reward.reward import RubricReward
from papergym.reward.run import check_instances
from papergym.reward.runtime import make_reward

app = single_app()

FLAGS_SHOWN = 10
"""Flagged instances listed in the readable summary; --json has every one."""


@app.command("check-reward")
@reports_errors
def check_reward(
    instances: InstancesArgument,
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    judge: JudgeOption = None,
    alpha: AlphaOption = None,
    margin: Annotated[
        float, typer.Option("--margin", help="How far the reference must beat each gaming probe.")
    ] = 0.2,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Check at most N instances.")
    ] = None,
    max_answer_chars: MaxAnswerCharsOption = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit with code 1 (the check failed) when any instance is flagged, as a test "
            "runner does when a test fails; bad input stays exit 2.",
        ),
    ] = False,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """The reward's self-test: reference vs empty, restated-question, other-paper, padded, criteria-list, shuffled-words, half-of-the-criteria and judge-injection probes (and committed-pitfalls for weighted rubrics).

    Flags the instances whose reference answer does not beat every gaming probe by --margin,
    and, for rubrics with pitfalls (negative weights), those where an answer committing the
    pitfalls does not score strictly below the reference. Exit 0 whatever is flagged, unless
    --strict.
    """
    settings = reward_config(config, overrides, judge, alpha, max_answer_chars)
    loaded = check_instances(instances, limit)
    report = _checked(make_reward(settings), loaded, margin, quiet=json_output)
    if json_output:
        print(json.dumps(asdict(report), indent=2))
    else:
        _print_report(report, margin)
    if strict and report.flagged:
        raise typer.Exit(1)


def _checked(
    reward: RubricReward, instances: list[Instance], margin: float, *, quiet: bool
) -> CheckReport:
    """The self-test's report, with a progress bar on a terminal."""
    progress = Progress(
        TextColumn("check-reward"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=quiet or not stderr.is_terminal,
    )
    with progress:
        task = progress.add_task("answers", total=None)
        return asyncio.run(
            run_check(
                reward,
                instances,
                margin,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        )


def _print_report(report: CheckReport, margin: float) -> None:
    table = numbers_table(
        f"Reward self-test ({report.judge}, {report.instances} instances)",
        ("probe", "mean reward", "of reference", "scored", "unscored"),
    )
    for probe in report.probes:
        table.add_row(
            probe.probe,
            "-" if probe.mean is None else f"{probe.mean:.3f}",
            "-" if probe.of_reference is None else f"{probe.of_reference:.3f}",
            str(probe.scored),
            str(probe.unscored),
        )
    stdout.print(table)
    auc = report.own_vs_other_auc
    stdout.print(f"own vs other reference AUC: {'-' if auc is None else f'{auc:.3f}'}")
    stdout.print(
        f"instances whose reference does not beat the gaming probes by {margin}: {len(report.flagged)}"
    )
    for flag in report.flagged[:FLAGS_SHOWN]:
        stdout.print(f"  {flag['title'] or flag['instance_id']}: {flag['reason']}", highlight=False)
    if len(report.flagged) > FLAGS_SHOWN:
        stdout.print(f"  … {len(report.flagged) - FLAGS_SHOWN} more (--json lists them all)")
