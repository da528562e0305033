"""Agreement, base rates and Cohen's kappa, each checked against a hand computation."""

from __future__ import annotations

import pytest

from papergym.calibrate.agreement import (
    agreement,
    base_rate,
    cohen_kappa,
    kappa_estimate,
    self_agreement,
)

T, F = True, False


def test_kappa_by_hand() -> None:
    # judge: T T T F F F F F F F; labels: T T F T F F F F F F
    # p_o = 8/10; p_judge = 0.3, p_labels = 0.3; p_e = 0.09 + 0.49 = 0.58
    # kappa = (0.8 - 0.58) / 0.42 = 0.5238...
    judge = [T, T, T, F, F, F, F, F, F, F]
    labels = [T, T, F, T, F, F, F, F, F, F]
    assert agreement(judge, labels) == pytest.approx(0.8)
    assert base_rate(judge) == pytest.approx(0.3)
    assert cohen_kappa(judge, labels) == pytest.approx(0.22 / 0.42)


def test_kappa_of_a_judge_that_always_says_met_is_zero_despite_high_agreement() -> None:
    # labels 9 met of 10; judge says met to all: p_o = 0.9, p_e = 1·0.9 + 0·0.1 = 0.9, kappa 0
    labels = [T] * 9 + [F]
    judge = [T] * 10
    assert agreement(judge, labels) == pytest.approx(0.9)
    assert cohen_kappa(judge, labels) == pytest.approx(0.0)


def test_kappa_perfect_and_opposite() -> None:
    labels = [T, F, T, F]
    assert cohen_kappa(labels, labels) == pytest.approx(1.0)
    # p_o = 0, p_e = 0.5·0.5 + 0.5·0.5 = 0.5: kappa = -1
    assert cohen_kappa([not x for x in labels], labels) == pytest.approx(-1.0)


def test_kappa_undefined_when_both_constant_and_equal() -> None:
    assert cohen_kappa([T, T], [T, T]) is None
    assert cohen_kappa([], []) is None
    assert agreement([], []) is None


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError):
        cohen_kappa([T], [T, F])


def test_kappa_interval_brackets_the_value_and_is_seeded() -> None:
    judge = [T, T, T, F, F, F, F, F, F, F] * 3
    labels = [T, T, F, T, F, F, F, F, F, F] * 3
    first = kappa_estimate(judge, labels, resamples=200, level=0.9, seed=1)
    again = kappa_estimate(judge, labels, resamples=200, level=0.9, seed=1)
    assert first == again
    assert first.value == pytest.approx(0.22 / 0.42)
    assert first.low is not None and first.high is not None
    assert first.low <= first.value <= first.high
    assert first.high - first.low > 0.05
    assert first.n == 30


def test_self_agreement_by_hand() -> None:
    # item 0: T T F -> pairs (T,T)=1, (T,F)=0, (T,F)=0 -> 1/3; item 1: all F -> 1;
    # item 2: T, None, T -> one pair, agrees -> 1; mean = (1/3 + 1 + 1) / 3 = 7/9
    runs = [[T, F, T], [T, F, None], [F, F, T]]
    assert self_agreement(runs) == pytest.approx(7 / 9)
    assert self_agreement([[T, F]]) is None
    assert self_agreement([[None], [T]]) is None
