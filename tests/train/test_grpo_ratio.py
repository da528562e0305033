"""TRL's GRPO loss with a token- or a sequence-level importance ratio, on a hand example.

``GRPOTrainer._compute_loss`` is called on a stand-in trainer that holds only what that method
reads, with the policy's per-token log-probabilities given directly: the loss can then be
computed by hand. Pinned to the TRL the venv has (1.16); a TRL that renames these attributes
fails here first, which is the point.
"""

from __future__ import annotations

import math
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from trl.trainer.grpo_trainer import GRPOTrainer

# two answers: A has tokens with log-ratios 0.2 and -0.4, B one token with 0.3 (then padding,
# whose log-ratio 5 must not count); both have advantage +1, the ratio is clipped to [0.8, 1.2]
LOG_RATIOS = torch.tensor([[0.2, -0.4], [0.3, 5.0]], dtype=torch.float64)
MASK = torch.tensor([[1, 1], [1, 0]])
EPSILON = 0.2


def clipped(ratio: float) -> float:
    """min(r·A, clip(r)·A) with A = +1: one ratio's clipped objective (the loss negates it)."""
    return min(ratio, min(max(ratio, 1 - EPSILON), 1 + EPSILON))


class _Accelerator:
    def reduce(self, tensor: torch.Tensor, reduction: str = "sum") -> torch.Tensor:
        return tensor

    def gather(self, tensor: torch.Tensor) -> torch.Tensor:
        return tensor


def trl_loss(level: str) -> float:
    """TRL's loss (loss_type grpo: each answer's token mean, then the mean over answers)."""
    policy = LOG_RATIOS.clone().requires_grad_(True)
    stand_in = SimpleNamespace(
        _get_per_token_logps_and_entropies=lambda *a, **k: (policy, torch.zeros_like(policy), None),
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        importance_sampling_level=level,
        beta=0.0,
        loss_type="grpo",
        epsilon_low=EPSILON,
        epsilon_high=EPSILON,
        args=SimpleNamespace(delta=None, use_bias_correction_kl=False),
        use_vllm=False,
        model=SimpleNamespace(training=False),  # eval mode: no accumulation scaling
        _entropy_bonus_enabled=False,
        aux_loss_enabled=False,
        _metrics=defaultdict(lambda: defaultdict(list)),
        accelerator=_Accelerator(),
    )
    inputs: dict[str, Any] = {
        "prompt_ids": torch.ones(2, 1, dtype=torch.long),
        "prompt_mask": torch.ones(2, 1, dtype=torch.long),
        "completion_ids": torch.ones(2, 2, dtype=torch.long),
        "completion_mask": MASK,
        "advantages": torch.ones(2, dtype=torch.float64),
        "old_per_token_logps": torch.zeros(2, 2, dtype=torch.float64),
    }
    loss = GRPOTrainer._compute_loss(stand_in, None, inputs)  # type: ignore[arg-type]
    return float(loss.detach())


def test_token_level_ratio_is_clipped_per_token_by_hand() -> None:
    answer_a = (clipped(math.exp(0.2)) + clipped(math.exp(-0.4))) / 2  # 1.2 and 0.670
    answer_b = clipped(math.exp(0.3))  # 1.35 → 1.2
    assert trl_loss("token") == pytest.approx(-(answer_a + answer_b) / 2, rel=1e-9)


def test_sequence_level_ratio_is_exp_of_the_mean_log_ratio_per_answer_by_hand() -> None:
    answer_a = clipped(math.exp((0.2 - 0.4) / 2))  # exp(-0.1) = 0.905: inside the clip range
    answer_b = clipped(math.exp(0.3))  # its one token; the padding's 5 is not averaged in
    expected = -(answer_a + answer_b) / 2
    assert trl_loss("sequence") == pytest.approx(expected, rel=1e-9)
    assert trl_loss("sequence") != pytest.approx(trl_loss("token"), rel=1e-3)
