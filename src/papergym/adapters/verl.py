"""verl adapter over any reward: ``compute_score`` (sync), ``compute_score_async`` and
``compute_score_batch``.

verl passes only the decoded response; the reward rebuilds its input from ``ground_truth`` (a
JSON string, as ``papergym export --format verl`` writes it) and ``extra_info``
(:meth:`~papergym.reward_protocol.Reward.input_of`). Every call returns the same keys, so verl
can stack them into metrics: ``score`` (the reward's value, or the configured fallback when
unscored) and the reward's own (:meth:`~papergym.reward_protocol.Reward.verl_metrics`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from papergym.adapters import loop
from papergym.reward_protocol import Reward


def score_dict(
    reward: Reward[Any, Any], item: Any, result: Any, fallback: float
) -> dict[str, float]:
    """The fixed key set verl aggregates; an unscored answer gets ``fallback``."""
    return {
        "score": result.value if result.value is not None else fallback,
        **reward.verl_metrics(item, result),
    }


@dataclass(frozen=True)
class VerlFunctions:
    """verl's three entry points over the reward ``reward_of()`` returns, with the value
    ``fallback()`` returns for an unscored answer."""

    reward_of: Callable[[], Reward[Any, Any]]
    fallback: Callable[[], float]

    async def score(
        self, solution_str: str, ground_truth: Any, extra_info: Any
    ) -> dict[str, float]:
        """One answer's key set."""
        reward = self.reward_of()
        item = reward.input_of(ground_truth, extra_info)
        [result] = await reward.ascore_batch([(item, solution_str)])
        return score_dict(reward, item, result, self.fallback())

    def compute_score(
        self,
        data_source: str,
        solution_str: str,
        ground_truth: Any = None,
        extra_info: Any = None,
        **kwargs: Any,
    ) -> dict[str, float]:
        """verl's sync reward function."""
        return loop.run(self.score(solution_str, ground_truth, extra_info))

    async def compute_score_async(
        self,
        data_source: str,
        solution_str: str,
        ground_truth: Any = None,
        extra_info: Any = None,
        **kwargs: Any,
    ) -> dict[str, float]:
        """verl's async reward function (``async def`` is detected by verl's reward loop)."""
        return await loop.arun(self.score(solution_str, ground_truth, extra_info))

    def compute_score_batch(
        self,
        data_sources: Sequence[str],
        solution_strs: Sequence[str],
        ground_truths: Sequence[Any] | None = None,
        extra_infos: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, float]]:
        """The older batch reward manager's entry point: all answers judged concurrently."""
        truths = list(ground_truths) if ground_truths is not None else [None] * len(solution_strs)
        infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)

        async def all_scores() -> list[dict[str, float]]:
            return list(
                await asyncio.gather(
                    *(
                        self.score(s, g, i)
                        for s, g, i in zip(solution_strs, truths, infos, strict=True)
                    )
                )
            )

        return loop.run(all_scores())
