"""``papergym review fit``: fit the offline baseline reviewer on a ratings file and its papers."""

from __future__ import annotations

import csv
import datetime
import io
import math
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import numpy.typing as npt
import typer
from rich.progress import Progress
from rich.table import Table

from papergym import __version__
from papergym.cliutil import DebugOption, JsonOption, reports_errors, stderr, stdout
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
from papergym.settings.cli import ConfigOption, OverridesArgument, resolve

RatingsOption = Annotated[
    Path,
    typer.Option(
        "--ratings",
        help="Tab-separated ratings: paper_id, one column per human reviewer (empty where a paper "
        "had fewer), decision (Accept ... / Reject).",
        show_default=False,
    ),
]
PapersOption = Annotated[
    Path,
    typer.Option(
        "--papers",
        help="Folder of the papers' texts, one PAPER_ID.txt (or .md) per rated paper.",
        show_default=False,
    ),
]


def anonymised_texts(texts: dict[str, str], papers: list[RatedPaper]) -> list[str]:
    """The anonymised text of each paper, in ``papers`` order, with a progress bar."""
    result = []
    with Progress(console=stderr, transient=True) as progress:
        task = progress.add_task("anonymising", total=len(papers))
        for paper in papers:
            result.append(features_text(texts[paper.paper_id]))
            progress.advance(task)
    return result


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
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["paper_id", "score", "decision"])
    for paper, score, accept in zip(papers, predictions, decisions, strict=True):
        writer.writerow([paper.paper_id, f"{score:.4f}", "Accept" if accept else "Reject"])
    return buffer.getvalue()


def print_fit(results: list[fitting.FoldResult], chosen: str, baseline: Baseline) -> None:
    table = Table(
        title=f"Cross-validated baselines ({baseline.provenance.papers} papers, out-of-fold)",
        title_justify="left",
    )
    for column in ("model", "AUC", "Spearman", "proxy MSE", "proxy MAE", ""):
        table.add_column(column, justify="left" if column == "model" else "right")
    for r in results:
        table.add_row(
            r.name,
            "-" if r.auc is None else f"{r.auc:.3f}",
            "-" if r.spearman is None else f"{r.spearman:+.3f}",
            f"{r.mse:.3f}",
            f"{r.mae:.3f}",
            "chosen" if r.name == chosen else "",
        )
    stdout.print(table)
    stdout.print(
        f"baseline threshold {baseline.threshold:.3f} (on its predictions); human threshold "
        f"{baseline.human_threshold:.3f} (on the mean human rating); {len(baseline.terms)} terms"
    )


@reports_errors
def fit_command(
    ratings: RatingsOption,
    papers_dir: PapersOption,
    out: Annotated[
        Path,
        typer.Option("-o", "--out", help="The baseline file to write (JSON).", show_default=False),
    ],
    overrides: OverridesArgument = None,
    oof: Annotated[
        Path | None,
        typer.Option(
            "--oof",
            help="Also write out-of-fold predictions (paper_id, score, decision) to this CSV: each "
            "paper predicted by a model that never saw it, its decision by a threshold "
            "calibrated without it. Evaluate them with `review eval --predictions FILE "
            "--scale 1:10 --score-column score --decision-column decision`.",
            show_default=False,
        ),
    ] = None,
    folds: Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds.")] = 5,
    alphas: Annotated[
        list[float] | None,
        typer.Option(
            "--alpha",
            help="Ridge strength to compare (repeatable; default 0.3, 1, 3, 10). The one with the "
            "best mean of out-of-fold AUC and Spearman is fitted.",
            show_default=False,
        ),
    ] = None,
    max_terms: Annotated[
        int, typer.Option("--max-terms", min=10, help="Vocabulary cap (most frequent words).")
    ] = fitting.MAX_TERMS,
    compare_minilm: Annotated[
        bool,
        typer.Option(
            "--compare-minilm",
            help="Also cross-validate a ridge on MiniLM embeddings of the anonymised texts, for "
            "comparison (slow on CPU); the written baseline is the TF-IDF one.",
        ),
    ] = False,
    data_description: Annotated[
        str | None,
        typer.Option(
            "--data-description",
            help="What the ratings are, for the provenance (no machine paths).",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Fit the offline baseline reviewer: ridge on TF-IDF of the anonymised texts.

    Every paper is anonymised first, so the baseline cannot learn the camera-ready marks.
    Ridge strengths are compared by cross-validation and chosen on AUC for acceptance and
    Spearman against the mean human rating (never on MSE alone); the chosen one is fitted on
    every paper and written with its vocabulary, idf, coefficients, decision thresholds,
    the mean of its human ratings, hashes of the papers' texts (so that `review eval` can tell
    its in-sample papers) and provenance. A baseline, and labelled as one wherever it is used.
    """
    settings = resolve(config, overrides)
    scale = VENUES[settings.review.venue]
    seed = settings.review.seed
    for path in (out, oof):
        if path is not None and path.is_dir():
            raise BadInputError(path, "is a folder; give a file name")
    if oof is not None and oof.resolve() == out.resolve():
        raise BadInputError(oof, "is also -o: give the out-of-fold CSV another name")
    for value in alphas or ():
        if not (math.isfinite(value) and value > 0):
            raise BadInputError(None, f"--alpha {value:g}: a ridge strength must be above 0")
    rated = read_ratings(ratings, scale)
    if len(rated) < 2 * folds:
        raise BadInputError(ratings, f"{len(rated)} papers; {folds}-fold fitting needs {2 * folds}")
    raw = read_papers(papers_dir, rated, ratings)
    texts = anonymised_texts(raw, rated)
    results = []
    for alpha in alphas or fitting.ALPHAS:
        results.append(
            fitting.tfidf_cv(texts, rated, alpha, folds=folds, seed=seed, max_terms=max_terms)
        )
    best = max(results, key=lambda r: r.rank_score)
    alpha = float(best.name.rpartition("=")[2])
    if compare_minilm:
        embeddings: npt.NDArray[np.float32] = fitting.paper_embeddings(texts)
        for value in alphas or fitting.ALPHAS:
            results.append(fitting.embedding_cv(embeddings, rated, value, folds=folds, seed=seed))
    terms, intercept = fitting.fit_tfidf_ridge(
        texts, [p.mean_rating for p in rated], alpha, max_terms
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
        provenance=_provenance(
            ratings, papers_dir, rated, folds, max_terms, best, data_description
        ),
    )
    oof_text = None
    if oof is not None:
        predictions, decisions, _ = nested_decisions(texts, rated, alpha, folds, seed, max_terms)
        oof_text = oof_csv(rated, predictions, decisions)
    write_text_atomic(out, baseline_json(baseline))
    if oof is not None and oof_text is not None:
        write_text_atomic(oof, oof_text)
    summary = _summary(results, best, baseline, out, oof)
    if json_output:
        import json

        print(json.dumps(summary, indent=2))
    else:
        print_fit(results, best.name, baseline)
        stdout.print(f"wrote {out}" + (f" and {oof}" if oof else ""))


def _provenance(
    ratings: Path,
    papers_dir: Path,
    rated: list[RatedPaper],
    folds: int,
    max_terms: int,
    best: fitting.FoldResult,
    description: str | None,
) -> Provenance:
    import sklearn

    return Provenance(
        command=f"papergym review fit --ratings {ratings.name} --papers {papers_dir.name}/ "
        f"--folds {folds} --max-terms {max_terms} -o FILE",
        data=description or f"{len(rated)} papers of {ratings.name}",
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


def _summary(
    results: list[fitting.FoldResult],
    best: fitting.FoldResult,
    baseline: Baseline,
    out: Path,
    oof: Path | None,
) -> dict[str, Any]:
    return {
        "chosen": best.name,
        "threshold": baseline.threshold,
        "human_threshold": baseline.human_threshold,
        "terms": len(baseline.terms),
        "cross_validation": [
            {"model": r.name, "auc": r.auc, "spearman": r.spearman, "mse": r.mse, "mae": r.mae}
            for r in results
        ],
        "out": str(out),
        "oof": str(oof) if oof else None,
    }
