"""GRPO's per-group verdict records (rollouts.jsonl): encoding, unscored answers, resume."""

from __future__ import annotations

from pathlib import Path

from papergym.jsonl import read_jsonl
from papergym.records import Score, Verdict
from papergym.train.rollouts import RolloutGroup, RolloutLog, char_verdict, rollout_group


def _score(passed: list[bool | None], value: float | None = 0.5) -> Score:
    verdicts = tuple(
        Verdict(criterion_id=f"c{n}", passed=p, weight=-1.0 if n == 2 else 1.0)
        for n, p in enumerate(passed)
    )
    general = (Verdict(criterion_id="g1", passed=True, kind="general"),)
    return Score(instance_id="i1", value=value, verdicts=verdicts + general)


def test_a_group_is_one_line_of_characters() -> None:
    unscored = Score(instance_id="i1", value=None, unscored_reason="judge failed")
    group = rollout_group(3, [_score([True, False, None]), unscored])
    assert group.criteria == ("c0", "c1", "c2")  # specific criteria only
    assert group.weights == (1.0, 1.0, -1.0)
    assert group.verdicts == ("10-", "---")  # an answer without verdicts is unscored, not 0
    assert group.rewards == (0.5, None)
    assert [char_verdict(c) for c in "10-"] == [True, False, None]


def test_append_splits_groups_and_trim_drops_redone_steps(tmp_path: Path) -> None:
    log = RolloutLog(tmp_path / "rollouts.jsonl")
    log.append(0, [_score([True, True, True])] * 4, group_size=2)
    log.append(1, [_score([False, True, True])] * 2, group_size=2)
    assert [g.step for g in read_jsonl(log.path, RolloutGroup)] == [0, 0, 1]
    log.trim(1)  # resumed from checkpoint-1: step 1 is sampled again
    assert [g.step for g in read_jsonl(log.path, RolloutGroup)] == [0, 0]
    log.trim(0)
    assert read_jsonl(log.path, RolloutGroup) == []
