"""The baseline's plain-Python prediction is scikit-learn's, and the shipped file is sound."""

from __future__ import annotations

import asyncio
import random
from importlib import resources

import numpy as np
import pytest

from papergym.review import baseline_fit as fitting
from papergym.review.offline import Baseline, OfflineReviewer, Provenance, baseline_json, tokens


def corpus(n: int = 30) -> tuple[list[str], list[float]]:
    rng = random.Random(1)
    vocabulary = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "theta",
        "kappa",
        "lambda",
        "sigma",
        "omega",
    ]
    texts = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(20, 80))) for _ in range(n)]
    targets = [3.0 + 0.5 * t.split().count("alpha") / 5 + rng.random() for t in texts]
    return texts, targets


def test_prediction_matches_scikit_learn() -> None:
    from sklearn.linear_model import Ridge

    texts, targets = corpus()
    terms, intercept = fitting.fit_tfidf_ridge(texts, targets, alpha=1.0, max_terms=50)
    provenance = Provenance(
        command="t", data="t", papers=30, ratings=60, accepted=10, version="0", sklearn="0",
        date="2026-01-01", selection="t",
    )  # fmt: skip
    baseline = Baseline(
        alpha=1.0, intercept=intercept, terms=terms, threshold=5.0, human_threshold=5.5,
        provenance=provenance,
    )  # fmt: skip
    vectoriser = fitting._vectoriser(50, len(texts))
    matrix = vectoriser.fit_transform([tokens(t) for t in texts])  # type: ignore[attr-defined]
    expected = Ridge(alpha=1.0).fit(matrix, np.asarray(targets)).predict(matrix)
    ours = [baseline.predict_rating(t) for t in texts]
    assert ours == pytest.approx(expected.tolist(), abs=1e-9)
    # the readable JSON round-trips to the same predictions (6 significant digits)
    again = Baseline.model_validate_json(baseline_json(baseline))
    assert [again.predict_rating(t) for t in texts] == pytest.approx(ours, abs=1e-3)


def test_shipped_baseline_is_small_labelled_and_path_free() -> None:
    text = resources.files("papergym.review").joinpath("baseline", "iclr2022.json").read_text()
    assert len(text.encode()) < 1_000_000
    for machine_path in ("/work/", "/home/", "/tmp/", "C:\\"):
        assert machine_path not in text
    reviewer = OfflineReviewer()
    assert reviewer.baseline.provenance.papers > 0
    review = asyncio.run(reviewer.review("p", "# T\n\nAbstract\n\nWe prove a theorem."))
    assert review.baseline is True and review.reviews == []
    assert review.score is not None and 1.0 <= review.score <= 10.0
    assert review.decision == ("accept" if review.score >= reviewer.threshold else "reject")


def test_an_empty_text_predicts_the_intercept() -> None:
    reviewer = OfflineReviewer()
    assert reviewer.baseline.predict_rating("") == reviewer.baseline.intercept
