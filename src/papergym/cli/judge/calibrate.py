"""``papergym judge calibrate``: a rubric judge against criterion labels, or a reviewer against
human ratings (:mod:`papergym.calibrate.run`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from papergym.calibrate.records import (
    CALIBRATION_FILE,
    AgreementRow,
    ReviewCalibration,
    RubricCalibration,
)
from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    OverridesArgument,
    flags,
    numbers_table,
    reports_errors,
    resolve,
    stdout,
)
from papergym.cli.reward_options import JudgeOption


@reports_errors
def judge_calibrate(
    labels: Annotated[
        Path,
        typer.Option(
            "--labels",
            help="Criterion labels, JSONL of {instance_id, answer, criterion_id, met: 0|1, "
            "note} (docs/judge.md); or a reviewer's human ratings, a TSV of paper_id, one "
            "column per reviewer, decision (as review fit reads).",
            show_default=False,
        ),
    ],
    instances: Annotated[
        Path | None,
        typer.Option(
            "--instances",
            help="With criterion labels: the build folder or instances.jsonl they refer to.",
            show_default=False,
        ),
    ] = None,
    reviews: Annotated[
        Path | None,
        typer.Option(
            "--reviews",
            help="With ratings: the reviewer's predictions, a `papergym review` reviews.jsonl "
            "or a CSV with paper_id, score (1-10) and decision (as review fit --oof writes).",
            show_default=False,
        ),
    ] = None,
    overrides: OverridesArgument = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help=f"A folder to write {CALIBRATION_FILE} into (created).",
            show_default=False,
        ),
    ] = None,
    judge: JudgeOption = None,
    kappa_threshold: Annotated[
        float | None,
        typer.Option(
            "--kappa-threshold",
            help="Sets calibrate.kappa_threshold (default 0.6): criteria whose kappa is below "
            "it are listed as unreliable.",
            show_default=False,
        ),
    ] = None,
    repeats: Annotated[
        int | None,
        typer.Option(
            "--repeats",
            help="Sets calibrate.repeats (default 3): LLM judge, judgements of each answer in "
            "the rubric's order (the offline judge is judged once).",
            show_default=False,
        ),
    ] = None,
    orderings: Annotated[
        int | None,
        typer.Option(
            "--orderings",
            help="Sets calibrate.orderings (default 3): judgements with the criteria shuffled.",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Measure a rubric judge against criterion labels, or a reviewer against human ratings.

    Per criterion and overall: agreement, the judge's and the labels' base rates, Cohen's kappa
    with a bootstrap interval (calibrate.resamples, calibrate.level), the judge's agreement with
    itself over repeated judgements and over shuffled criterion orders, and the criteria with
    kappa below the threshold. For a reviewer: its decision against the venue's and against
    the mean human rating at the decision threshold (review.threshold, else the shipped
    baseline's), the correlation of its score with the mean human rating, and how often its
    simulated reviewers (and the humans) of one paper agree on the decision.
    """
    from papergym.calibrate.run import CalibrationRequest, calibrate

    settings = resolve(
        config,
        overrides,
        flags(
            judge=("reward.judge", "--judge", judge),
            kappa=("calibrate.kappa_threshold", "--kappa-threshold", kappa_threshold),
            repeats=("calibrate.repeats", "--repeats", repeats),
            orderings=("calibrate.orderings", "--orderings", orderings),
        ),
    )
    request = CalibrationRequest(labels, instances, reviews, out)
    report = calibrate(request, settings.calibrate, settings.reward, settings.llm, settings.review)
    if json_output:
        print(json.dumps(report.model_dump(mode="json"), indent=1))
    elif isinstance(report, RubricCalibration):
        _print_rubric(report)
    else:
        _print_review(report)


def _num(value: float | None) -> str:
    # + 0.0 turns a rounded -0.0 into 0.0: "-0.000" reads as a negative figure
    return "-" if value is None else f"{round(value, 3) + 0.0:.3f}"


def _short(name: str) -> str:
    """instance_id/criterion_id shortened to 8 + 8 characters, for the terminal."""
    return "/".join(part[:8] for part in name.split("/")) if "/" in name else name


def _add(table: Table, row: AgreementRow) -> None:
    kappa = row.kappa
    table.add_row(
        _short(row.criterion),
        str(row.items),
        _num(row.agreement),
        _num(row.judge_rate),
        _num(row.label_rate),
        _num(kappa.value),
        "-" if kappa.low is None else f"{_num(kappa.low)}..{_num(kappa.high)}",
        _num(row.repeat_consistency),
        _num(row.order_consistency),
        {True: "yes", False: "NO", None: "?"}[row.reliable],
    )


def _table(title: str) -> Table:
    table = numbers_table(title, COLUMNS)
    table.columns[0].no_wrap = True  # a criterion's name is read whole
    return table


COLUMNS = (
    "criterion",
    "n",
    "agree",
    "judge met",
    "label met",
    "kappa",
    "interval",
    "repeat",
    "order",
    "reliable",
)


def _print_rubric(report: RubricCalibration) -> None:
    table = _table(f"Judge calibration: {report.judge}")
    for row in [report.overall, *report.by_note, *report.criteria]:
        _add(table, row)
    stdout.print(table)
    unscored = report.overall.unscored
    print(f"unscored verdicts: {unscored} (left out of every figure, never counted as not met)")
    print(
        f"{report.answers} answers; unreliable (kappa < {report.kappa_threshold:g}): "
        f"{len(report.unreliable)} of {len(report.criteria)} criteria"
        + (f"; kappa undefined: {len(report.undetermined)}" if report.undetermined else "")
    )
    for note in report.notes:
        print(f"note: {note}")


def _print_review(report: ReviewCalibration) -> None:
    table = _table(f"Reviewer calibration: {report.reviewer}")
    _add(table, report.decision)
    _add(table, report.mean_rating)
    stdout.print(table)
    print(f"unscored or missing papers: {report.unscored} (left out)")
    for corr in (report.pearson, report.spearman):
        print(
            f"{corr.method} (score vs mean human rating): {_num(corr.r)} "
            f"[{_num(corr.low)}, {_num(corr.high)}], n={corr.n}"
        )
    print(
        f"papers {report.papers}; threshold "
        f"{report.threshold:g}; decision agreement within a paper: reviewer "
        f"{_num(report.reviewer_consistency)}, humans {_num(report.human_consistency)}"
    )
    for note in report.notes:
        print(f"note: {note}")
