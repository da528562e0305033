"""The review metrics, on numbers worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from papergym.review.data import Prediction, RatedPaper
from papergym.review.evaluation import (
    Bootstrap,
    always_reject_row,
    constant_row,
    human_row,
    system_row,
)
from papergym.review.metrics import (
    auc,
    best_threshold,
    bootstrap,
    human_proxy_errors,
    macro_f1,
    mean_of,
    proxy_errors,
    rate_threshold,
)
from papergym.review.records import ICLR

BOOT = Bootstrap(resamples=200, level=0.95, seed=0)


def test_proxy_errors_average_over_each_left_out_reviewer() -> None:
    # others' means: (5+8)/2 = 6.5, (3+8)/2 = 5.5, (3+5)/2 = 4; errors of 5: -1.5, -0.5, 1
    squared, absolute = proxy_errors(5.0, [3.0, 5.0, 8.0])
    assert squared == pytest.approx((2.25 + 0.25 + 1.0) / 3)
    assert absolute == pytest.approx(1.0)


def test_single_human_uses_the_same_definition() -> None:
    # reviewer i against the others' mean: 3-6.5, 5-5.5, 8-4
    squared, absolute = human_proxy_errors([3.0, 5.0, 8.0])
    assert squared == pytest.approx((12.25 + 0.25 + 16.0) / 3)
    assert absolute == pytest.approx(8.0 / 3)


def test_proxy_errors_need_two_ratings() -> None:
    with pytest.raises(ValueError):
        proxy_errors(5.0, [5.0])


def test_auc_counts_ties_as_half() -> None:
    assert auc([1, 2, 3, 4], [False, True, False, True]) == pytest.approx(0.75)
    assert auc([1, 1], [True, False]) == pytest.approx(0.5)
    assert auc([1, 2], [True, True]) is None


def test_macro_f1_averages_both_classes() -> None:
    # accept: tp 1, fp 1, fn 0 -> 2/3; reject: tp 2, fp 0, fn 1 -> 4/5
    value = macro_f1([True, True, False, False], [True, False, False, False])
    assert value == pytest.approx((2 / 3 + 4 / 5) / 2)


def test_thresholds() -> None:
    assert best_threshold([4, 5, 6, 7], [False, False, True, True]) == pytest.approx(5.5)
    assert rate_threshold([1, 2, 3, 4], [True, False, False, False]) == pytest.approx(3.5)


def test_bootstrap_is_seeded_and_holds_the_estimate() -> None:
    values = [1.0, 2.0, 3.0, 10.0]
    first = bootstrap(mean_of(values), 4, resamples=300, seed=3)
    again = bootstrap(mean_of(values), 4, resamples=300, seed=3)
    assert first == again
    assert first.value == pytest.approx(4.0)
    assert first.low is not None and first.high is not None
    assert first.low <= 4.0 <= first.high and first.low < first.high
    flat = bootstrap(mean_of([2.0, 2.0]), 2, resamples=50)
    assert (flat.low, flat.value, flat.high) == (2.0, 2.0, 2.0)


PAPERS = [
    RatedPaper("a", (8.0, 8.0), True),
    RatedPaper("b", (3.0, 3.0), False),
    RatedPaper("c", (5.0, 6.0), False),
]


def test_a_missing_paper_counts_against_the_system() -> None:
    predictions = {"a": Prediction(8.0, "accept"), "b": Prediction(3.0, None)}
    row = system_row("s", "test", PAPERS, predictions, ICLR, 5.5, BOOT)
    assert (row.papers, row.scored, row.unscored) == (3, 2, 1)
    # c (mean 5.5) gets the farther scale end, 1 (|5.5-1| = 4.5 = |5.5-10|: ties go low), and
    # the wrong decision (accept); a and b are exact
    c_squared = ((1 - 6) ** 2 + (1 - 5) ** 2) / 2
    assert row.mse.value == pytest.approx(c_squared / 3)
    assert row.accuracy.value == pytest.approx(2 / 3)
    assert row.mse.n == 3


def test_unscored_prediction_is_not_a_zero() -> None:
    predictions = {p.paper_id: Prediction(None, None) for p in PAPERS}
    row = system_row("s", "test", PAPERS, predictions, ICLR, 5.5, BOOT)
    assert row.unscored == 3 and row.accuracy.value == 0.0


def test_baseline_rows() -> None:
    constant = constant_row(PAPERS, 5.0, 5.5, BOOT)
    assert constant.auc.value == pytest.approx(0.5) and constant.spearman.value is None
    assert constant.accuracy.value == pytest.approx(2 / 3)  # rejects all
    reject = always_reject_row(PAPERS, BOOT)
    assert reject.accuracy.value == pytest.approx(2 / 3) and reject.mse.value is None
    human = human_row(PAPERS, 5.5, BOOT)
    # a and b: each reviewer equals the other; c: 5 vs 6 and 6 vs 5
    assert human.mse.value == pytest.approx((0 + 0 + 1) / 3)
    # c's reviewers: 5 rejects (right), 6 accepts (wrong)
    assert human.accuracy.value == pytest.approx((1 + 1 + 0.5) / 3)
    assert human.auc.value is not None and 0.5 < human.auc.value <= 1.0
    assert math.isfinite(float(np.float64(human.mae.value or 0)))
