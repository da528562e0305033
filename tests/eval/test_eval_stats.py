"""The evaluation statistics against hand-computed values and their known properties."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from papergym.eval.records import EvalScore, EvalSystem
from papergym.eval.stats import (
    bootstrap_mean,
    correlation,
    paired_difference,
    pearson,
    ranks,
    sign_test,
    spearman,
)
from papergym.eval.summary import Bootstrap, summarise


def test_bootstrap_mean_value_denominator_and_interval() -> None:
    estimate = bootstrap_mean([0.0, 1.0, 0.0, 1.0, 1.0], resamples=4000, seed=1)
    assert estimate.value == pytest.approx(0.6)
    assert estimate.n == 5
    assert estimate.low is not None and estimate.high is not None
    # a mean of five 0/1 values can only take the values k/5
    assert 0.0 <= estimate.low < 0.6 < estimate.high <= 1.0
    assert round(estimate.low * 5) == pytest.approx(estimate.low * 5)


def test_bootstrap_is_seeded_and_degenerate_cases() -> None:
    values = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2]
    assert bootstrap_mean(values, seed=3) == bootstrap_mean(values, seed=3)
    assert bootstrap_mean(values, seed=3) != bootstrap_mean(values, seed=4)
    empty = bootstrap_mean([])
    assert (empty.value, empty.low, empty.high, empty.n) == (None, None, None, 0)
    one = bootstrap_mean([0.4])
    assert (one.value, one.low, one.high, one.n) == (0.4, 0.4, 0.4, 1)
    constant = bootstrap_mean([0.25] * 7)
    assert (constant.low, constant.high) == (0.25, 0.25)


def test_wider_level_gives_a_wider_interval() -> None:
    values = [float(i % 7) / 7 for i in range(40)]
    narrow = bootstrap_mean(values, level=0.5, seed=0)
    wide = bootstrap_mean(values, level=0.99, seed=0)
    assert wide.low is not None and narrow.low is not None
    assert wide.high is not None and narrow.high is not None
    assert wide.low <= narrow.low and wide.high >= narrow.high


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30), st.integers(0, 10))
def test_interval_always_holds_the_mean(values: list[float], seed: int) -> None:
    estimate = bootstrap_mean(values, resamples=200, seed=seed)
    assert estimate.low is not None and estimate.high is not None and estimate.value is not None
    assert estimate.low <= estimate.value <= estimate.high


def test_paired_difference_of_identical_systems_is_exactly_zero() -> None:
    scores = [0.2, 0.9, 0.4, 0.6, 0.1]
    same = paired_difference(scores, scores)
    assert (same.value, same.low, same.high, same.n) == (0.0, 0.0, 0.0, 5)


def test_paired_difference_by_hand_and_pairing_matters() -> None:
    a = [0.5, 0.6, 0.7, 0.8]
    b = [0.4, 0.5, 0.6, 0.7]  # a beats b by exactly 0.1 on every question
    difference = paired_difference(a, b)
    assert difference.value == pytest.approx(0.1)
    # pairs are resampled together: a constant difference has no spread at all, although
    # each system's own scores vary a lot
    assert difference.low == pytest.approx(0.1) and difference.high == pytest.approx(0.1)
    assert bootstrap_mean(a).high != bootstrap_mean(a).low
    with pytest.raises(ValueError, match="differ in length"):
        paired_difference([1.0], [1.0, 2.0])


def test_ranks_average_ties() -> None:
    import numpy as np

    from papergym.eval.stats import _row_ranks

    assert ranks([10.0, 20.0, 20.0, 5.0]) == [2.0, 3.5, 3.5, 1.0]
    rows = np.array([[10.0, 20.0, 20.0, 5.0], [1.0, 1.0, 1.0, 2.0]])
    assert _row_ranks(rows).tolist() == [[2.0, 3.5, 3.5, 1.0], [2.0, 2.0, 2.0, 4.0]]


def test_pearson_and_spearman_by_hand() -> None:
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    y = [1.0, 3.0, 2.0, 5.0, 4.0]
    # Σdxdy = 8, Σdx² = Σdy² = 10
    assert pearson(x, y) == pytest.approx(0.8)
    # the same ranks: ρ = 1 - 6·Σd²/(n(n²-1)) = 1 - 6·4/120
    assert spearman(x, y) == pytest.approx(0.8)
    # a monotone but non-linear relation: ρ is 1, r is not
    cubes = [v**3 for v in x]
    assert spearman(x, cubes) == pytest.approx(1.0)
    r = pearson(x, cubes)
    assert r is not None and r < 1.0
    assert pearson(x, [2.0] * 5) is None  # constant: no correlation
    assert pearson([1.0], [2.0]) is None


def test_correlation_interval_and_degenerate_inputs() -> None:
    x = [float(i) for i in range(30)]
    y = [v + (3.0 if i % 2 else -3.0) for i, v in enumerate(x)]
    for method in ("pearson", "spearman"):
        result = correlation(x, y, method, seed=0)  # type: ignore[arg-type]
        assert result.r is not None and result.low is not None and result.high is not None
        assert result.low <= result.r <= result.high <= 1.0
        assert result.n == 30 and result.method == method
    flat = correlation(x, [1.0] * 30)
    assert (flat.r, flat.low, flat.high) == (None, None, None)
    two = correlation([1.0, 2.0], [2.0, 1.0])
    assert two.r == pytest.approx(-1.0) and two.low is None
    assert not math.isnan(correlation(x, y).r or 0.0)


def test_sign_test_is_the_two_sided_exact_binomial_tail() -> None:
    assert sign_test(8, 0) == pytest.approx(2 / 256)
    assert sign_test(0, 8) == pytest.approx(2 / 256)
    assert sign_test(5, 0) == pytest.approx(2 / 32)  # 5 seeds: the smallest p is 0.0625
    assert sign_test(6, 2) == pytest.approx(2 * (1 + 8 + 28) / 256)
    assert sign_test(4, 4) == 1.0 and sign_test(0, 0) == 1.0


def _scores(seed: int) -> list[EvalScore]:
    """Two systems × 12 questions × 2 samples with spread rewards and lengths, one unscored."""
    draw = random.Random(seed)
    scores = []
    for system in ("a", "b"):
        for question in range(12):
            for sample in range(2):
                value = None if (system, question, sample) == ("b", 3, 1) else draw.random()
                scores.append(
                    EvalScore(
                        system=system,
                        instance_id=f"q{question:02d}",
                        sample=sample,
                        value=value,
                        specific=value,
                        words=draw.randint(5, 400),
                        unscored_reason=None if value is not None else "judge failed",
                        alpha=1.0,
                    )
                )
    return scores


def test_the_summary_does_not_depend_on_the_order_answers_finished() -> None:
    """Issue 20, item 18: after a kill -9 and a resume, scores.jsonl holds the same records in
    another order, and the intervals moved (words' low bound 17.917 → 17.833)."""
    systems = [EvalSystem(name=n, spec=n, kind="endpoint", model="m") for n in ("a", "b")]
    boot = Bootstrap(resamples=500, seed=0)
    scores = _scores(seed=7)
    expected = summarise(systems, scores, boot)
    for shuffle in range(5):
        reordered = list(scores)
        random.Random(shuffle).shuffle(reordered)
        assert summarise(systems, reordered, boot) == expected
