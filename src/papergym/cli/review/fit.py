"""``papergym review fit``: fit the offline baseline reviewer on a ratings file and its papers
(:mod:`papergym.review.fit_run`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    OverridesArgument,
    numbers_table,
    reports_errors,
    resolve,
    stdout,
)
from papergym.cli.progress import ProgressBar
from papergym.review.baseline_fit import MAX_TERMS
from papergym.review.fit_run import FOLDS, BaselineFit, FitRequest, fit_baseline

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


BaselineOutOption = Annotated[
    Path,
    typer.Option("-o", "--out", help="The baseline file to write (JSON).", show_default=False),
]
OofOption = Annotated[
    Path | None,
    typer.Option(
        "--oof",
        help="Also write out-of-fold predictions (paper_id, score, decision) to this CSV: each "
        "paper predicted by a model that never saw it, its decision by a threshold "
        "calibrated without it. Evaluate them with `review eval --predictions FILE "
        "--scale 1:10 --score-column score --decision-column decision`.",
        show_default=False,
    ),
]
FoldsOption = Annotated[int, typer.Option("--folds", min=2, help="Cross-validation folds.")]
AlphaOption = Annotated[
    list[float] | None,
    typer.Option(
        "--alpha",
        help="Ridge strength to compare (repeatable; default 0.3, 1, 3, 10). The one with the "
        "best mean of out-of-fold AUC and Spearman is fitted.",
        show_default=False,
    ),
]
MaxTermsOption = Annotated[
    int, typer.Option("--max-terms", min=10, help="Vocabulary cap (most frequent words).")
]
CompareMiniLMOption = Annotated[
    bool,
    typer.Option(
        "--compare-minilm",
        help="Also cross-validate a ridge on MiniLM embeddings of the anonymised texts, for "
        "comparison (slow on CPU); the written baseline is the TF-IDF one.",
    ),
]
DataDescriptionOption = Annotated[
    str | None,
    typer.Option(
        "--data-description",
        help="What the ratings are, for the provenance (no machine paths).",
        show_default=False,
    ),
]


@reports_errors
def review_fit(
    ratings: RatingsOption,
    papers_dir: PapersOption,
    out: BaselineOutOption,
    overrides: OverridesArgument = None,
    oof: OofOption = None,
    folds: FoldsOption = FOLDS,
    alphas: AlphaOption = None,
    max_terms: MaxTermsOption = MAX_TERMS,
    compare_minilm: CompareMiniLMOption = False,
    data_description: DataDescriptionOption = None,
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
    alphas_given = tuple(alphas or ())
    request = FitRequest(
        ratings,
        papers_dir,
        out,
        oof,
        folds,
        alphas_given,
        max_terms,
        compare_minilm,
        data_description,
    )
    with ProgressBar("anonymising") as bar:
        fit = fit_baseline(request, settings.review, on_start=bar.start, on_paper=bar.advance)
    if json_output:
        print(json.dumps(fit.summary(), indent=2))
    else:
        _print_fit(fit)
        stdout.print(f"wrote {out}" + (f" and {oof}" if oof else ""))


def _print_fit(fit: BaselineFit) -> None:
    baseline = fit.baseline
    table = numbers_table(
        f"Cross-validated baselines ({baseline.provenance.papers} papers, out-of-fold)",
        ("model", "AUC", "Spearman", "proxy MSE", "proxy MAE", ""),
    )
    for r in fit.results:
        table.add_row(
            r.name,
            "-" if r.auc is None else f"{r.auc:.3f}",
            "-" if r.spearman is None else f"{r.spearman:+.3f}",
            f"{r.mse:.3f}",
            f"{r.mae:.3f}",
            "chosen" if r.name == fit.best.name else "",
        )
    stdout.print(table)
    stdout.print(
        f"baseline threshold {baseline.threshold:.3f} (on its predictions); human threshold "
        f"{baseline.human_threshold:.3f} (on the mean human rating); {len(baseline.terms)} terms"
    )
