"""GRPO's learning signal: the share of tied groups (pure rules), and why TRL's own figure is
not the one reported."""

from __future__ import annotations

import pytest
import torch
from trl.trainer.utils import nanstd

from papergym.train.grpo_signal import TIED_KEY, signal_summary, tied_share


def test_a_group_is_tied_when_its_scored_answers_agree_or_fewer_than_two_are_scored() -> None:
    rewards = [0.2, 0.2, 0.2, 0.2, 0.0, 0.1, 0.0, 0.0, None, 0.5, None, None]  # groups of 4
    assert tied_share(rewards, 4) == pytest.approx(2 / 3)
    assert tied_share([float("nan"), 0.3, 0.3, None], 2) == 1.0  # NaN is unscored too
    assert tied_share([0.3, 0.3 + 1e-9, 0.1, 0.1 + 1e-3], 2) == 0.5  # float noise vs a real step
    assert tied_share([], 8) == 0.0


def test_rewards_that_do_not_split_into_groups_are_refused() -> None:
    with pytest.raises(ValueError, match="5 rewards do not split into groups of 2"):
        tied_share([0.0] * 5, 2)


def test_trl_counts_eight_equal_rewards_of_0_2_as_spread_and_we_do_not() -> None:
    # TRL's frac_reward_zero_std: isclose(float32 std, 0) with an absolute tolerance of 1e-8
    rewards = [0.2] * 8
    std = nanstd(torch.tensor(rewards, dtype=torch.float32).view(-1, 8), dim=1)
    assert not torch.isclose(std, torch.zeros_like(std)).item()  # TRL: not tied
    assert tied_share(rewards, 8) == 1.0


def test_the_summary_has_the_mean_share_the_fully_tied_steps_and_a_constant_reward() -> None:
    tied = [{"step": n, TIED_KEY: 1.0, "reward": 0.2, "reward_std": 1.6e-8} for n in (1, 2)]
    assert signal_summary(tied) == {
        "tied_share": 1.0,
        "tied_steps": 2,
        "constant_reward": 0.2,
    }
    mixed = [*tied, {"step": 3, TIED_KEY: 0.25, "reward": 0.1, "reward_std": 0.1}]
    assert signal_summary(mixed) == {
        "tied_share": pytest.approx(0.75),
        "tied_steps": 2,
        "constant_reward": None,
    }
    # every group tied, but two groups of one step at different values: not one constant
    split = [{"step": 1, TIED_KEY: 1.0, "reward": 0.05, "reward_std": 0.05}]
    assert signal_summary(split)["constant_reward"] is None
    assert signal_summary([]) == {"tied_share": None, "tied_steps": 0, "constant_reward": None}
