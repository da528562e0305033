"""``papergym review eval``: a reviewer's scores against the human reviewers of the same papers
(:mod:`papergym.review.eval_run`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    OverridesArgument,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.cli.flags import Given, config_flags
from papergym.cli.review.fit import PapersOption, RatingsOption
from papergym.eval.records import Estimate
from papergym.review.eval_run import (
    DECISION_COLUMN,
    ID_COLUMN,
    SCORE_COLUMN,
    SUMMARY_FILE,
    ConstantRow,
    EvalRequest,
    PredictionsFile,
    evaluate_reviewer,
)
from papergym.review.evaluation import MetricRow, ReviewEvalSummary

ReviewsOption = Annotated[
    Path | None,
    typer.Option(
        "--reviews", help="A `papergym review` reviews.jsonl to evaluate.", show_default=False
    ),
]
PredictionsOption = Annotated[
    Path | None,
    typer.Option(
        "--predictions",
        help="An external reviewer's CSV to evaluate (one row a paper); needs --scale.",
        show_default=False,
    ),
]
ScaleOption = Annotated[
    str | None,
    typer.Option(
        "--scale",
        help="LOW:HIGH, the range of the CSV's score column, mapped linearly onto the venue's "
        "range (ICLR 1..10); recorded in the summary. E.g. 1:10 for an Overall of 1-10.",
        show_default=False,
    ),
]
IdColumnOption = Annotated[str, typer.Option("--id-column", help="CSV column of paper ids.")]
ScoreColumnOption = Annotated[
    str, typer.Option("--score-column", help="CSV column of the overall score.")
]
DecisionColumnOption = Annotated[
    str,
    typer.Option(
        "--decision-column",
        help="CSV column of the decision (Accept.../Reject...); '' to decide by --threshold.",
    ),
]
NameOption = Annotated[
    str | None,
    typer.Option(
        "--name",
        help="Name of the evaluated system (default: the file's name).",
        show_default=False,
    ),
]
ConstantOption = Annotated[
    float | None,
    typer.Option(
        "--constant",
        help="The constant baseline's rating, on the venue's rating range (default: the "
        "mean human rating of the evaluated reviewer's training papers: --train-ratings, "
        "else the ones the offline baseline recorded).",
        show_default=False,
    ),
]
TrainRatingsOption = Annotated[
    Path | None,
    typer.Option(
        "--train-ratings",
        help="The ratings file the evaluated reviewer was fitted or tuned on: the constant "
        "row predicts the mean of its ratings.",
        show_default=False,
    ),
]
OracleConstantOption = Annotated[
    bool,
    typer.Option(
        "--oracle-constant",
        help="Also show the 'oracle constant' row: every paper at the mean of the evaluated "
        "papers' own ratings (it knows the test labels).",
    ),
]
LeakOption = Annotated[
    bool,
    typer.Option(
        "--leak/--no-leak",
        help="Run the surface-leak check (a surface-only classifier's cross-validated AUC "
        "before and after anonymisation).",
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option("-o", "--out", help=f"Folder to write {SUMMARY_FILE} into.", show_default=False),
]


@reports_errors
@config_flags(threshold="review.threshold")
def review_eval(
    ratings: RatingsOption,
    papers_dir: PapersOption,
    overrides: OverridesArgument = None,
    reviews: ReviewsOption = None,
    predictions: PredictionsOption = None,
    scale_text: ScaleOption = None,
    id_column: IdColumnOption = ID_COLUMN,
    score_column: ScoreColumnOption = SCORE_COLUMN,
    decision_column: DecisionColumnOption = DECISION_COLUMN,
    name: NameOption = None,
    constant: ConstantOption = None,
    train_ratings: TrainRatingsOption = None,
    oracle_constant: OracleConstantOption = False,
    leak: LeakOption = True,
    out: OutOption = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
    given: Given = (),
) -> None:
    """Evaluate a reviewer against human reviewers, with baselines and the surface-leak check.

    Reports proxy MSE and MAE (each human reviewer's left-out comparison: the prediction against
    the mean of the other reviewers, averaged over reviewers, then papers), decision accuracy,
    AUC for acceptance, Spearman against the mean human rating and macro-F1, each with a
    bootstrap interval over papers, for the reviewer and for the constant, always-reject and
    single-human baselines on the same papers. A paper the reviewer missed or left unscored
    counts against it and is never dropped. The constant predicts the reviewer's training mean
    (--train-ratings, else the offline baseline's). Reviews by the offline baseline on papers
    it was fitted on are in-sample: a warning says so, and the table is shown again without
    them.
    """
    settings = resolve(config, overrides, given)
    csv = None
    if predictions is not None:
        csv = PredictionsFile(predictions, scale_text, id_column, score_column, decision_column)
    row = ConstantRow(constant, train_ratings, oracle_constant)
    request = EvalRequest(ratings, papers_dir, reviews, csv, row, name=name, leak=leak, out=out)
    summary = evaluate_reviewer(request, settings.review)
    for note in summary.notes:
        stderr.print(f"warning: {escape(note)}", highlight=False, soft_wrap=True)
    if json_output:
        print(summary.model_dump_json(indent=2))
    else:
        _print_eval(summary)
        if out is not None:
            stdout.print(f"wrote {out / SUMMARY_FILE}")


def _cell(estimate: Estimate, signed: bool = False) -> str:
    if estimate.value is None:
        return "-"
    form = "{:+.3f}" if signed else "{:.3f}"
    value = form.format(estimate.value)
    if estimate.low is None or estimate.high is None:
        return value
    bound = "{:+.2f}" if signed else "{:.2f}"
    return f"{value} [{bound.format(estimate.low)}, {bound.format(estimate.high)}]"


def _metrics_table(title: str, rows: list[MetricRow]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for row in rows:
        table.add_column(row.system, justify="right")
    table.add_row("proxy MSE", *(_cell(r.mse) for r in rows))
    table.add_row("proxy MAE", *(_cell(r.mae) for r in rows))
    table.add_row("accuracy", *(_cell(r.accuracy) for r in rows))
    table.add_row("AUC", *(_cell(r.auc) for r in rows))
    table.add_row("Spearman", *(_cell(r.spearman, signed=True) for r in rows))
    table.add_row("macro-F1", *(_cell(r.macro_f1) for r in rows))
    table.add_row("scored", *(str(r.scored) for r in rows))
    table.add_row("unscored", *(str(r.unscored) for r in rows))
    return table


def _print_eval(summary: ReviewEvalSummary) -> None:
    """The metrics as a table, one column per system (each cell: value [interval]); with
    in-sample papers, the same table without them."""
    level = f"{int(summary.level * 100)}% bootstrap intervals over papers"
    stdout.print(
        _metrics_table(
            f"Review eval: {summary.papers} papers ({summary.accepted} accepted), "
            f"{summary.human_ratings} human ratings, {level}",
            summary.rows,
        )
    )
    if summary.in_sample is not None and summary.held_out_rows:
        held = summary.held_out_rows[0].papers
        stdout.print(
            _metrics_table(
                f"Held out: the {held} papers baseline {summary.in_sample.baseline} was not "
                f"fitted on, {level}",
                summary.held_out_rows,
            )
        )
    if summary.mapping:
        stdout.print(f"scale mapping: {summary.mapping}")
    stdout.print(
        f"threshold {summary.threshold:g} on a score with no decision; {summary.unscored_rule}"
    )
    if summary.extra_predictions:  # e.g. ids in another column, or another data set's file
        stdout.print(
            f"note: {summary.extra_predictions} prediction(s) name papers that are not in the "
            "ratings file; they are ignored (check --id-column and the files)"
        )
    if summary.leak is not None:
        leak = summary.leak
        before = "-" if leak.before is None else f"{leak.before:.3f}"
        after = "-" if leak.after is None else f"{leak.after:.3f}"
        stdout.print(
            f"surface leak: AUC for acceptance from surface marks only, {before} before and "
            f"{after} after anonymisation (0.5 = chance; {leak.method})"
        )
