"""verl adapter: ``compute_score`` (sync), ``compute_score_async`` and ``compute_score_batch``.

verl passes only the decoded response; the question, reference and rubric travel in
``ground_truth`` (a JSON string, as ``papergym export --format verl`` writes it) and
``extra_info``. Every call returns the same keys, so verl can stack them into metrics:
``score`` (the reward, or ``reward.unscored`` — default 0.0 — when unscored), ``specific``,
``general`` (-1.0 when unscored), ``unscored`` (1.0/0.0) and ``num_criteria``.

Point verl at it with ``reward.custom_reward_function.path=<this file>`` and ``.name=compute_score``
(before verl 0.7.1: ``custom_reward_function.path/name``). The judge, α and the rest come from the
config file ``$PAPERGYM_CONFIG`` names (see :mod:`papergym.reward.runtime`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from papergym.records import Instance, Rubric, Score, content_hash
from papergym.reward import runtime

KEYS = ("score", "specific", "general", "unscored", "num_criteria")


def instance_from_ground_truth(
    ground_truth: str | Mapping[str, Any], extra_info: Mapping[str, Any] | None
) -> Instance:
    """Rebuild the instance the reward needs from verl's ``ground_truth`` and ``extra_info``."""
    data = json.loads(ground_truth) if isinstance(ground_truth, str) else dict(ground_truth)
    info = dict(extra_info or {})
    rubric = data.get("rubric", info.get("rubric"))
    rubric = (
        Rubric.model_validate_json(rubric)
        if isinstance(rubric, str)
        else Rubric.model_validate(rubric)
    )
    question = str(data.get("question") or info.get("question") or "")
    reference = str(data.get("reference_answer") or info.get("reference_answer") or "")
    given = info.get("instance_id") or data.get("instance_id")
    kind = data.get("source_kind", info.get("source_kind"))
    return Instance(
        id=str(given) if given else anonymous_id(question, reference, rubric),
        recipe=info.get("recipe", "papergym"),
        builder=info.get("builder", "llm"),
        paper_id=str(info.get("paper_id", "")),
        title=str(info.get("title", "")),
        question=question,
        reference_answer=reference,
        rubric=rubric,
        source_kind="document" if kind == "document" else "paper",
    )


def anonymous_id(question: str, reference: str, rubric: Rubric) -> str:
    """An id for an instance that arrives without one: ``rubric-`` and a digest of its content.

    Only a label for the returned Score (the reward's cache is keyed by content, never by id),
    but a stable one: the same question, reference and rubric always get the same id.
    """
    payload = {
        "question": question,
        "reference": reference,
        "rubric": rubric.model_dump(mode="json"),
    }
    return "rubric-" + content_hash(payload)


def score_dict(score: Score, num_criteria: int) -> dict[str, float]:
    """The fixed key set verl aggregates; unscored answers get the configured fallback."""
    fallback = runtime.unscored_fallback()
    return {
        "score": score.value if score.value is not None else fallback,
        "specific": score.specific if score.specific is not None else -1.0,
        "general": score.general if score.general is not None else -1.0,
        "unscored": 0.0 if score.scored else 1.0,
        "num_criteria": float(num_criteria),
    }


async def _score(solution_str: str, ground_truth: Any, extra_info: Any) -> dict[str, float]:
    instance = instance_from_ground_truth(ground_truth, extra_info)
    score = await runtime.shared_reward().ascore(instance, solution_str)
    return score_dict(score, len(instance.rubric.specific))


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, **kwargs: Any
) -> dict[str, float]:
    """verl's sync reward function."""
    return runtime.run(_score(solution_str, ground_truth, extra_info))


async def compute_score_async(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, **kwargs: Any
) -> dict[str, float]:
    """verl's async reward function (``async def`` is detected by verl's reward loop)."""
    return await runtime.arun(_score(solution_str, ground_truth, extra_info))


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[dict[str, float]]:
    """The older batch reward manager's entry point: all answers judged concurrently."""
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)

    async def all_scores() -> list[dict[str, float]]:
        import asyncio

        return list(
            await asyncio.gather(
                *(
                    _score(s, g, i)
                    for s, g, i in zip(solution_strs, ground_truths, infos, strict=True)
                )
            )
        )

    return runtime.run(all_scores())
