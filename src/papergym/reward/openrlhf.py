"""OpenRLHF adapter: ``reward_func(queries, prompts, labels)`` for ``--remote_rm_url`` files.

OpenRLHF hands over the full texts (prompt + response), the prompts, and the dataset's label
column; export the verl ground truth (``reward_model.ground_truth``, a JSON string with question,
reference and rubric) as that label. Unscored answers get ``reward.unscored`` (default 0.0) as
their reward and are counted in ``extra_logs``. The settings come from the config file
``$PAPERGYM_CONFIG`` names (see :mod:`papergym.reward.runtime`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papergym.records import Score
from papergym.reward import runtime
from papergym.reward.verl import instance_from_ground_truth


def response_of(query: str, prompt: str) -> str:
    """The response part of an OpenRLHF query (the prompt followed by the response)."""
    return query[len(prompt) :] if query.startswith(prompt) else query


async def score_batch(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any]
) -> list[Score]:
    """Scores for OpenRLHF's three parallel lists."""
    pairs = [
        (instance_from_ground_truth(label, None), response_of(query, prompt))
        for query, prompt, label in zip(queries, prompts, labels, strict=True)
    ]
    return await runtime.shared_reward().ascore_many(pairs)


def openrlhf_payload(
    values: Sequence[float | None], extra_logs: dict[str, list[float]]
) -> dict[str, Any]:
    """OpenRLHF's reward dict: rewards (``reward.unscored`` where a value is None), the same
    as scores, and ``extra_logs``."""
    fallback = runtime.unscored_fallback()
    rewards = [value if value is not None else fallback for value in values]
    return {"rewards": rewards, "scores": rewards, "extra_logs": extra_logs}


def rewards_payload(scores: Sequence[Score]) -> dict[str, Any]:
    """The rubric reward's OpenRLHF dict, with its parts logged: ``rubric_specific`` and
    ``rubric_general`` per answer (-1.0 marks an answer whose part could not be scored; its
    ``rubric_unscored`` is 1.0), and ``rubric_unscored``.

    ``rubric_general`` is left out when no answer was given a general verdict at all: the
    offline judge grades no general criteria, and a column of -1.0 would read as a score.
    """
    logs = {"rubric_specific": [s.specific if s.specific is not None else -1.0 for s in scores]}
    if any(v.kind == "general" for s in scores for v in s.verdicts):
        logs["rubric_general"] = [s.general if s.general is not None else -1.0 for s in scores]
    logs["rubric_unscored"] = [0.0 if s.scored else 1.0 for s in scores]
    return openrlhf_payload([s.value for s in scores], logs)


def reward_func(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any]
) -> dict[str, Any]:
    """The function OpenRLHF's remote-reward loader calls; values as torch tensors."""
    import torch

    payload = rewards_payload(runtime.run(score_batch(queries, prompts, labels)))
    return {
        "rewards": torch.tensor(payload["rewards"], dtype=torch.float32),
        "scores": torch.tensor(payload["scores"], dtype=torch.float32),
        "extra_logs": {
            k: torch.tensor(v, dtype=torch.float32) for k, v in payload["extra_logs"].items()
        },
    }
