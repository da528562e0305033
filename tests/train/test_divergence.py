"""The divergence rule of the training watch, by hand: when it fires, what it names, the peak."""

from __future__ import annotations

import pytest

from papergym.eval.records import EvalScore, EvalVerdict
from papergym.train.divergence import (
    EvalPoint,
    criterion_gaps,
    criterion_key,
    divergence,
    divergence_warnings,
    is_watch_peak,
    pass_rates,
    watch_peak,
)


def points(train: list[float | None], watch: list[float | None]) -> list[EvalPoint]:
    return [
        EvalPoint(step=10 * (i + 1), train=t, watch=w)
        for i, (t, w) in enumerate(zip(train, watch, strict=True))
    ]


def test_fires_when_the_reward_rises_and_the_watch_falls_for_patience_evaluations() -> None:
    found = divergence(points([0.2, 0.3, 0.5, 0.6], [0.7, 0.6, 0.5, 0.2]), patience=3)
    assert found is not None
    assert (found.first_step, found.last_step, found.evaluations) == (10, 40, 3)
    assert found.train_change == pytest.approx(0.4)
    assert found.watch_change == pytest.approx(-0.5)


def test_needs_patience_changes_in_a_row() -> None:
    # two changes only: not yet
    assert divergence(points([0.2, 0.3, 0.5], [0.7, 0.6, 0.5]), patience=3) is None
    # the window is the last patience changes: an old streak that stopped does not fire
    assert divergence(points([0.1, 0.2, 0.3, 0.3], [0.9, 0.8, 0.7, 0.6]), patience=2) is None
    # a watch that holds still is not falling
    assert divergence(points([0.1, 0.2, 0.3], [0.9, 0.8, 0.8]), patience=2) is None
    # both rising is learning, not hacking
    assert divergence(points([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]), patience=2) is None


def test_only_changes_beyond_min_change_count() -> None:
    series = points([0.20, 0.25, 0.30], [0.70, 0.60, 0.50])
    assert divergence(series, patience=2, min_change=0.04) is not None
    assert divergence(series, patience=2, min_change=0.05) is None  # +0.05 is not > 0.05


def test_an_unscored_mean_breaks_the_streak_never_reads_as_zero() -> None:
    assert divergence(points([0.1, None, 0.3], [0.9, 0.8, 0.7]), patience=2) is None
    assert divergence(points([0.1, 0.2, 0.3], [0.9, None, 0.7]), patience=2) is None


def test_gaps_rank_criteria_by_train_change_minus_watch_change() -> None:
    first = EvalPoint(
        step=1,
        train=0.2,
        watch=0.8,
        train_rates={"q/a": 0.0, "q/b": 0.5, "q/c": 1.0, "q/train-only": 0.0},
        watch_rates={"q/a": 1.0, "q/b": 0.5, "q/c": 0.0},
    )
    last = EvalPoint(
        step=3,
        train=0.9,
        watch=0.1,
        train_rates={"q/a": 1.0, "q/b": 1.0, "q/c": 1.0, "q/train-only": 1.0},
        watch_rates={"q/a": 0.0, "q/b": 0.5, "q/c": 1.0},
    )
    gaps = criterion_gaps(first, last)
    # a: +1 − (−1) = 2; b: +0.5 − 0 = 0.5; c: 0 − 1 < 0 (left out); train-only: no watch rate
    assert [(g.criterion, g.gap) for g in gaps] == [("q/a", 2.0), ("q/b", 0.5)]
    assert gaps[0].train_change == 1.0 and gaps[0].watch_change == -1.0
    window = [first, EvalPoint(step=2, train=0.5, watch=0.5), last]
    found = divergence(window, patience=2, shown=1)
    assert found is not None and [g.criterion for g in found.criteria] == ["q/a"]


def verdict(criterion: str, passed: bool | None, kind: str = "specific") -> EvalVerdict:
    return EvalVerdict.model_validate({"criterion_id": criterion, "kind": kind, "passed": passed})


def score(instance: str, *verdicts: EvalVerdict) -> EvalScore:
    return EvalScore(
        system="s", instance_id=instance, sample=0, value=0.5, words=3, verdicts=verdicts
    )


def test_pass_rates_per_question_criterion_and_shared_general_criteria() -> None:
    rates = pass_rates(
        [
            score("q1", verdict("s1", True), verdict("s2", None), verdict("g1", True, "general")),
            score("q2", verdict("s1", False), verdict("g1", False, "general")),
        ]
    )
    assert rates == {"general/g1": 0.5, "q1/s1": 1.0, "q2/s1": 0.0}  # q1/s2 unknown: absent
    assert criterion_key("q1", "s1", "specific") == "q1/s1"


def test_the_watch_peak_is_the_earliest_highest_scored_evaluation() -> None:
    series = points([0.1, 0.2, 0.3, 0.4], [0.5, 0.7, None, 0.7])
    peak = watch_peak(series)
    assert peak is not None and peak.step == 20
    assert is_watch_peak([], series[0])
    assert not is_watch_peak(series[:2], series[3])  # a tie is not a new peak
    assert not is_watch_peak([], series[2])  # an unscored watch never is
    assert watch_peak(points([0.1], [None])) is None


def test_the_run_warns_once_per_stage_with_alarms_naming_criteria_and_best() -> None:
    alarm = {
        "first_step": 2,
        "last_step": 6,
        "train_change": 0.4,
        "watch_change": -0.3,
        "criteria": [{"criterion": "q/c1"}, {"criterion": "q/c2"}],
    }
    result = {
        "stages": [
            {"stage": "opsd"},  # no watch
            {"stage": "grpo", "watch": {"alarms": [alarm], "best": {"step": 2, "path": "R/best"}}},
            {"stage": "sft", "watch": {"alarms": [], "best": None}},
        ]
    }
    (line,) = divergence_warnings(result)
    assert line.startswith("warning: grpo:") and "steps 2-6" in line
    assert "q/c1, q/c2" in line and "step 2): R/best" in line
