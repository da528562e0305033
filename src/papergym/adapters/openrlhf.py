"""OpenRLHF adapter over any reward: ``reward_func(queries, prompts, labels)`` for
``--remote_rm_url`` files, and the payload of the servers' ``POST /get_reward``.

OpenRLHF hands over the full texts (prompt + response), the prompts, and the dataset's label
column; the reward rebuilds each input from its label
(:meth:`~papergym.reward_protocol.Reward.input_of`). Unscored answers get the configured
fallback as their reward and the reward's ``extra_logs``
(:meth:`~papergym.reward_protocol.Reward.openrlhf_logs`) flag them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from papergym.adapters import loop
from papergym.reward_protocol import Reward


def response_of(query: str, prompt: str) -> str:
    """The response part of an OpenRLHF query (the prompt followed by the response)."""
    return query[len(prompt) :] if query.startswith(prompt) else query


async def score_batch(
    reward: Reward[Any, Any],
    queries: Sequence[str],
    prompts: Sequence[str],
    labels: Sequence[Any] | None,
) -> list[Any]:
    """The reward's results for OpenRLHF's parallel lists (labels may be None: not read)."""
    given = list(labels) if labels is not None else [None] * len(queries)
    pairs = [
        (reward.input_of(label, None), response_of(query, prompt))
        for query, prompt, label in zip(queries, prompts, given, strict=True)
    ]
    return await reward.ascore_batch(pairs)


def openrlhf_payload(
    values: Sequence[float | None], extra_logs: dict[str, list[float]], fallback: float
) -> dict[str, Any]:
    """OpenRLHF's reward dict: rewards (``fallback`` where a value is None), the same as
    scores, and ``extra_logs``."""
    rewards = [value if value is not None else fallback for value in values]
    return {"rewards": rewards, "scores": rewards, "extra_logs": extra_logs}


def payload(reward: Reward[Any, Any], results: Sequence[Any], fallback: float) -> dict[str, Any]:
    """The reward's OpenRLHF dict of ``results``, with its ``extra_logs``."""
    return openrlhf_payload([r.value for r in results], reward.openrlhf_logs(results), fallback)


def as_tensors(found: dict[str, Any]) -> dict[str, Any]:
    """OpenRLHF's loader wants torch tensors."""
    import torch

    return {
        "rewards": torch.tensor(found["rewards"], dtype=torch.float32),
        "scores": torch.tensor(found["scores"], dtype=torch.float32),
        "extra_logs": {
            k: torch.tensor(v, dtype=torch.float32) for k, v in found["extra_logs"].items()
        },
    }


def reward_func_of(
    reward_of: Callable[[], Reward[Any, Any]], fallback: Callable[[], float]
) -> Callable[..., dict[str, Any]]:
    """The function OpenRLHF's remote-reward loader calls, over the reward ``reward_of()``
    returns; values as torch tensors."""

    def reward_func(
        queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any] | None = None
    ) -> dict[str, Any]:
        reward = reward_of()
        results = loop.run(score_batch(reward, queries, prompts, labels))
        return as_tensors(payload(reward, results, fallback()))

    return reward_func
