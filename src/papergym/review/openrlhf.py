"""OpenRLHF entry point of the review reward: ``reward_func(queries, prompts, labels)``
(:mod:`papergym.adapters.openrlhf` over this process's review reward).

The response part of each query is reviewed as a paper; labels are not read. Unscored texts get
``reward.unscored`` (default 0.0) as their reward and are flagged in ``extra_logs``
(``review_unscored``), as are texts scored from fewer reviews than asked (``review_partial``). The reviewer
comes from the config file ``$PAPERGYM_CONFIG`` names (see :mod:`papergym.review.runtime`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papergym.adapters import openrlhf
from papergym.review.reward import ReviewScore, openrlhf_logs
from papergym.review.runtime import shared_review_reward
from papergym.reward import runtime

reward_func = openrlhf.reward_func_of(shared_review_reward, runtime.unscored_fallback)


async def score_batch(queries: Sequence[str], prompts: Sequence[str]) -> list[ReviewScore]:
    """Review scores for OpenRLHF's parallel lists of queries (prompt + response) and prompts."""
    return await openrlhf.score_batch(shared_review_reward(), queries, prompts, None)


def review_payload(scores: Sequence[ReviewScore]) -> dict[str, Any]:
    """The review reward's OpenRLHF dict, with the mean rating logged (-1 where unscored) and
    the unscored and partial texts flagged."""
    return openrlhf.openrlhf_payload(
        [s.value for s in scores], openrlhf_logs(scores), runtime.unscored_fallback()
    )
