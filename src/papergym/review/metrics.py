"""Pure metrics of a reviewer against human reviewers, and bootstrap intervals over papers.

Proxy MSE and MAE (as the AI-Scientist and CycleReviewer papers define them, with one definition
for every row): for a paper with human ratings r_1..r_k and a prediction p, the error is
averaged over i of (p − mean of the ratings other than r_i), squared or absolute; then averaged
over papers. The single human reviewer is measured with the same definition, reviewer i's own
rating r_i taking the place of p. No I/O here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from papergym.eval.records import Estimate
from papergym.eval.stats import DEFAULT_LEVEL, DEFAULT_RESAMPLES

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.int64]


def _others_means(ratings: Sequence[float]) -> list[float]:
    if len(ratings) < 2:
        raise ValueError(f"proxy errors need at least 2 ratings, not {len(ratings)}")
    total = math.fsum(ratings)
    return [(total - r) / (len(ratings) - 1) for r in ratings]


def proxy_errors(prediction: float, ratings: Sequence[float]) -> tuple[float, float]:
    """(squared, absolute) error of ``prediction`` against the mean of the reviewers other than
    i, averaged over reviewers i."""
    others = _others_means(ratings)
    squared = math.fsum((prediction - m) ** 2 for m in others) / len(others)
    absolute = math.fsum(abs(prediction - m) for m in others) / len(others)
    return squared, absolute


def human_proxy_errors(ratings: Sequence[float]) -> tuple[float, float]:
    """(squared, absolute) error of reviewer i's rating against the mean of the others,
    averaged over reviewers i: the single human reviewer under the proxy definition."""
    others = _others_means(ratings)
    pairs = list(zip(ratings, others, strict=True))
    squared = math.fsum((r - m) ** 2 for r, m in pairs) / len(pairs)
    absolute = math.fsum(abs(r - m) for r, m in pairs) / len(pairs)
    return squared, absolute


def auc(scores: Sequence[float], positives: Sequence[bool]) -> float | None:
    """Area under the ROC curve of ``scores`` for ``positives``: the chance that a random
    positive scores above a random negative, ties counting one half. None without both classes."""
    pos = [s for s, p in zip(scores, positives, strict=True) if p]
    neg = [s for s, p in zip(scores, positives, strict=True) if not p]
    if not pos or not neg:
        return None
    a = np.asarray(pos, dtype=float)[:, None]
    b = np.asarray(neg, dtype=float)[None, :]
    return float(((a > b).sum() + 0.5 * (a == b).sum()) / (a.size * b.size))


def accuracy(predicted: Sequence[bool], actual: Sequence[bool]) -> float | None:
    """Share of papers whose decision matches; None with no papers."""
    if not actual:
        return None
    return sum(p == a for p, a in zip(predicted, actual, strict=True)) / len(actual)


def _f1(predicted: Sequence[bool], actual: Sequence[bool], label: bool) -> float:
    tp = sum(p == label and a == label for p, a in zip(predicted, actual, strict=True))
    fp = sum(p == label and a != label for p, a in zip(predicted, actual, strict=True))
    fn = sum(p != label and a == label for p, a in zip(predicted, actual, strict=True))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def macro_f1(predicted: Sequence[bool], actual: Sequence[bool]) -> float | None:
    """Mean of the F1 of accept and the F1 of reject (a class never predicted and never true is
    left out); None with no papers."""
    if not actual:
        return None
    labels = [label for label in (True, False) if label in actual or label in predicted]
    return math.fsum(_f1(predicted, actual, label) for label in labels) / len(labels)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ (ties averaged); None with fewer than 3 points or a constant variable."""
    from papergym.eval.stats import spearman as rho

    return rho(x, y) if len(x) >= 3 else None


def bootstrap(
    statistic: Callable[[IndexArray], float | None],
    n: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """``statistic`` of the n papers with a percentile-bootstrap interval resampling papers.

    ``statistic`` takes the indices of a sample of papers (with repeats) and returns the value,
    or None where it is undefined on that sample (AUC with one class): those resamples are left
    out of the interval. Seeded: the same inputs give the same interval.
    """
    value = statistic(np.arange(n, dtype=np.int64)) if n else None
    if value is None:
        return Estimate(value=None, n=n, level=level)
    rng = np.random.default_rng(seed)
    draws = [statistic(rng.integers(0, n, size=n, dtype=np.int64)) for _ in range(resamples)]
    kept = np.asarray([d for d in draws if d is not None and math.isfinite(d)], dtype=float)
    if kept.size == 0:
        return Estimate(value=value, n=n, level=level)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = (float(v) for v in np.percentile(kept, [tail, 100.0 - tail]))
    return Estimate(value=value, low=min(low, value), high=max(high, value), n=n, level=level)


def mean_of(values: Sequence[float]) -> Callable[[IndexArray], float | None]:
    """The statistic "mean of these per-paper values" for :func:`bootstrap`."""
    data = np.asarray(values, dtype=float)
    return lambda index: float(data[index].mean()) if index.size else None


def best_threshold(scores: Sequence[float], accepted: Sequence[bool]) -> float:
    """The decision threshold on ``scores`` (accept when score >= threshold) that matches the
    most decisions; of equally good ones, the middle of the widest gap between scores, so the
    threshold sits between papers rather than on one."""
    values = sorted(set(scores))
    candidates = [values[0] - 1.0]
    candidates += [(a + b) / 2.0 for a, b in itertools.pairwise(values)]
    candidates.append(values[-1] + 1.0)
    best = (-1, -1.0, candidates[0])
    for index, threshold in enumerate(candidates):
        hits = sum((s >= threshold) == a for s, a in zip(scores, accepted, strict=True))
        inner = 0 < index < len(candidates) - 1
        gap = values[index] - values[index - 1] if inner else 0.0
        if (hits, gap) > best[:2]:
            best = (hits, gap, threshold)
    return best[2]


def rate_threshold(scores: Sequence[float], accepted: Sequence[bool]) -> float:
    """The threshold that accepts as many papers as were accepted: midway between the k-th and
    (k+1)-th highest scores, k the number accepted. Used where the scores rank papers only
    weakly, when the threshold of best accuracy would reject every paper (the always-reject
    baseline's decision, which says nothing about the paper)."""
    ordered = sorted(scores, reverse=True)
    k = sum(accepted)
    if k == 0:
        return ordered[0] + 1.0
    if k >= len(ordered):
        return ordered[-1] - 1.0
    return (ordered[k - 1] + ordered[k]) / 2.0
