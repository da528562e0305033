"""The reviewer-scored comparison of groups of papers (SPEC §5: CycleResearcher's generated papers
5.36, preprints 5.24, accepted papers 5.69, on the reviewer's mean rating).

Each group is a ``papergym review`` output (its reviews.jsonl, read as ``review eval`` reads it):
no scoring here. Per group: the mean score with a bootstrap interval over papers, the accept
rate (the reviewer's decisions), and how many papers stayed unscored: an unscored paper is
reported, never counted as a 0. Between groups, which are different papers (not paired): the
difference of means with an interval resampling each group apart, and whether it holds (the
interval excludes 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import Field

from papergym.errors import BadInputError
from papergym.eval.records import Estimate
from papergym.eval.stats import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    bootstrap_mean,
    percentile_interval,
)
from papergym.records import Record
from papergym.review.data import read_reviews_file
from papergym.review.records import VenueScale
from papergym.review.run import REVIEWS_FILE


class GroupScores(Record):
    """One group's papers as the reviewer scored them."""

    name: str
    source: str = Field(description="The reviews.jsonl read.")
    papers: int
    unscored: int = Field(description="Papers with no score (left out of the mean, not 0).")
    mean_score: Estimate
    accept_rate: Estimate


class GroupDifference(Record):
    """``later`` minus ``earlier``: difference of mean scores, with its interval."""

    earlier: str
    later: str
    difference: Estimate
    holds: bool = Field(description="The interval excludes 0.")


class Comparison(Record):
    """Every group, and the difference of each later group from each earlier one."""

    reviewer_models: tuple[str, ...]
    groups: tuple[GroupScores, ...]
    differences: tuple[GroupDifference, ...]


def reviews_path(folder: Path) -> Path:
    """A group's reviews.jsonl: the file given, or the one in the ``papergym review`` folder."""
    path = folder / REVIEWS_FILE if folder.is_dir() else folder
    if not path.is_file():
        raise BadInputError(folder, f"no {REVIEWS_FILE}: not a `papergym review` output folder")
    return path


def difference_of_means(
    later: Sequence[float],
    earlier: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = 0,
) -> Estimate:
    """mean(later) − mean(earlier) for two independent samples, with a percentile-bootstrap
    interval resampling each sample apart; n is the smaller sample (None: one is empty)."""
    if not later or not earlier:
        return Estimate(value=None, n=0, level=level)
    a, b = np.asarray(later, dtype=float), np.asarray(earlier, dtype=float)
    value = float(a.mean() - b.mean())
    rng = np.random.default_rng(seed)
    draws = a[rng.integers(0, a.size, (resamples, a.size))].mean(axis=1) - b[
        rng.integers(0, b.size, (resamples, b.size))
    ].mean(axis=1)
    low, high = percentile_interval(draws, level)
    n = min(a.size, b.size)
    return Estimate(value=value, low=min(low, value), high=max(high, value), n=n, level=level)


def compare_groups(groups: Sequence[tuple[str, Path]], scale: VenueScale) -> Comparison:
    """Read each group's reviews and compare them; every file is read before any figure."""
    if len({name for name, _ in groups}) != len(groups):
        raise BadInputError(None, "two groups have the same name; give each GROUP=DIR a new name")
    read = [(name, reviews_path(folder)) for name, folder in groups]
    files = [(name, path, read_reviews_file(path, scale)) for name, path in read]
    scores: dict[str, list[float]] = {}
    rows = []
    models: dict[str, None] = {}
    for name, path, reviews in files:
        scored = [p for p in reviews.predictions.values() if p.score is not None]
        scores[name] = [float(p.score) for p in scored if p.score is not None]
        accepted = [1.0 if p.decision == "accept" else 0.0 for p in scored]
        models.update(dict.fromkeys(reviews.reviewer_models))
        rows.append(
            GroupScores(
                name=name,
                source=str(path),
                papers=len(reviews.predictions),
                unscored=len(reviews.predictions) - len(scored),
                mean_score=bootstrap_mean(scores[name]),
                accept_rate=bootstrap_mean(accepted),
            )
        )
    differences = []
    for i, (earlier, _) in enumerate(groups):
        for later, _ in groups[i + 1 :]:
            estimate = difference_of_means(scores[later], scores[earlier])
            holds = (
                estimate.low is not None
                and estimate.high is not None
                and (estimate.low > 0 or estimate.high < 0)
            )
            differences.append(
                GroupDifference(earlier=earlier, later=later, difference=estimate, holds=holds)
            )
    return Comparison(
        reviewer_models=tuple(models), groups=tuple(rows), differences=tuple(differences)
    )
