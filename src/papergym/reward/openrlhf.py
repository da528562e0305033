"""OpenRLHF entry point of the rubric reward: ``reward_func(queries, prompts, labels)`` for
``--remote_rm_url`` files (:mod:`papergym.adapters.openrlhf` over this process's rubric reward).

OpenRLHF hands over the full texts (prompt + response), the prompts, and the dataset's label
column; export the verl ground truth (``reward_model.ground_truth``, a JSON string with question,
reference and rubric) as that label. Unscored answers get ``reward.unscored`` (default 0.0) as
their reward and are counted in ``extra_logs``. The settings come from the config file
``$PAPERGYM_CONFIG`` names (see :mod:`papergym.reward.runtime`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papergym.adapters import openrlhf
from papergym.adapters.openrlhf import response_of as response_of
from papergym.records import Score
from papergym.reward import runtime
from papergym.reward.reward import openrlhf_logs

reward_func = openrlhf.reward_func_of(runtime.shared_reward, runtime.unscored_fallback)


async def score_batch(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any]
) -> list[Score]:
    """Scores for OpenRLHF's three parallel lists."""
    return await openrlhf.score_batch(runtime.shared_reward(), queries, prompts, labels)


def openrlhf_payload(
    values: Sequence[float | None], extra_logs: dict[str, list[float]]
) -> dict[str, Any]:
    """OpenRLHF's reward dict: rewards (``reward.unscored`` where a value is None), the same
    as scores, and ``extra_logs``."""
    return openrlhf.openrlhf_payload(values, extra_logs, runtime.unscored_fallback())


def rewards_payload(scores: Sequence[Score]) -> dict[str, Any]:
    """The rubric reward's OpenRLHF dict, with its parts logged (see
    :meth:`~papergym.reward.reward.RubricReward.openrlhf_logs`)."""
    return openrlhf_payload([s.value for s in scores], openrlhf_logs(scores))
