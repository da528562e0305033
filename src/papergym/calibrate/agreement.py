"""Pure statistics of a judge against labels: agreement, base rates, Cohen's kappa, its
bootstrap interval, and agreement between repeated verdicts. No I/O here.

Cohen's kappa corrects agreement for chance: with observed agreement ``p_o`` and the agreement
two raters with the same base rates would reach by chance, ``p_e = p_j·p_h + (1−p_j)(1−p_h)``
(``p_j``, ``p_h``: the share of "met" of the judge and of the labels),
``κ = (p_o − p_e) / (1 − p_e)``. It is undefined (None, never 0) when ``p_e = 1``: both
raters gave one and the same verdict to every item, so agreement says nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from papergym.eval.records import Estimate
from papergym.review.metrics import IndexArray, bootstrap


def _checked(judge: Sequence[bool], labels: Sequence[bool]) -> None:
    if len(judge) != len(labels):
        raise ValueError(f"{len(judge)} verdicts against {len(labels)} labels")


def agreement(judge: Sequence[bool], labels: Sequence[bool]) -> float | None:
    """The share of items on which the judge and the labels agree (None for no items)."""
    _checked(judge, labels)
    if not judge:
        return None
    return sum(j == h for j, h in zip(judge, labels, strict=True)) / len(judge)


def base_rate(verdicts: Sequence[bool]) -> float | None:
    """The share of "met" among ``verdicts`` (None for none)."""
    return sum(verdicts) / len(verdicts) if verdicts else None


def cohen_kappa(judge: Sequence[bool], labels: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary raters; None when chance agreement is 1 (see the module)."""
    observed = agreement(judge, labels)
    if observed is None:
        return None
    p_judge, p_labels = sum(judge) / len(judge), sum(labels) / len(labels)
    chance = p_judge * p_labels + (1 - p_judge) * (1 - p_labels)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def kappa_estimate(
    judge: Sequence[bool],
    labels: Sequence[bool],
    *,
    resamples: int,
    level: float,
    seed: int,
) -> Estimate:
    """Cohen's kappa with a percentile-bootstrap interval over items (resamples where kappa
    is undefined are left out); ``value`` None when kappa is undefined on all the items."""
    _checked(judge, labels)
    j, h = np.asarray(judge, dtype=bool), np.asarray(labels, dtype=bool)

    def statistic(index: IndexArray) -> float | None:
        return cohen_kappa(j[index].tolist(), h[index].tolist())

    return bootstrap(statistic, len(j), resamples=resamples, level=level, seed=seed)


def self_agreement(runs: Sequence[Sequence[bool | None]]) -> float | None:
    """Over items, the share of pairs of runs that gave the same verdict, averaged over items.

    ``runs[r][i]`` is run r's verdict on item i (None: unscored in that run, left out of that
    item's pairs). 1.0 means every run agreed on every item; None when no item has two scored
    verdicts (one run, or everything unscored).
    """
    if not runs:
        return None
    items = len(runs[0])
    if any(len(run) != items for run in runs):
        raise ValueError("every run must give a verdict (or None) for every item")
    shares: list[float] = []
    for i in range(items):
        given = [run[i] for run in runs if run[i] is not None]
        pairs = list(itertools.combinations(given, 2))
        if pairs:
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return sum(shares) / len(shares) if shares else None
