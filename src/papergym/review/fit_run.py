"""Fitting the offline baseline reviewer on a ratings file and its papers (``papergym review
fit``), callable from Python: ridge on TF-IDF of the anonymised texts, its strength chosen by
cross-validation on AUC and Spearman (see :mod:`papergym.review.baseline_fit` for the maths)."""

from __future__ import annotations

import csv
import datetime
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from papergym import __version__
from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.review import baseline_fit as fitting
from papergym.review.data import RatedPaper, read_papers, read_ratings
from papergym.review.offline import (
    Baseline,
    Provenance,
    baseline_json,
    features_text,
    fitted_papers,
)
from papergym.review.records import VENUES
from papergym.review.settings import ReviewSection

FOLDS = 5
"""Cross-validation folds (``review fit --folds``)."""


@dataclass(frozen=True)
class FitRequest:
    """What to fit on and what to write: the ratings file and the folder of the papers' texts,
    the baseline file (``out``) and, optionally, the out-of-fold predictions (``oof``, a CSV)."""

    ratings: Path
    papers: Path
    out: Path
    oof: Path | None = None
    folds: int = FOLDS
    alphas: tuple[float, ...] = ()
    """Ridge strengths to compare (none given: :data:`~papergym.review.baseline_fit.ALPHAS`)."""
    max_terms: int = fitting.MAX_TERMS
    compare_minilm: bool = False
    """Also cross-validate a ridge on MiniLM embeddings, for comparison only (slow on CPU)."""
    data_description: str | None = None
    """What the ratings are, for the provenance (no machine paths)."""


@dataclass(frozen=True)
class BaselineFit:
    """The cross-validated models (TF-IDF ridges, then any MiniLM ones), the chosen one, and the
    baseline fitted with it on every paper, as written to ``out`` (and ``oof``)."""

    results: list[fitting.FoldResult]
    best: fitting.FoldResult
    baseline: Baseline
    out: Path
    oof: Path | None

    def summary(self) -> dict[str, Any]:
        """The fit as ``--json`` prints it."""
        return {
            "chosen": self.best.name,
            "threshold": self.baseline.threshold,
            "human_threshold": self.baseline.human_threshold,
            "terms": len(self.baseline.terms),
            "cross_validation": [
                {"model": r.name, "auc": r.auc, "spearman": r.spearman, "mse": r.mse, "mae": r.mae}
                for r in self.results
            ],
            "out": str(self.out),
            "oof": str(self.oof) if self.oof else None,
        }


def fit_baseline(
    request: FitRequest,
    section: ReviewSection,
    on_start: Callable[[int, int], None] | None = None,
    on_paper: Callable[[str], None] | None = None,
) -> BaselineFit:
    """Fit the baseline ``request`` describes on ``section``'s venue (``review.seed`` seeds the
    folds) and write it; ``on_start(papers, 0)`` and ``on_paper(paper_id)`` follow the
    anonymisation of the papers, the slow part."""
    _check_request(request)
    scale = VENUES[section.venue]
    rated = read_ratings(request.ratings, scale)
    if len(rated) < 2 * request.folds:
        raise BadInputError(
            request.ratings,
            f"{len(rated)} papers; {request.folds}-fold fitting needs {2 * request.folds}",
        )
    raw = read_papers(request.papers, rated, request.ratings)
    if on_start is not None:
        on_start(len(rated), 0)
    texts = anonymised_texts(raw, rated, on_paper)
    results, best = _cross_validate(texts, rated, request, section.seed)
    alpha = float(best.name.rpartition("=")[2])
    terms, intercept = fitting.fit_tfidf_ridge(
        texts, [p.mean_rating for p in rated], alpha, request.max_terms
    )
    threshold, human_threshold = fitting.thresholds(rated, best.predictions)
    baseline = Baseline(
        alpha=alpha,
        intercept=intercept,
        terms=terms,
        threshold=threshold,
        human_threshold=human_threshold,
        venue=scale.name,
        mean_rating=math.fsum(r for p in rated for r in p.ratings)
        / sum(len(p.ratings) for p in rated),
        fitted_on=fitted_papers([raw[p.paper_id] for p in rated], texts),
        provenance=_provenance(request, rated, best),
    )
    oof_text = None
    if request.oof is not None:
        predictions, decisions, _ = nested_decisions(
            texts, rated, alpha, request.folds, section.seed, request.max_terms
        )
        oof_text = oof_csv(rated, predictions, decisions)
    write_text_atomic(request.out, baseline_json(baseline))
    if request.oof is not None and oof_text is not None:
        write_text_atomic(request.oof, oof_text)
    return BaselineFit(results, best, baseline, request.out, request.oof)


def _check_request(request: FitRequest) -> None:
    for path in (request.out, request.oof):
        if path is not None and path.is_dir():
            raise BadInputError(path, "is a folder; give a file name")
    if request.oof is not None and request.oof.resolve() == request.out.resolve():
        raise BadInputError(request.oof, "is also -o: give the out-of-fold CSV another name")
    for value in request.alphas:
        if not (math.isfinite(value) and value > 0):
            raise BadInputError(None, f"--alpha {value:g}: a ridge strength must be above 0")


def anonymised_texts(
    texts: dict[str, str],
    papers: list[RatedPaper],
    on_paper: Callable[[str], None] | None = None,
) -> list[str]:
    """The anonymised text of each paper, in ``papers`` order (``on_paper`` told each id)."""
    result = []
    for paper in papers:
        result.append(features_text(texts[paper.paper_id]))
        if on_paper is not None:
            on_paper(paper.paper_id)
    return result


def _cross_validate(
    texts: list[str], rated: list[RatedPaper], request: FitRequest, seed: int
) -> tuple[list[fitting.FoldResult], fitting.FoldResult]:
    """Every model's out-of-fold figures, and the TF-IDF ridge with the best rank score."""
    alphas = request.alphas or fitting.ALPHAS
    results = [
        fitting.tfidf_cv(
            texts, rated, alpha, folds=request.folds, seed=seed, max_terms=request.max_terms
        )
        for alpha in alphas
    ]
    best = max(results, key=lambda r: r.rank_score)
    if request.compare_minilm:
        embeddings: npt.NDArray[np.float32] = fitting.paper_embeddings(texts)
        for value in alphas:
            results.append(
                fitting.embedding_cv(embeddings, rated, value, folds=request.folds, seed=seed)
            )
    return results, best


def nested_decisions(
    texts: list[str], papers: list[RatedPaper], alpha: float, folds: int, seed: int, max_terms: int
) -> tuple[list[float], list[bool], list[float]]:
    """Out-of-fold predictions with decisions whose threshold never saw the paper: for each
    outer fold, the threshold is calibrated on inner out-of-fold predictions of the other
    folds' papers. Returns (predictions, decisions, per-fold thresholds)."""
    outer = fitting.tfidf_cv(texts, papers, alpha, folds=folds, seed=seed, max_terms=max_terms)
    decisions = [False] * len(papers)
    chosen = []
    for held in fitting.fold_indices(len(papers), folds, seed):
        train = [i for i in range(len(papers)) if i not in set(held.tolist())]
        inner = fitting.tfidf_cv(
            [texts[i] for i in train],
            [papers[i] for i in train],
            alpha,
            folds=folds,
            seed=seed + 1,
            max_terms=max_terms,
        )
        threshold, _ = fitting.thresholds([papers[i] for i in train], inner.predictions)
        chosen.append(threshold)
        for i in held.tolist():
            decisions[i] = outer.predictions[i] >= threshold
    return outer.predictions, decisions, chosen


def oof_csv(papers: list[RatedPaper], predictions: list[float], decisions: list[bool]) -> str:
    """The out-of-fold predictions as a CSV: paper_id, score, decision."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["paper_id", "score", "decision"])
    for paper, score, accept in zip(papers, predictions, decisions, strict=True):
        writer.writerow([paper.paper_id, f"{score:.4f}", "Accept" if accept else "Reject"])
    return buffer.getvalue()


def _provenance(
    request: FitRequest, rated: list[RatedPaper], best: fitting.FoldResult
) -> Provenance:
    import sklearn

    ratings, folds = request.ratings, request.folds
    return Provenance(
        command=f"papergym review fit --ratings {ratings.name} --papers {request.papers.name}/ "
        f"--folds {folds} --max-terms {request.max_terms} -o FILE",
        data=request.data_description or f"{len(rated)} papers of {ratings.name}",
        papers=len(rated),
        ratings=sum(len(p.ratings) for p in rated),
        accepted=sum(p.accepted for p in rated),
        version=__version__,
        sklearn=sklearn.__version__,
        date=datetime.date.today().isoformat(),
        selection=f"ridge alpha by the mean of out-of-fold AUC and Spearman ({folds} folds)",
        cross_validation={
            "auc": round(best.auc or 0.0, 4),
            "spearman": round(best.spearman or 0.0, 4),
            "proxy_mse": round(best.mse, 4),
            "proxy_mae": round(best.mae, 4),
        },
    )
