"""``papergym check-reward``: the reward's self-test against gaming probes."""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

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

if TYPE_CHECKING:
    from papergym.review.probes import ProbeReport

app = single_app()

FLAGS_SHOWN = 10
"""Flagged instances listed in the readable summary; --json has every one."""


@app.command("check-reward")
@reports_errors
def check_reward(
    instances: Annotated[
        Path,
        typer.Argument(
            metavar="SOURCE",
            help="--reward rubric: a `papergym build` folder, or its instances.jsonl. --reward "
            "review: a paper's text file, or a folder of them (*.txt, *.md, *.tex).",
            show_default=False,
        ),
    ],
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    judge: JudgeOption = None,
    alpha: AlphaOption = None,
    margin: Annotated[
        float, typer.Option("--margin", help="How far the reference must beat each gaming probe.")
    ] = 0.2,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="Check at most N instances (papers with --reward review)."
        ),
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
    reward_kind: Annotated[
        Literal["rubric", "review"],
        typer.Option(
            "--reward",
            help="rubric: the rubric reward on built instances; review: the review reward "
            "(review.reviewer, guarded as review.guards says) on papers, against the word-list, "
            "words-appended, duplicated and shuffled probes.",
        ),
    ] = "rubric",
    allowed: Annotated[
        int,
        typer.Option(
            "--allowed",
            min=0,
            help="--reward review: papers a probe may beat the original on before --strict fails.",
        ),
    ] = 0,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """The reward's self-test: gaming probes (empty, restated question, other paper, padded, criteria list, shuffled or dressed words, judge injection) and half of the criteria.

    Flags the instances whose reference answer does not beat every gaming probe by --margin,
    and, for rubrics with pitfalls (negative weights), those where an answer committing the
    pitfalls does not score strictly below the reference. Exit 0 whatever is flagged, unless
    --strict.

    With --reward review, SOURCE is papers: each probe's mean rating change from the original
    and the papers it beats the original on (rates strictly higher); --strict exits 1 when a
    probe beats it on more than --allowed papers.
    """
    if reward_kind == "review":
        _check_review(instances, config, overrides, limit, allowed, strict, json_output)
        return
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


def _check_review(
    source: Path,
    config: Path | None,
    overrides: list[str] | None,
    limit: int | None,
    allowed: int,
    strict: bool,
    json_output: bool,
) -> None:
    """``check-reward --reward review``: the review reward's probes on the papers at
    ``source``."""
    from papergym.cli.common import resolve
    from papergym.review.probes import probe_reward, read_probe_papers, word_weights
    from papergym.review.runtime import make_review_reward

    settings = resolve(config, overrides)
    papers = read_probe_papers(source, limit)
    reward = make_review_reward(settings.review, settings.llm)
    guarded = "guarded" if reward.guards is not None else "unguarded"
    report = asyncio.run(
        probe_reward(
            reward,
            f"{reward.name} ({guarded})",
            [text for _, text in papers],
            word_weights(reward.reviewer),
            allowed,
        )
    )
    if json_output:
        print(json.dumps({**report.model_dump(mode="json"), "failing": report.failing}, indent=2))
    else:
        _print_review_report(report)
    if strict and report.failing:
        raise typer.Exit(1)


def _print_review_report(report: ProbeReport) -> None:
    table = numbers_table(
        f"Review reward probes ({report.reward}, {report.papers} papers)",
        ("probe", "mean rating change", "mean rating", "beats the original", "guards fired"),
    )
    for row in report.rows:
        fired = ", ".join(f"{name} {count}" for name, count in row.fired.items()) or "-"
        table.add_row(
            row.probe,
            "-" if row.mean_change is None else f"{row.mean_change:+.2f}",
            "-" if row.mean_rating is None else f"{row.mean_rating:.2f}",
            f"{row.beats}/{row.papers}",
            fired,
        )
    stdout.print(table)
    mean = report.original_mean
    stdout.print(f"mean original rating: {'-' if mean is None else f'{mean:.2f}'}")
    failing = report.failing
    stdout.print(
        f"probes beating the original on more than {report.allowed} paper(s): "
        + (", ".join(failing) if failing else "none"),
        highlight=False,
    )
