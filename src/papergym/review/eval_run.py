"""Evaluating a reviewer against the human reviewers of the same papers (``papergym review
eval``), callable from Python: the metrics of :mod:`papergym.review.evaluation` for the
reviewer and its baselines, the in-sample papers of the offline baseline held out, and the
surface-leak check."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from papergym import __version__
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl, write_text_atomic
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
    PAPERS_FILE,
    Bootstrap,
    InSample,
    MetricRow,
    ReviewEvalSummary,
    RowSet,
    in_sample_papers,
    paper_points,
)
from papergym.review.leak import LeakCheck, surface_leak
from papergym.review.offline import SHIPPED, Baseline, load_baseline
from papergym.review.records import VENUES, VenueScale
from papergym.review.runtime import checked_threshold
from papergym.review.settings import ReviewSection

SUMMARY_FILE = "review-eval.json"
ID_COLUMN = "paper_id"
SCORE_COLUMN = "Overall"
DECISION_COLUMN = "Decision"


@dataclass(frozen=True)
class PredictionsFile:
    """An external reviewer's CSV, one row a paper: its columns, and ``scale`` ("LOW:HIGH"),
    the range of its score column (mapped linearly onto the venue's)."""

    path: Path
    scale: str | None
    id_column: str = ID_COLUMN
    score_column: str = SCORE_COLUMN
    decision_column: str = DECISION_COLUMN
    """"" to decide by the threshold."""


@dataclass(frozen=True)
class ConstantRow:
    """What the constant baseline predicts: ``value``, else the mean rating of
    ``train_ratings``, else the training mean the offline baseline recorded (see
    :func:`constant_value`); ``oracle``: also show the oracle constant."""

    value: float | None = None
    train_ratings: Path | None = None
    oracle: bool = False


@dataclass(frozen=True)
class EvalRequest:
    """What to evaluate against what: the ratings file and the folder of the papers' texts, and
    exactly one of a ``papergym review`` reviews.jsonl (``reviews``) and an external reviewer's
    CSV (``predictions``)."""

    ratings: Path
    papers: Path
    reviews: Path | None = None
    predictions: PredictionsFile | None = None
    constant: ConstantRow = ConstantRow()
    name: str | None = None
    """The evaluated system's name (default: the file's name)."""
    leak: bool = True
    """Run the surface-leak check."""
    out: Path | None = None
    """A folder to write review-eval.json into."""


@dataclass(frozen=True)
class _Evaluated:
    """The predictions under evaluation, where they come from, and who made them."""

    predictions: dict[str, Prediction]
    source: Path
    mapping: str | None
    reference: tuple[Baseline, str]
    """The offline baseline the evaluation refers to, and its name (see
    :func:`reference_baseline`)."""
    baseline: str | None
    """The offline baseline's model names when it wrote the reviews, else None."""
    system: str
    """The system's default name: the baseline's, else the file's."""
    description: str


def evaluate_reviewer(request: EvalRequest, section: ReviewSection) -> ReviewEvalSummary:
    """The evaluation ``request`` asks for, on ``section``'s venue, threshold, baseline and
    bootstrap settings; written to ``request.out`` when given. Its ``notes`` are warnings."""
    scale = VENUES[section.venue]
    decision_threshold = checked_threshold(section)
    _check_request(request, scale)
    rated = read_ratings(request.ratings, scale)
    train_ratings = request.constant.train_ratings
    training = read_ratings(train_ratings, scale) if train_ratings else None
    texts = read_papers(request.papers, rated, request.ratings)
    evaluated = _evaluated(request, scale, section.baseline)
    anonymised = _AnonymisedTexts(texts)
    in_sample, notes = _in_sample(rated, texts, evaluated, anonymised)
    chosen = constant_value(request.constant.value, training, train_ratings, evaluated.reference)
    if chosen is None:
        notes.append(
            f"baseline {evaluated.reference[1]} records no training ratings (fitted before they "
            "were recorded): the constant row is the oracle constant; give --train-ratings FILE"
        )
    if decision_threshold is None:  # the one on the mean human rating
        decision_threshold = evaluated.reference[0].human_threshold
    row_set = RowSet(
        system=request.name or evaluated.system,
        description=evaluated.description,
        predictions=evaluated.predictions,
        scale=scale,
        threshold=decision_threshold,
        boot=Bootstrap(resamples=section.resamples, level=section.level, seed=section.seed),
        constant=chosen,
        oracle=request.constant.oracle,
    )
    rows, held_out_rows = _rows(row_set, rated, in_sample, notes)
    summary = ReviewEvalSummary(
        version=__version__,
        ratings=str(request.ratings),
        papers_dir=str(request.papers),
        papers=len(rated),
        accepted=sum(p.accepted for p in rated),
        human_ratings=sum(len(p.ratings) for p in rated),
        venue=scale.name,
        threshold=row_set.threshold,
        mapping=evaluated.mapping,
        source=str(evaluated.source),
        extra_predictions=len(set(evaluated.predictions) - {p.paper_id for p in rated}),
        resamples=section.resamples,
        level=section.level,
        seed=section.seed,
        rows=rows,
        in_sample=in_sample,
        held_out_rows=held_out_rows,
        notes=notes,
        leak=_leak_check(rated, texts, anonymised, section.seed) if request.leak else None,
    )
    if request.out is not None:
        request.out.mkdir(parents=True, exist_ok=True)
        write_jsonl(request.out / PAPERS_FILE, paper_points(rated, evaluated.predictions))
        write_text_atomic(request.out / SUMMARY_FILE, summary.model_dump_json(indent=1) + "\n")
    return summary


def _rows(
    row_set: RowSet, rated: list[RatedPaper], in_sample: InSample | None, notes: list[str]
) -> tuple[list[MetricRow], list[MetricRow]]:
    """The rows of every paper and, when some are in-sample, of the held-out ones (the
    system's row then says it is in-sample, and a warning is added to ``notes``)."""
    rows = row_set.rows(rated)
    if in_sample is None or not in_sample.papers:
        return rows, []
    held = [p for p in rated if p.paper_id not in set(in_sample.papers)]
    notes.append(_in_sample_warning(in_sample, len(rated), len(held)))
    rows[0] = _marked_in_sample(rows[0], len(in_sample.papers), len(rated))
    return rows, row_set.rows(held) if held else []


def _check_request(request: EvalRequest, scale: VenueScale) -> None:
    constant = request.constant.value
    if constant is not None and not scale.holds(constant):
        raise BadInputError(
            None,
            f"--constant {constant:g} is outside the {scale.name} rating range "
            f"{scale.low}..{scale.high}",
        )
    if constant is not None and request.constant.train_ratings is not None:
        raise BadInputError(None, "give at most one of --constant and --train-ratings")
    out = request.out
    if out is not None and out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")


def _evaluated(request: EvalRequest, scale: VenueScale, configured: Path | None) -> _Evaluated:
    """The predictions ``request`` names, read, with the offline baseline they refer to
    (``configured``: ``review.baseline``)."""
    loaded, source, mapping, reviews = _load_predictions(request, scale)
    reference = reference_baseline(reviews, configured)
    baseline = (
        ", ".join(reviews.reviewer_models) if reviews is not None and reviews.baseline else None
    )
    described = f"predictions of {source.name}"
    if baseline is not None:
        described = f"offline baseline {baseline} (a baseline, not a reviewer), {described}"
    return _Evaluated(
        predictions=loaded,
        source=source,
        mapping=mapping,
        reference=reference,
        baseline=baseline,
        system=_baseline_label(baseline) if baseline is not None else source.stem,
        description=described,
    )


def _load_predictions(
    request: EvalRequest, scale: VenueScale
) -> tuple[dict[str, Prediction], Path, str | None, ReviewsFile | None]:
    """The predictions, their file, the scale mapping, and the reviews file when the
    predictions are a ``papergym review`` run's (it says whether the offline baseline wrote
    them, and which)."""
    reviews, predictions = request.reviews, request.predictions
    if (reviews is None) == (predictions is None):
        raise BadInputError(None, "give exactly one of --reviews FILE and --predictions FILE")
    if reviews is not None:
        file = read_reviews_file(reviews, scale)
        return file.predictions, reviews, None, file
    assert predictions is not None
    if predictions.scale is None:
        raise BadInputError(
            None, "--predictions needs --scale LOW:HIGH: the range of its score column"
        )
    mapping = LinearScale.parse(predictions.scale)
    decision_column = predictions.decision_column
    loaded = read_predictions(
        predictions.path,
        id_column=predictions.id_column,
        score_column=predictions.score_column,
        decision_column=decision_column or None,
        mapping=mapping,
        scale=scale,
    )
    described = f"{predictions.score_column}: {mapping.describe(scale)}; decision: " + (
        f"column {decision_column}" if decision_column else "score >= threshold"
    )
    return loaded, predictions.path, described, None


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
    return surface_leak(
        [texts[p.paper_id] for p in rated],
        [p.accepted for p in rated],
        seed=seed,
        anonymised=[anonymised(p.paper_id) for p in rated],
    )


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
    evaluated: _Evaluated,
    anonymised: Callable[[str], str],
) -> tuple[InSample | None, list[str]]:
    """The papers the offline baseline that wrote the reviews was fitted on, or a note saying
    why that cannot be told (None, and no note, when the baseline did not write them)."""
    if not evaluated.baseline:
        return None, []
    baseline, label = evaluated.reference
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
