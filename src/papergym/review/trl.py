"""TRL adapter of the review reward: reward functions for ``GRPOTrainer`` over generated papers.

Each completion (plain or chat format) is reviewed as a paper; the reward is its mean simulated
rating on [0, 1], or ``None`` when no review could be scored (TRL turns that into NaN and leaves
it out of the mean instead of counting a 0). No dataset column is needed. The mean rating, the
unscored count and the count of texts scored from fewer reviews than asked (``review.partial``)
are logged through TRL's ``log_metric`` hook when the trainer offers it::

    from papergym.review.trl import review_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[review_reward], train_dataset=dataset, ...)

The reviewer comes from the config file ``$PAPERGYM_CONFIG`` names (its ``review`` and ``llm``
sections; see :mod:`papergym.review.runtime`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from papergym.review.reward import ReviewScore
from papergym.review.runtime import shared_review_reward
from papergym.reward import runtime
from papergym.reward.trl import completion_text


def log_review(
    scores: Sequence[ReviewScore], log_metric: Callable[[str, float], None] | None
) -> None:
    """Log the mean rating of the scored texts, how many were unscored, and how many were
    scored from fewer reviews than asked."""
    if log_metric is None:
        return
    ratings = [s.rating for s in scores if s.rating is not None]
    if ratings:
        log_metric("review/rating_mean", statistics.fmean(ratings))
    log_metric("review/unscored", float(sum(not s.scored for s in scores)))
    log_metric("review/partial", float(sum(s.partial for s in scores)))


async def _score_all(completions: Sequence[Any]) -> list[ReviewScore]:
    return await shared_review_reward().ascore_many([completion_text(c) for c in completions])


def review_reward(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """The review reward for a batch of completions (sync)."""
    scores = runtime.run(_score_all(completions))
    log_review(scores, log_metric)
    return [s.value for s in scores]


async def review_reward_async(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """The review reward for a batch of completions (async; TRL gathers async reward functions)."""
    scores = await runtime.arun(_score_all(completions))
    log_review(scores, log_metric)
    return [s.value for s in scores]
