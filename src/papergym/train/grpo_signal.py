"""GRPO's learning signal: how many groups of answers gave the policy gradient anything to use.

GRPO's advantage is an answer's reward minus its group's mean (over the group's spread). A group
whose answers all scored the same, or that has fewer than two scored answers (TRL leaves an
unscored answer out and gives it a zero advantage), therefore contributes nothing: a *tied*
group. A run where most groups tie learns little, whatever its loss says; with equal-length
answers the policy-gradient loss even reads 0 while its gradient does not.

TRL logs a similar figure, ``frac_reward_zero_std``, but it tests the group's float32 standard
deviation against 0 with ``torch.isclose`` (absolute tolerance 1e-8): eight answers that all
scored 0.2 have a float32 deviation of about 1.6e-8, so TRL counts the group as spread while
the advantages it computes are about 1e-4 and the gradient is nil (measured on the tiny run).
:func:`tied_share` compares the rewards themselves, within :data:`TIE_TOLERANCE`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

TIED_KEY = "tied_groups"
"""The per-step share of tied groups in ``metrics.jsonl`` (and the progress lines)."""

TIED_WARNING = 0.5
"""Warn when at least this share of the groups tied. Some ties are normal (a question every
answer solves, or none does); half or more means most of the sampling and judging bought no
gradient, which a user should hear while the run goes on."""

TIE_TOLERANCE = 1e-6
"""Rewards closer than this are equal: rubric rewards lie in [0, 1], and their smallest real
step (one criterion of a rubric) is far larger."""


def tied_share(rewards: Sequence[float | None], group_size: int) -> float:
    """The share of the groups of ``rewards`` (consecutive runs of ``group_size``, as TRL's
    sampler lays them out) whose scored answers all agree within :data:`TIE_TOLERANCE`, or that
    have fewer than two scored answers. None (unscored) and NaN rewards are left out.

    >>> tied_share([0.2, 0.2, 0.0, 0.5], 2)
    0.5
    >>> tied_share([None, 0.3, 0.1, 0.1], 2)
    1.0
    """
    if group_size < 1 or len(rewards) % group_size:
        raise ValueError(f"{len(rewards)} rewards do not split into groups of {group_size}")
    groups = [rewards[start : start + group_size] for start in range(0, len(rewards), group_size)]
    if not groups:
        return 0.0
    return sum(1 for group in groups if _tied(group)) / len(groups)


def _tied(group: Sequence[float | None]) -> bool:
    scored = [r for r in group if r is not None and math.isfinite(r)]
    return len(scored) < 2 or max(scored) - min(scored) <= TIE_TOLERANCE


def signal_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A GRPO stage's learning signal over its metrics records.

    ``tied_share``: the mean over steps of the per-step share of tied groups; ``tied_steps``:
    the steps where every group tied; ``constant_reward``: the one value every scored answer
    of the stage got when each step tied throughout and the steps agree (None otherwise).
    """
    shares = [float(r[TIED_KEY]) for r in records if _number(r.get(TIED_KEY))]
    means = [float(r["reward"]) for r in records if _number(r.get("reward"))]
    # TRL's batch deviation (float32) tells a step whose tied groups tied at different values
    spreads = [r.get("reward_std") for r in records if _number(r.get("reward"))]
    steady = all(isinstance(s, int | float) and s <= TIE_TOLERANCE for s in spreads)
    constant = (
        bool(shares)
        and all(share >= 1.0 for share in shares)
        and bool(means)
        and max(means) - min(means) <= TIE_TOLERANCE
        and steady
    )
    return {
        "tied_share": sum(shares) / len(shares) if shares else None,
        "tied_steps": sum(1 for share in shares if share >= 1.0),
        "constant_reward": round(means[0], 6) if constant else None,
    }


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def learning_signal_warnings(result: dict[str, Any]) -> list[str]:
    """One warning per GRPO stage whose groups mostly tied (no spread, zero advantage), with
    the likely reason when every reward was the same number."""
    warnings = []
    for stage in result["stages"]:
        share = stage.get("tied_share")
        if not isinstance(share, int | float) or share < TIED_WARNING:
            continue
        steps = stage.get("steps")
        tied = stage.get("tied_steps")
        why = ""
        constant = stage.get("constant_reward")
        if isinstance(constant, int | float):
            why = (
                f"; every answer scored {constant:.3g}"
                + (" (no rubric criterion met)" if constant == 0 else "")
                + ": the policy's answers must differ in what the reward sees"
            )
        warnings.append(
            f"{stage['stage']}: warning: {share:.0%} of the groups tied, every answer scoring the "
            f"same (in {tied} of {steps} steps all of them): their advantages are 0, so "
            f"{stage['stage']} learned {'nothing' if share >= 1 else 'little'}{why}"
        )
    return warnings
