"""Fitting the offline baseline (``papergym review fit``): TF-IDF of the anonymised texts, a
ridge regression on the mean human rating, the regularisation chosen by cross-validation on
AUC for acceptance and Spearman against the mean rating (never on MSE alone: a model shrunk to
the mean wins MSE while ranking nothing), and the decision thresholds calibrated.

scikit-learn does the fitting; :class:`~papergym.review.offline.Baseline` predicts from the
result without it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from papergym.review.data import RatedPaper
from papergym.review.metrics import auc, best_threshold, proxy_errors, rate_threshold, spearman
from papergym.review.offline import tokens

ALPHAS = (0.3, 1.0, 3.0, 10.0)
"""Ridge strengths compared by cross-validation."""
MAX_TERMS = 3000
"""Vocabulary cap: the most frequent words (after document-frequency limits); keeps the shipped
file small."""
MIN_DF = 5
MAX_DF = 0.9


@dataclass(frozen=True)
class FoldResult:
    """Out-of-fold predictions of one model setting and their metrics."""

    name: str
    predictions: list[float]
    auc: float | None
    spearman: float | None
    mse: float
    mae: float

    @property
    def rank_score(self) -> float:
        """What selection maximises: the mean of AUC and Spearman."""
        return ((self.auc or 0.5) + (self.spearman or 0.0)) / 2.0


def _given(words: list[str]) -> list[str]:
    """The analyzer of texts already split into :func:`tokens`."""
    return words


def _vectoriser(max_terms: int, papers: int) -> object:
    """scikit-learn's TF-IDF as :class:`~papergym.review.offline.Baseline` computes it, on texts
    already split into :func:`~papergym.review.offline.tokens` (split once, fitted per fold)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(
        analyzer=_given,
        sublinear_tf=True,
        min_df=min(MIN_DF, max(1, papers // 4)),
        max_df=MAX_DF if papers >= 10 else 1.0,
        max_features=max_terms,
        norm="l2",
        smooth_idf=True,
    )


def fit_tfidf_ridge(
    texts: Sequence[str], targets: Sequence[float], alpha: float, max_terms: int = MAX_TERMS
) -> tuple[dict[str, tuple[float, float]], float]:
    """(word → (idf, coefficient), intercept) of a ridge fitted on anonymised ``texts``."""
    from sklearn.linear_model import Ridge

    vectoriser: Any = _vectoriser(max_terms, len(texts))
    matrix = vectoriser.fit_transform([tokens(t) for t in texts])
    model = Ridge(alpha=alpha).fit(matrix, np.asarray(targets, dtype=float))
    vocabulary: dict[str, int] = vectoriser.vocabulary_
    idf: npt.NDArray[np.float64] = vectoriser.idf_
    terms = {w: (float(idf[i]), float(model.coef_[i])) for w, i in sorted(vocabulary.items())}
    return terms, float(model.intercept_)


def fold_indices(n: int, folds: int, seed: int) -> list[npt.NDArray[np.int64]]:
    """The papers' indices shuffled by ``seed`` and cut into ``folds`` near-equal parts."""
    order = np.random.default_rng(seed).permutation(n)
    return [np.asarray(part, dtype=np.int64) for part in np.array_split(order, folds)]


def out_of_fold(
    predict_fold: Callable[[npt.NDArray[np.int64], npt.NDArray[np.int64]], Sequence[float]],
    n: int,
    folds: int,
    seed: int,
) -> list[float]:
    """Each paper's prediction by a model fitted on the other folds."""
    result = [math.nan] * n
    for held in fold_indices(n, folds, seed):
        train = np.setdiff1d(np.arange(n, dtype=np.int64), held)
        for index, value in zip(held, predict_fold(train, held), strict=True):
            result[int(index)] = float(value)
    return result


def score_predictions(
    name: str, predictions: list[float], papers: Sequence[RatedPaper]
) -> FoldResult:
    """The metrics selection looks at, for out-of-fold predictions."""
    errors = [proxy_errors(p, paper.ratings) for p, paper in zip(predictions, papers, strict=True)]
    return FoldResult(
        name=name,
        predictions=predictions,
        auc=auc(predictions, [p.accepted for p in papers]),
        spearman=spearman(predictions, [p.mean_rating for p in papers]),
        mse=math.fsum(e[0] for e in errors) / len(errors),
        mae=math.fsum(e[1] for e in errors) / len(errors),
    )


def tfidf_cv(
    texts: Sequence[str],
    papers: Sequence[RatedPaper],
    alpha: float,
    *,
    folds: int,
    seed: int,
    max_terms: int = MAX_TERMS,
) -> FoldResult:
    """Out-of-fold TF-IDF ridge predictions of ``papers`` at one ``alpha``."""
    from sklearn.linear_model import Ridge

    targets = np.asarray([p.mean_rating for p in papers], dtype=float)
    docs = [tokens(t) for t in texts]

    def predict(train: npt.NDArray[np.int64], held: npt.NDArray[np.int64]) -> list[float]:
        vectoriser: Any = _vectoriser(max_terms, len(train))
        matrix = vectoriser.fit_transform([docs[i] for i in train])
        model = Ridge(alpha=alpha).fit(matrix, targets[train])
        return [float(v) for v in model.predict(vectoriser.transform([docs[i] for i in held]))]

    name = f"tfidf-ridge alpha={alpha:g}"
    return score_predictions(name, out_of_fold(predict, len(papers), folds, seed), papers)


def embedding_cv(
    embeddings: npt.NDArray[np.float32],
    papers: Sequence[RatedPaper],
    alpha: float,
    *,
    folds: int,
    seed: int,
) -> FoldResult:
    """Out-of-fold ridge predictions on sentence embeddings of the papers (MiniLM)."""
    from sklearn.linear_model import Ridge

    targets = np.asarray([p.mean_rating for p in papers], dtype=float)

    def predict(train: npt.NDArray[np.int64], held: npt.NDArray[np.int64]) -> list[float]:
        model = Ridge(alpha=alpha).fit(embeddings[train], targets[train])
        return [float(v) for v in model.predict(embeddings[held])]

    name = f"minilm-ridge alpha={alpha:g}"
    return score_predictions(name, out_of_fold(predict, len(papers), folds, seed), papers)


def paper_embeddings(texts: Sequence[str], chunk_words: int = 200, chunks: int = 24) -> Any:
    """One MiniLM vector per paper: the mean of the embeddings of its first ``chunks`` chunks
    of ``chunk_words`` words (the model reads 256 word pieces at a time), unit length."""
    from papergym.embed import embed

    pieces: list[str] = []
    owners: list[int] = []
    for index, text in enumerate(texts):
        words = text.split()
        for start in range(0, min(len(words), chunk_words * chunks), chunk_words):
            pieces.append(" ".join(words[start : start + chunk_words]))
            owners.append(index)
    vectors = embed(pieces)
    result = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
    np.add.at(result, np.asarray(owners), vectors)
    norms = np.linalg.norm(result, axis=1, keepdims=True)
    return result / np.where(norms == 0, 1.0, norms)


def thresholds(papers: Sequence[RatedPaper], predictions: Sequence[float]) -> tuple[float, float]:
    """(threshold on the baseline's out-of-fold predictions, threshold on the mean human rating).

    The human one matches the most decisions. The baseline's accepts as many papers as were
    accepted: its predictions rank papers only weakly and are shrunk towards the mean, so the
    most-decisions threshold on them rejects every paper, which is the always-reject baseline
    and says nothing about a paper."""
    accepted = [p.accepted for p in papers]
    return (
        rate_threshold(list(predictions), accepted),
        best_threshold([p.mean_rating for p in papers], accepted),
    )
