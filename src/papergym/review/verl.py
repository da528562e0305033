"""verl adapter of the review reward: ``compute_score``, ``compute_score_async`` and
``compute_score_batch`` for a policy that writes papers.

The decoded response is reviewed as a paper; ``ground_truth`` and ``extra_info`` are not read
(a row needs no rubric). Every call returns the same keys, so verl can stack them into metrics:
``score`` (the mean rating on [0, 1], or ``reward.unscored`` — default 0.0 — when no review was
scored), ``rating`` (the mean rating on the venue's scale, -1.0 when unscored), ``reviews``
(reviews scored), ``unscored`` (1.0/0.0), ``partial`` (1.0 when fewer reviews were scored than
asked; see ``review.partial``).

Point verl at it with ``reward.custom_reward_function.path=<this file>`` and
``.name=compute_score`` (before verl 0.7.1: ``custom_reward_function.path/name``). The reviewer
comes from the config file ``$PAPERGYM_CONFIG`` names (see :mod:`papergym.review.runtime`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from papergym.review.reward import ReviewScore
from papergym.review.runtime import shared_review_reward
from papergym.reward import runtime

KEYS = ("score", "rating", "reviews", "unscored", "partial")


def review_score_dict(score: ReviewScore) -> dict[str, float]:
    """The fixed key set verl aggregates; an unscored text gets the configured fallback."""
    return {
        "score": score.value if score.value is not None else runtime.unscored_fallback(),
        "rating": score.rating if score.rating is not None else -1.0,
        "reviews": float(score.reviews),
        "unscored": 0.0 if score.scored else 1.0,
        "partial": 1.0 if score.partial else 0.0,
    }


async def _score(solution_str: str) -> dict[str, float]:
    return review_score_dict(await shared_review_reward().ascore(solution_str))


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Any = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's sync reward function."""
    return runtime.run(_score(solution_str))


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any = None,
    extra_info: Any = None,
    **kwargs: Any,
) -> dict[str, float]:
    """verl's async reward function (``async def`` is detected by verl's reward loop)."""
    return await runtime.arun(_score(solution_str))


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any] | None = None,
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """The older batch reward manager's entry point: all texts reviewed concurrently."""

    async def all_scores() -> list[dict[str, float]]:
        return list(await asyncio.gather(*(_score(s) for s in solution_strs)))

    return runtime.run(all_scores())
