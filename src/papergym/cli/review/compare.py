"""``papergym review compare GROUP=DIR...``: the reviewer's mean scores of groups of papers side by
side, with intervals and differences (:mod:`papergym.review.compare`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    reports_errors,
    resolve,
    stdout,
)
from papergym.errors import BadInputError
from papergym.eval.records import Estimate

GroupsArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="GROUP=DIR...",
        help="Two or more groups, each a name and a `papergym review` output folder (or its "
        "reviews.jsonl), in the order to compare: generated=runs/rev-gen preprints=runs/rev-pre "
        "accepted=runs/rev-acc.",
        show_default=False,
    ),
]


def parse_groups(arguments: list[str]) -> list[tuple[str, Path]]:
    """``NAME=DIR`` arguments as (name, folder); at least two."""
    groups = []
    for argument in arguments:
        name, sep, folder = argument.partition("=")
        if not sep or not name.strip() or not folder.strip():
            raise BadInputError(None, f"{argument!r} is not GROUP=DIR (e.g. generated=runs/rev)")
        groups.append((name.strip(), Path(folder)))
    if len(groups) < 2:
        raise BadInputError(None, "give at least two groups to compare, as GROUP=DIR")
    return groups


@reports_errors
def review_compare(
    groups: GroupsArgument,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """The reviewer-scored comparison (CycleResearcher's generated papers vs preprints vs accepted
    papers): run `papergym review` on each group's papers with the same reviewer, then compare
    the outputs here. Prints each group's mean score and accept rate with 95% bootstrap
    intervals over papers, the papers left unscored (reported, never counted as 0), and each
    later group minus each earlier one (groups are different papers: each is resampled apart),
    marked "holds" when the interval excludes 0. Reads only; writes nothing."""
    from papergym.review.compare import compare_groups
    from papergym.review.runtime import venue_scale

    parsed = parse_groups(groups)
    comparison = compare_groups(parsed, venue_scale(resolve(config).review))
    if json_output:
        print(comparison.model_dump_json(indent=2))
        return
    table = Table(title=f"Reviewer-scored comparison ({', '.join(comparison.reviewer_models)})")
    for column in ("group", "papers", "unscored", "mean score", "accept rate"):
        table.add_column(column)
    for group in comparison.groups:
        table.add_row(
            group.name,
            str(group.papers),
            str(group.unscored),
            _cell(group.mean_score, "{:.2f}"),
            _cell(group.accept_rate, "{:.0%}"),
        )
    stdout.print(table)
    for diff in comparison.differences:
        verdict = "holds" if diff.holds else "does not hold (interval includes 0)"
        stdout.print(
            f"{diff.later} - {diff.earlier}: {_cell(diff.difference, '{:+.2f}')} {verdict}",
            highlight=False,
            markup=False,
        )


def _cell(estimate: Estimate, form: str) -> str:
    if estimate.value is None:
        return "-"
    if estimate.low is None or estimate.high is None:
        return form.format(estimate.value)
    return (
        f"{form.format(estimate.value)} [{form.format(estimate.low)}, {form.format(estimate.high)}]"
    )
