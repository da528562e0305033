"""SimPO + NLL, the loss of CycleResearcher's iterative preference training, as pure functions.

Training runs on TRL's CPO trainer (``loss_type="simpo"``, ``cpo_alpha`` = the NLL weight);
this module states what that loss is, so a test can hold TRL to it. For a batch of pairs
(chosen ``w``, rejected ``l``) with completion lengths ``|y|``::

    r(y)  = (1/|y|) · Σ_t log π(y_t | x, y_<t)             length-normalised log-likelihood
    L_pref = mean over pairs of  −log σ( β · (r(w) − r(l) − γ/β) )
    L_nll  = − Σ_{pairs, t} log π(w_t | …) / Σ_pairs |w|   token mean over the chosen texts
    L      = L_pref + α · L_nll

``γ/β`` is SimPO's target margin written as TRL writes it (``β·(Δ − γ/β) = β·Δ − γ``). The
NLL term is a *token* mean over the whole batch, not a mean of per-pair means: that is what
TRL's ``nn.CrossEntropyLoss`` over the concatenated chosen labels computes, so a long chosen
paper weighs more than a short one. α = 0 is SimPO alone.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

IGNORE = -100
"""Label of a token outside the completion (prompt, padding), as in TRL and transformers."""


class SimPOLoss(NamedTuple):
    """The loss and its parts, each a scalar tensor (``loss`` keeps the graph)."""

    loss: torch.Tensor
    preference: torch.Tensor
    nll: torch.Tensor
    margin: torch.Tensor
    """Mean of r(w) − r(l) over the pairs (before γ/β), for logging."""


def token_logps(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-probabilities of ``labels`` under causal-LM ``logits``, and their mask.

    ``logits``: ``[batch, seq, vocab]``; ``labels``: ``[batch, seq]`` with :data:`IGNORE` on
    prompt and padding. Position t's logits predict token t+1, so both come back one shorter.
    """
    shifted = labels[:, 1:]
    mask = shifted != IGNORE
    safe = shifted.masked_fill(~mask, 0)
    logps = torch.log_softmax(logits[:, :-1, :].float(), dim=-1)
    return logps.gather(-1, safe.unsqueeze(-1)).squeeze(-1), mask


def simpo_nll_loss(
    chosen_logps: torch.Tensor,
    chosen_mask: torch.Tensor,
    rejected_logps: torch.Tensor,
    rejected_mask: torch.Tensor,
    *,
    beta: float,
    gamma: float,
    alpha: float,
) -> SimPOLoss:
    """SimPO with a margin plus α·NLL on the chosen texts (see the module docstring).

    ``*_logps``: ``[pairs, seq]`` per-token log-probabilities; ``*_mask``: ``[pairs, seq]``,
    true on completion tokens. Every pair must have at least one completion token on each side.
    """
    if beta <= 0:
        raise ValueError(f"beta must be positive, not {beta}")
    chosen_tokens = chosen_mask.sum(-1)
    rejected_tokens = rejected_mask.sum(-1)
    if bool((chosen_tokens == 0).any()) or bool((rejected_tokens == 0).any()):
        raise ValueError("every pair needs at least one completion token on each side")
    chosen_sum = (chosen_logps * chosen_mask).sum(-1)
    chosen_mean = chosen_sum / chosen_tokens
    rejected_mean = (rejected_logps * rejected_mask).sum(-1) / rejected_tokens
    difference = chosen_mean - rejected_mean
    preference = -F.logsigmoid(beta * (difference - gamma / beta)).mean()
    nll = -chosen_sum.sum() / chosen_tokens.sum()
    return SimPOLoss(
        loss=preference + alpha * nll,
        preference=preference,
        nll=nll,
        margin=difference.detach().mean(),
    )
