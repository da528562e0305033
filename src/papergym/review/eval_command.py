"""``papergym review eval``: a reviewer's scores against the human reviewers of the same papers."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from papergym import __version__
from papergym.cliutil import DebugOption, JsonOption, reports_errors, stderr, stdout
from papergym.errors import BadInputError
from papergym.eval.records import Estimate
from papergym.jsonl import write_text_atomic
from papergym.review.anonymise import anonymise
from papergym.review.data import (
    LinearScale,
    Prediction,
    RatedPaper,
    ReviewsFile,
    read_papers,
    read_predictions,
    read_ratings,
    read_reviews_file,
)
from papergym.review.evaluation import (
    Bootstrap,
    InSample,
    LeakCheck,
    MetricRow,
    ReviewEvalSummary,
    RowSet,
    in_sample_papers,
)
from papergym.review.fit_command import PapersOption, RatingsOption
from papergym.review.leak import surface_leak
from papergym.review.offline import SHIPPED, Baseline, load_baseline
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
) -> tuple[dict[str, Prediction], Path, str | None, ReviewsFile | None]:
    """The predictions, their file, the scale mapping, and the reviews file when the
    predictions are a ``papergym review`` run's (it says whether the offline baseline wrote
    them, and which)."""
    if (reviews is None) == (predictions is None):
        raise BadInputError(None, "give exactly one of --reviews FILE and --predictions FILE")
    if reviews is not None:
        file = read_reviews_file(reviews, scale)
        return file.predictions, reviews, None, file
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


def reference_baseline(
    reviews: ReviewsFile | None, configured: Path | None
) -> tuple[Baseline, str]:
    """The offline baseline the evaluation refers to, and its name: the one that wrote the
    reviews (``review.baseline`` when set, else the file the run's review.json names, else the
    shipped one), or for any other reviewer the configured one (shipped by default), whose
    training ratings give the constant row."""
    path = configured
    if path is None and reviews is not None and reviews.baseline and reviews.plan is not None:
        named = reviews.plan.get("baseline")
        if isinstance(named, str) and named:
            path = Path(named)
            if not path.is_file():
                raise BadInputError(
                    path,
                    "wrote these reviews (review.json) and is not found: give it as "
                    "review.baseline=FILE",
                )
    if path is None:
        return load_baseline(None), f"{SHIPPED} (shipped)"
    return load_baseline(path), path.name


def constant_value(
    constant: float | None,
    training: list[RatedPaper] | None,
    train_ratings: Path | None,
    reference: tuple[Baseline, str],
) -> tuple[float, str] | None:
    """The constant row's rating and where it comes from: ``--constant``, the mean rating of
    ``--train-ratings``, or the training mean the reference baseline recorded; None when
    there is none to use (a baseline fitted before it was recorded)."""
    if constant is not None:
        return constant, "set by --constant"
    if training is not None and train_ratings is not None:
        return _mean_rating(training), (
            f"the mean human rating of --train-ratings {train_ratings.name} "
            f"({sum(len(p.ratings) for p in training)} ratings)"
        )
    baseline, name = reference
    if baseline.mean_rating is None:
        return None
    return baseline.mean_rating, (
        f"the mean human rating of the {baseline.provenance.papers} papers baseline {name} "
        f"was fitted on ({baseline.provenance.ratings} ratings)"
    )


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


def print_eval(summary: ReviewEvalSummary) -> None:
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
            help="The constant baseline's rating, on the venue's rating range (default: the "
            "mean human rating of the evaluated reviewer's training papers: --train-ratings, "
            "else the ones the offline baseline recorded).",
            show_default=False,
        ),
    ] = None,
    train_ratings: Annotated[
        Path | None,
        typer.Option(
            "--train-ratings",
            help="The ratings file the evaluated reviewer was fitted or tuned on: the constant "
            "row predicts the mean of its ratings.",
            show_default=False,
        ),
    ] = None,
    oracle_constant: Annotated[
        bool,
        typer.Option(
            "--oracle-constant",
            help="Also show the 'oracle constant' row: every paper at the mean of the evaluated "
            "papers' own ratings (it knows the test labels).",
        ),
    ] = False,
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
    counts against it and is never dropped. The constant predicts the reviewer's training mean
    (--train-ratings, else the offline baseline's). Reviews by the offline baseline on papers
    it was fitted on are in-sample: a warning says so, and the table is shown again without
    them.
    """
    settings = resolve(
        config, overrides, flags(threshold=("review.threshold", "--threshold", threshold))
    )
    review = settings.review
    scale = VENUES[review.venue]
    decision_threshold = checked_threshold(settings)
    _check_options(constant, train_ratings, out, scale)
    rated = read_ratings(ratings, scale)
    training = read_ratings(train_ratings, scale) if train_ratings is not None else None
    texts = read_papers(papers_dir, rated, ratings)
    loaded, source, mapping, reviews_file = _load_predictions(
        reviews, predictions, scale_text, (id_column, score_column, decision_column), scale
    )
    reference = reference_baseline(reviews_file, review.baseline)
    anonymised = _AnonymisedTexts(texts)
    baseline = None
    if reviews_file is not None and reviews_file.baseline:
        baseline = ", ".join(reviews_file.reviewer_models)
    in_sample, notes = _in_sample(rated, texts, reference, anonymised) if baseline else (None, [])
    chosen = constant_value(constant, training, train_ratings, reference)
    if chosen is None:
        notes.append(
            f"baseline {reference[1]} records no training ratings (fitted before they were "
            "recorded): the constant row is the oracle constant; give --train-ratings FILE"
        )
    described = f"predictions of {source.name}"
    if baseline is not None:
        described = f"offline baseline {baseline} (a baseline, not a reviewer), {described}"
    row_set = RowSet(
        system=name or (_baseline_label(baseline) if baseline is not None else source.stem),
        description=described,
        predictions=loaded,
        scale=scale,
        threshold=reference[0].human_threshold
        if decision_threshold is None
        else decision_threshold,
        boot=Bootstrap(resamples=review.resamples, level=review.level, seed=review.seed),
        constant=chosen,
        oracle=oracle_constant,
    )
    rows = row_set.rows(rated)
    held_out_rows: list[MetricRow] = []
    if in_sample is not None and in_sample.papers:
        held = [p for p in rated if p.paper_id not in set(in_sample.papers)]
        held_out_rows = row_set.rows(held) if held else []
        notes.append(_in_sample_warning(in_sample, len(rated), len(held)))
        rows[0] = _marked_in_sample(rows[0], len(in_sample.papers), len(rated))
    summary = ReviewEvalSummary(
        version=__version__,
        ratings=str(ratings),
        papers_dir=str(papers_dir),
        papers=len(rated),
        accepted=sum(p.accepted for p in rated),
        human_ratings=sum(len(p.ratings) for p in rated),
        venue=scale.name,
        threshold=row_set.threshold,
        mapping=mapping,
        source=str(source),
        extra_predictions=len(set(loaded) - {p.paper_id for p in rated}),
        resamples=review.resamples,
        level=review.level,
        seed=review.seed,
        rows=rows,
        in_sample=in_sample,
        held_out_rows=held_out_rows,
        notes=notes,
        leak=_leak_check(rated, texts, anonymised, review.seed) if leak else None,
    )
    _report(summary, out, json_output)


def _check_options(
    constant: float | None, train_ratings: Path | None, out: Path | None, scale: VenueScale
) -> None:
    if constant is not None and not (
        math.isfinite(constant) and scale.low <= constant <= scale.high
    ):
        raise BadInputError(
            None,
            f"--constant {constant:g} is outside the {scale.name} rating range "
            f"{scale.low}..{scale.high}",
        )
    if constant is not None and train_ratings is not None:
        raise BadInputError(None, "give at most one of --constant and --train-ratings")
    if out is not None and out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")


class _AnonymisedTexts:
    """Each paper's anonymised text, made once when first asked (the in-sample check and the
    leak check share them)."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.done: dict[str, str] = {}

    def __call__(self, paper_id: str) -> str:
        if paper_id not in self.done:
            self.done[paper_id] = anonymise(self.texts[paper_id]).text
        return self.done[paper_id]


def _leak_check(
    rated: list[RatedPaper], texts: dict[str, str], anonymised: _AnonymisedTexts, seed: int
) -> LeakCheck:
    result = surface_leak(
        [texts[p.paper_id] for p in rated],
        [p.accepted for p in rated],
        seed=seed,
        anonymised=[anonymised(p.paper_id) for p in rated],
    )
    return LeakCheck(
        before=result.before,
        after=result.after,
        papers=result.papers,
        accepted=result.accepted,
        folds=result.folds,
        method=result.method,
    )


def _report(summary: ReviewEvalSummary, out: Path | None, json_output: bool) -> None:
    """Warnings (one line each, on stderr), then the summary file, the JSON or the tables."""
    for note in summary.notes:
        stderr.print(f"warning: {escape(note)}", highlight=False, soft_wrap=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=1) + "\n")
    if json_output:
        print(summary.model_dump_json(indent=2))
    else:
        print_eval(summary)
        if out is not None:
            stdout.print(f"wrote {out / SUMMARY_FILE}")


def _marked_in_sample(row: MetricRow, inside: int, papers: int) -> MetricRow:
    """The system's row named and described as in-sample: the table itself says so."""
    return row.model_copy(
        update={
            "system": f"{row.system} [in-sample {inside}/{papers}]",
            "description": f"{row.description}; in-sample on {inside} of {papers} papers",
        }
    )


def _in_sample(
    rated: list[RatedPaper],
    texts: dict[str, str],
    reference: tuple[Baseline, str],
    anonymised: Callable[[str], str],
) -> tuple[InSample | None, list[str]]:
    """The papers the baseline that wrote the reviews was fitted on, or a note saying why
    that cannot be told."""
    baseline, label = reference
    if baseline.fitted_on is None:
        return None, [
            f"cannot tell which papers are in-sample: baseline {label} records no fitted "
            "papers (fitted before they were recorded); refit it with `papergym review fit`"
        ]
    return in_sample_papers(rated, texts, baseline.fitted_on, anonymised, label), []


def _in_sample_warning(in_sample: InSample, papers: int, held: int) -> str:
    return (
        f"{len(in_sample.papers)} of {papers} papers are in-sample: baseline "
        f"{in_sample.baseline} was fitted on them, so its figures on them are not an estimate "
        "for new papers; "
        + (
            f"the held-out table leaves them out ({held} papers)"
            if held
            else "no paper is held out: evaluate `review fit --oof` predictions instead"
        )
    )


def _baseline_label(models: str) -> str:
    """The offline baseline's column name: its model name, which says baseline."""
    return models if models.startswith("baseline") else f"baseline {models}"


def _mean_rating(papers: list[RatedPaper]) -> float:
    ratings = [r for p in papers for r in p.ratings]
    return math.fsum(ratings) / len(ratings)
