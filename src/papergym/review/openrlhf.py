"""OpenRLHF adapter of the review reward: ``reward_func(queries, prompts, labels)``.

The response part of each query is reviewed as a paper; labels are not read. Unscored texts get
``reward.unscored`` (default 0.0) as their reward and are flagged in ``extra_logs``
(``review_unscored``), as are texts scored from fewer reviews than asked (``review_partial``). The reviewer
comes from the config file ``$PAPERGYM_CONFIG`` names (see :mod:`papergym.review.runtime`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papergym.review.reward import ReviewScore
from papergym.review.runtime import shared_review_reward
from papergym.reward import runtime
from papergym.reward.openrlhf import openrlhf_payload, response_of


async def score_batch(queries: Sequence[str], prompts: Sequence[str]) -> list[ReviewScore]:
    """Review scores for OpenRLHF's parallel lists of queries (prompt + response) and prompts."""
    texts = [response_of(q, p) for q, p in zip(queries, prompts, strict=True)]
    return await shared_review_reward().ascore_many(texts)


def review_payload(scores: Sequence[ReviewScore]) -> dict[str, Any]:
    """The review reward's OpenRLHF dict, with the mean rating logged (-1 where unscored) and
    the unscored and partial texts flagged."""
    return openrlhf_payload(
        [s.value for s in scores],
        {
            "review_rating": [s.rating if s.rating is not None else -1.0 for s in scores],
            "review_unscored": [0.0 if s.scored else 1.0 for s in scores],
            "review_partial": [1.0 if s.partial else 0.0 for s in scores],
        },
    )


def reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any] | None = None
) -> dict[str, Any]:
    """The function OpenRLHF's remote-reward loader calls; values as torch tensors."""
    import torch

    payload = review_payload(runtime.run(score_batch(queries, prompts)))
    return {
        "rewards": torch.tensor(payload["rewards"], dtype=torch.float32),
        "scores": torch.tensor(payload["scores"], dtype=torch.float32),
        "extra_logs": {
            k: torch.tensor(v, dtype=torch.float32) for k, v in payload["extra_logs"].items()
        },
    }
