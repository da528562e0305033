"""Losses for on-policy self-distillation, as pure functions of logits.

``generalized_jsd`` is the per-token generalised Jensen–Shannon divergence between the
student's and the teacher's next-token distributions, averaged over the valid (unmasked)
completion tokens in one of two ways (``reduction``):

* ``token``: one mean over every valid token of the batch, so a long answer weighs more than a
  short one, in proportion to its length;
* ``sequence``: each answer's mean over its positions, then the mean over answers, so every
  answer weighs the same (SPEC §4: "averaged over positions and answers"). An answer with no
  valid token is left out of that mean.

With the mixture ``M = β·T + (1−β)·S``::

    JSD_β(T, S) = β·KL(T‖M) + (1−β)·KL(S‖M)

At β = 0.5 it is the symmetric Jensen–Shannon divergence, bounded by ln 2. The endpoints are
defined as the two KL directions, as TRL's GKD does: β = 0 gives KL(T‖S) (forward, mode
covering) and β = 1 gives KL(S‖T) (reverse, mode seeking).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
import torch.nn.functional as F

Reduction = Literal["token", "sequence"]
"""token: the mean over all valid tokens of the batch; sequence: per answer, then over answers."""


def generalized_jsd(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    mask: torch.Tensor,
    beta: float = 0.5,
    temperature: float = 1.0,
    top_k: int | None = None,
    reduction: Reduction = "token",
) -> torch.Tensor:
    """Mean generalised JSD over valid tokens (``reduction``: see the module docstring).

    ``student_logits`` and ``teacher_logits``: ``[batch, seq, vocab]`` at the same completion
    positions; ``mask``: ``[batch, seq]``, 1 for completion tokens, 0 for prompt and padding.
    The teacher's logits are used as given (detach them for a stop-gradient teacher).
    ``top_k``: compare the two distributions on the teacher's ``k`` most likely tokens only,
    each renormalised over that support (saves memory on large vocabularies); None = full.

    >>> logits = torch.tensor([[[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]]])
    >>> round(float(generalized_jsd(logits, logits, torch.ones(1, 2))), 6)
    0.0
    >>> round(float(generalized_jsd(logits, -logits, torch.ones(1, 2))), 4)
    0.4125
    """
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], not {beta}")
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, not {temperature}")
    if student_logits.shape != teacher_logits.shape:
        raise ValueError(
            f"logit shapes differ: {tuple(student_logits.shape)} vs {tuple(teacher_logits.shape)}"
        )
    student_scaled = student_logits.float() / temperature
    teacher_scaled = teacher_logits.float() / temperature
    if top_k is not None and top_k < teacher_scaled.shape[-1]:
        support = teacher_scaled.topk(top_k, dim=-1).indices
        student_scaled = student_scaled.gather(-1, support)
        teacher_scaled = teacher_scaled.gather(-1, support)
    student = F.log_softmax(student_scaled, dim=-1)
    teacher = F.log_softmax(teacher_scaled, dim=-1)
    per_token = _divergence(student, teacher, beta)
    return reduce_tokens(per_token, mask, reduction)


def reduce_tokens(
    per_token: torch.Tensor, mask: torch.Tensor, reduction: Reduction
) -> torch.Tensor:
    """``per_token`` (``[batch, seq]``) averaged over the tokens ``mask`` keeps: one mean over
    all of them (``token``), or each row's mean, then the mean over rows that have any
    (``sequence``). Nothing kept: zero, still attached to the graph."""
    weights = mask.to(per_token.dtype)
    if reduction == "token":
        valid = weights.sum()
        if valid == 0:
            return per_token.sum() * 0.0
        return (per_token * weights).sum() / valid
    if reduction != "sequence":
        raise ValueError(f"reduction must be token or sequence, not {reduction!r}")
    lengths = weights.sum(dim=-1)
    answered = lengths > 0
    if not bool(answered.any()):
        return per_token.sum() * 0.0
    per_answer = (per_token * weights).sum(dim=-1)[answered] / lengths[answered]
    return per_answer.mean()


def _kl(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """KL(P‖Q) per position, from log-probabilities, summed over the vocabulary."""
    return (log_p.exp() * (log_p - log_q)).sum(dim=-1)


def _divergence(student: torch.Tensor, teacher: torch.Tensor, beta: float) -> torch.Tensor:
    if beta == 0.0:
        return _kl(teacher, student)
    if beta == 1.0:
        return _kl(student, teacher)
    mixture = torch.logsumexp(
        torch.stack([teacher + math.log(beta), student + math.log(1.0 - beta)]), dim=0
    )
    return beta * _kl(teacher, mixture) + (1.0 - beta) * _kl(student, mixture)
