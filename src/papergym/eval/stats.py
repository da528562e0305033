"""Pure statistics for evaluation: bootstrap intervals and correlations.

Intervals are percentile bootstraps over the units given (questions): seeded, so the same
inputs always give the same interval. No I/O and no LLM here; ``compare`` reuses these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import numpy as np

from papergym.eval.records import Correlation, Estimate

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def percentile_interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """The percentile-bootstrap interval of ``draws`` at ``level`` (0.95: 2.5th to 97.5th)."""
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(draws, [tail, 100.0 - tail])
    return float(low), float(high)


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def bootstrap_mean(
    values: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """The mean of ``values`` with a percentile-bootstrap interval (resampling the values).

    Empty input gives value None and n 0; a single value (or identical ones) a zero-width
    interval at the mean.
    """
    n = len(values)
    if n == 0:
        return Estimate(value=None, n=0, level=level)
    mean = _mean(values)
    data = np.asarray(values, dtype=float)
    if n == 1 or bool(np.all(data == data[0])):
        return Estimate(value=mean, low=mean, high=mean, n=n, level=level)
    index = _rng(seed).integers(0, n, size=(resamples, n))
    draws = data[index].mean(axis=1)
    low, high = percentile_interval(draws, level)
    # the percentile interval of a skewed statistic can miss the point estimate by rounding;
    # a reader expects the interval to hold it
    return Estimate(value=mean, low=min(low, mean), high=max(high, mean), n=n, level=level)


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """Mean of ``a[i] - b[i]`` with a bootstrap interval resampling the pairs (questions).

    Resampling pairs, not each side apart, keeps the question's difficulty shared by both
    systems out of the interval. ``a`` and ``b`` must have the same length.
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} and {len(b)}")
    return bootstrap_mean(
        [x - y for x, y in zip(a, b, strict=True)], resamples=resamples, level=level, seed=seed
    )


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test of wins against losses (ties dropped): with a handful of seeds
    the bootstrap interval is rough, and "8 of 8" (p 0.008) is the plainer statement."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(wins, losses) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n, ties getting the mean of the ranks they span (as Spearman needs)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        rank = (start + end) / 2.0 + 1.0
        for position in range(start, end + 1):
            result[order[position]] = rank
        start = end + 1
    return result


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r; None with fewer than 2 points or when either variable is constant."""
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} and {len(y)}")
    if len(x) < 2:
        return None
    mx, my = _mean(x), _mean(y)
    dx = [v - mx for v in x]
    dy = [v - my for v in y]
    sxx = math.fsum(v * v for v in dx)
    syy = math.fsum(v * v for v in dy)
    if sxx == 0.0 or syy == 0.0:
        return None
    r = math.fsum(p * q for p, q in zip(dx, dy, strict=True)) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's ρ: Pearson's r of the ranks (ties averaged)."""
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} and {len(y)}")
    return pearson(ranks(x), ranks(y))


def _row_ranks(rows: np.ndarray) -> np.ndarray:
    """:func:`ranks` of each row (ties averaged): a value's average rank is the middle of the
    positions its equals take in the sorted row."""
    result = np.empty_like(rows, dtype=float)
    for index, row in enumerate(rows):
        ordered = np.sort(row)
        below = np.searchsorted(ordered, row, side="left")
        through = np.searchsorted(ordered, row, side="right")
        result[index] = (below + through + 1) / 2.0
    return result


def _row_pearson(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Pearson's r of each row pair; NaN where a row is constant."""
    dx = xs - xs.mean(axis=1, keepdims=True)
    dy = ys - ys.mean(axis=1, keepdims=True)
    denominator = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dx * dy).sum(axis=1) / denominator
    # a constant resample has no r; float noise on a near-constant one can leave a tiny
    # denominator rather than 0, which gives a meaningless r: drop those too
    r[denominator < 1e-12] = np.nan
    return np.asarray(np.clip(r, -1.0, 1.0), dtype=float)


def correlation(
    x: Sequence[float],
    y: Sequence[float],
    method: Literal["pearson", "spearman"] = "pearson",
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Correlation:
    """A correlation with a percentile-bootstrap interval resampling the (x, y) points.

    Resamples where a variable comes out constant have no r and are left out of the interval;
    with fewer than 3 points there is no interval.
    """
    statistic = pearson if method == "pearson" else spearman
    r = statistic(x, y)
    n = len(x)
    if r is None or n < 3:
        return Correlation(method=method, r=r, n=n, level=level)
    index = _rng(seed).integers(0, n, size=(resamples, n))
    xs = np.asarray(x, dtype=float)[index]
    ys = np.asarray(y, dtype=float)[index]
    if method == "spearman":
        xs = _row_ranks(xs)
        ys = _row_ranks(ys)
    draws = _row_pearson(xs, ys)
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return Correlation(method=method, r=r, n=n, level=level)
    low, high = percentile_interval(draws, level)
    return Correlation(method=method, r=r, low=min(low, r), high=max(high, r), n=n, level=level)


# -- compare: rates clustered by question, and agreement between judges -----------------------


def bootstrap_ratio(
    numerators: Sequence[float],
    denominators: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """``Σ numerators / Σ denominators`` with a bootstrap interval resampling the units.

    Each unit (a question) contributes its counts together (the wins among its verdicts, and
    its verdicts), so verdicts of one question, which share its difficulty, move together in
    the resamples: a cluster bootstrap. Units with a zero denominator count in ``n`` only when
    they have verdicts; resamples whose denominators sum to 0 are left out. ``n`` is the number
    of units with a positive denominator.
    """
    if len(numerators) != len(denominators):
        raise ValueError(
            f"numerators and denominators differ in length: {len(numerators)} and "
            f"{len(denominators)}"
        )
    pairs = [(a, b) for a, b in zip(numerators, denominators, strict=True) if b > 0]
    n = len(pairs)
    total = math.fsum(b for _, b in pairs)
    if n == 0 or total == 0:
        return Estimate(value=None, n=0, level=level)
    value = math.fsum(a for a, _ in pairs) / total
    tops = np.asarray([a for a, _ in pairs], dtype=float)
    bottoms = np.asarray([b for _, b in pairs], dtype=float)
    if n == 1 or bool(np.all(tops * bottoms[0] == tops[0] * bottoms)):
        # every unit has the same ratio: every resample has it too
        return Estimate(value=value, low=value, high=value, n=n, level=level)
    index = _rng(seed).integers(0, n, size=(resamples, n))
    draws = tops[index].sum(axis=1) / bottoms[index].sum(axis=1)
    low, high = percentile_interval(draws, level)
    return Estimate(value=value, low=min(low, value), high=max(high, value), n=n, level=level)


class FleissKappa(NamedTuple):
    """Fleiss' κ with its parts: observed agreement P̄ and chance agreement P̄e."""

    kappa: float | None
    observed: float | None
    expected: float | None
    items: int
    raters: int


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> FleissKappa:
    """Fleiss' κ (1971) of a table of items × categories: how many raters put each item in
    each category. Every item must have the same number of raters, at least 2.

    κ = (P̄ − P̄e) / (1 − P̄e), with P̄ the mean over items of the share of agreeing rater pairs
    and P̄e = Σ p_j², p_j the share of all ratings in category j. κ is None when there are no
    items or when every rating falls in one category (P̄e = 1: chance alone explains the
    agreement, and κ is 0/0).
    """
    if not counts:
        return FleissKappa(None, None, None, 0, 0)
    raters = sum(counts[0])
    if raters < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 raters per item, not {raters}")
    for number, row in enumerate(counts, start=1):
        if sum(row) != raters or any(c < 0 for c in row):
            raise ValueError(
                f"item {number} has {sum(row)} ratings; every item needs {raters} (no negatives)"
            )
    items = len(counts)
    width = len(counts[0])
    shares = [math.fsum(row[j] for row in counts) / (items * raters) for j in range(width)]
    agreement = [(sum(c * c for c in row) - raters) / (raters * (raters - 1)) for row in counts]
    observed = math.fsum(agreement) / items
    expected = math.fsum(p * p for p in shares)
    if math.isclose(expected, 1.0):
        return FleissKappa(None, observed, expected, items, raters)
    kappa = (observed - expected) / (1.0 - expected)
    return FleissKappa(kappa, observed, expected, items, raters)
