"""``papergym review eval``: a reviewer's scores against the human reviewers of the same papers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from papergym import __version__
from papergym.cliutil import DebugOption, JsonOption, reports_errors, stdout
from papergym.errors import BadInputError
from papergym.eval.records import Estimate
from papergym.jsonl import write_text_atomic
from papergym.review.data import (
    LinearScale,
    Prediction,
    RatedPaper,
    read_papers,
    read_predictions,
    read_ratings,
    read_reviews_file,
)
from papergym.review.evaluation import (
    Bootstrap,
    LeakCheck,
    ReviewEvalSummary,
    always_reject_row,
    constant_row,
    human_row,
    system_row,
)
from papergym.review.fit_command import PapersOption, RatingsOption
from papergym.review.leak import surface_leak
from papergym.review.offline import load_baseline
from papergym.review.records import VENUES, VenueScale
from papergym.review.runtime import checked_threshold
from papergym.settings.cli import ConfigOption, OverridesArgument, flags, resolve

SUMMARY_FILE = "review-eval.json"


def _load_predictions(
    reviews: Path | None,
    predictions: Path | None,
    scale_text: str | None,
    columns: tuple[str, str, str],
    scale: VenueScale,
) -> tuple[dict[str, Prediction], Path, str | None, str | None]:
    """The predictions, their file, the scale mapping, and the offline baseline's name when the
    reviews are the baseline's (it is called a baseline wherever it appears)."""
    if (reviews is None) == (predictions is None):
        raise BadInputError(None, "give exactly one of --reviews FILE and --predictions FILE")
    if reviews is not None:
        file = read_reviews_file(reviews, scale)
        baseline = ", ".join(file.reviewer_models) if file.baseline else None
        return file.predictions, reviews, None, baseline
    assert predictions is not None
    if scale_text is None:
        raise BadInputError(
            None, "--predictions needs --scale LOW:HIGH: the range of its score column"
        )
    mapping = LinearScale.parse(scale_text)
    id_column, score_column, decision_column = columns
    loaded = read_predictions(
        predictions,
        id_column=id_column,
        score_column=score_column,
        decision_column=decision_column or None,
        mapping=mapping,
        scale=scale,
    )
    described = f"{score_column}: {mapping.describe(scale)}; decision: " + (
        f"column {decision_column}" if decision_column else "score >= threshold"
    )
    return loaded, predictions, described, None


def _cell(estimate: Estimate, signed: bool = False) -> str:
    if estimate.value is None:
        return "-"
    form = "{:+.3f}" if signed else "{:.3f}"
    value = form.format(estimate.value)
    if estimate.low is None or estimate.high is None:
        return value
    bound = "{:+.2f}" if signed else "{:.2f}"
    return f"{value} [{bound.format(estimate.low)}, {bound.format(estimate.high)}]"


def print_eval(summary: ReviewEvalSummary) -> None:
    """The metrics as a table, one column per system (each cell: value [interval])."""
    table = Table(
        title=f"Review eval: {summary.papers} papers ({summary.accepted} accepted), "
        f"{summary.human_ratings} human ratings, {int(summary.level * 100)}% bootstrap "
        "intervals over papers",
        title_justify="left",
    )
    table.add_column("metric")
    for row in summary.rows:
        table.add_column(row.system, justify="right")
    rows = summary.rows
    table.add_row("proxy MSE", *(_cell(r.mse) for r in rows))
    table.add_row("proxy MAE", *(_cell(r.mae) for r in rows))
    table.add_row("accuracy", *(_cell(r.accuracy) for r in rows))
    table.add_row("AUC", *(_cell(r.auc) for r in rows))
    table.add_row("Spearman", *(_cell(r.spearman, signed=True) for r in rows))
    table.add_row("macro-F1", *(_cell(r.macro_f1) for r in rows))
    table.add_row("scored", *(str(r.scored) for r in rows))
    table.add_row("unscored", *(str(r.unscored) for r in rows))
    stdout.print(table)
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


@reports_errors
def eval_command(
    ratings: RatingsOption,
    papers_dir: PapersOption,
    overrides: OverridesArgument = None,
    reviews: Annotated[
        Path | None,
        typer.Option(
            "--reviews", help="A `papergym review` reviews.jsonl to evaluate.", show_default=False
        ),
    ] = None,
    predictions: Annotated[
        Path | None,
        typer.Option(
            "--predictions",
            help="An external reviewer's CSV to evaluate (one row a paper); needs --scale.",
            show_default=False,
        ),
    ] = None,
    scale_text: Annotated[
        str | None,
        typer.Option(
            "--scale",
            help="LOW:HIGH, the range of the CSV's score column, mapped linearly onto the venue's "
            "range (ICLR 1..10); recorded in the summary. E.g. 1:10 for an Overall of 1-10.",
            show_default=False,
        ),
    ] = None,
    id_column: Annotated[str, typer.Option("--id-column", help="CSV column of paper ids.")] = (
        "paper_id"
    ),
    score_column: Annotated[
        str, typer.Option("--score-column", help="CSV column of the overall score.")
    ] = "Overall",
    decision_column: Annotated[
        str,
        typer.Option(
            "--decision-column",
            help="CSV column of the decision (Accept.../Reject...); '' to decide by --threshold.",
        ),
    ] = "Decision",
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Name of the evaluated system (default: the file's name).",
            show_default=False,
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            help="Sets review.threshold: the decision threshold for scores that come without a "
            "decision, and for the constant and single-human rows (default: the threshold on the "
            "mean human rating shipped with the baseline).",
            show_default=False,
        ),
    ] = None,
    constant: Annotated[
        float | None,
        typer.Option(
            "--constant",
            help="The constant baseline's rating, on the venue's rating range: the training "
            "set's mean human rating (default: the mean of every rating in --ratings).",
            show_default=False,
        ),
    ] = None,
    leak: Annotated[
        bool,
        typer.Option(
            "--leak/--no-leak",
            help="Run the surface-leak check (a surface-only classifier's cross-validated AUC "
            "before and after anonymisation).",
        ),
    ] = True,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o", "--out", help=f"Folder to write {SUMMARY_FILE} into.", show_default=False
        ),
    ] = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Evaluate a reviewer against human reviewers, with baselines and the surface-leak check.

    Reports proxy MSE and MAE (each human reviewer's left-out comparison: the prediction against
    the mean of the other reviewers, averaged over reviewers, then papers), decision accuracy,
    AUC for acceptance, Spearman against the mean human rating and macro-F1, each with a
    bootstrap interval over papers, for the reviewer and for the constant, always-reject and
    single-human baselines on the same papers. A paper the reviewer missed or left unscored
    counts against it and is never dropped.
    """
    settings = resolve(
        config, overrides, flags(threshold=("review.threshold", "--threshold", threshold))
    )
    review = settings.review
    scale = VENUES[review.venue]
    decision_threshold = checked_threshold(settings)
    if decision_threshold is None:
        decision_threshold = load_baseline(review.baseline).human_threshold
    if constant is not None and not (
        math.isfinite(constant) and scale.low <= constant <= scale.high
    ):
        raise BadInputError(
            None,
            f"--constant {constant:g} is outside the {scale.name} rating range "
            f"{scale.low}..{scale.high}",
        )
    if out is not None and out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")
    rated = read_ratings(ratings, scale)
    texts = read_papers(papers_dir, rated, ratings)
    loaded, source, mapping, baseline = _load_predictions(
        reviews, predictions, scale_text, (id_column, score_column, decision_column), scale
    )
    boot = Bootstrap(resamples=review.resamples, level=review.level, seed=review.seed)
    described = f"predictions of {source.name}"
    if baseline is not None:
        described = (
            f"offline baseline {baseline} (a baseline, not a reviewer), {described}; "
            "in-sample where it was fitted on these papers"
        )
    system = name or (_baseline_label(baseline) if baseline is not None else source.stem)
    value = constant if constant is not None else _mean_rating(rated)
    rows = [
        system_row(system, described, rated, loaded, scale, decision_threshold, boot),
        constant_row(rated, value, decision_threshold, boot),
        always_reject_row(rated, boot),
        human_row(rated, decision_threshold, boot),
    ]
    leak_check = None
    if leak:
        result = surface_leak(
            [texts[p.paper_id] for p in rated], [p.accepted for p in rated], seed=review.seed
        )
        leak_check = LeakCheck(
            before=result.before,
            after=result.after,
            papers=result.papers,
            accepted=result.accepted,
            folds=result.folds,
            method=result.method,
        )
    summary = ReviewEvalSummary(
        version=__version__,
        ratings=str(ratings),
        papers_dir=str(papers_dir),
        papers=len(rated),
        accepted=sum(p.accepted for p in rated),
        human_ratings=sum(len(p.ratings) for p in rated),
        venue=scale.name,
        threshold=decision_threshold,
        mapping=mapping,
        source=str(source),
        extra_predictions=len(set(loaded) - {p.paper_id for p in rated}),
        resamples=review.resamples,
        level=review.level,
        seed=review.seed,
        rows=rows,
        leak=leak_check,
    )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=1) + "\n")
    if json_output:
        print(summary.model_dump_json(indent=2))
    else:
        print_eval(summary)
        if out is not None:
            stdout.print(f"wrote {out / SUMMARY_FILE}")


def _baseline_label(models: str) -> str:
    """The offline baseline's column name: its model name, which says baseline."""
    return models if models.startswith("baseline") else f"baseline {models}"


def _mean_rating(papers: list[RatedPaper]) -> float:
    ratings = [r for p in papers for r in p.ratings]
    return math.fsum(ratings) / len(ratings)
