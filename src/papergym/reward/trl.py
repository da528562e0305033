"""TRL adapter: reward functions for ``GRPOTrainer`` (plain and chat completions, sync and async).

They read the ``question``, ``reference`` and ``rubric`` columns of ``papergym export --format trl``
(TRL passes dataset columns as keyword arguments), return one value per completion — ``None`` when
the judge could not score it, which TRL turns into NaN and leaves out of the mean instead of
counting a 0 — and log the specific and general means and the unscored count through TRL's
``log_metric`` hook when the trainer offers it::

    from papergym.reward.trl import rubric_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[rubric_reward], train_dataset=dataset, ...)
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from papergym.records import Instance, Rubric, Score, SourceKind, source_kind_of
from papergym.reward import runtime
from papergym.reward.verl import anonymous_id


def completion_text(completion: Any) -> str:
    """The answer text of a plain (str) or chat-format ([{role, content}, ...]) completion."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        assistant = [m for m in completion if isinstance(m, dict) and m.get("role") == "assistant"]
        last = (assistant or list(completion))[-1]
        return str(last.get("content", "")) if isinstance(last, dict) else str(last)
    return ""


def _instances(
    question: Sequence[str],
    reference: Sequence[str],
    rubric: Sequence[str],
    instance_id: Sequence[str] | None,
    recipe: Sequence[str] | None = None,
) -> list[Instance]:
    rubrics = [Rubric.model_validate_json(b) for b in rubric]
    # The TRL export has no source-kind column (a paper's rows stay as they were); ARES, the
    # recipe that builds from documents, tells the judge to grade an answer, not a plan.
    recipes: Sequence[str | None] = recipe or [None] * len(rubrics)
    kinds: list[SourceKind] = [source_kind_of(r) for r in recipes]
    ids = (
        [str(i) for i in instance_id]
        if instance_id is not None
        else [anonymous_id(q, r, b) for q, r, b in zip(question, reference, rubrics, strict=True)]
    )
    return [
        Instance(
            id=i,
            recipe="papergym",
            builder="llm",
            paper_id="",
            title="",
            question=q,
            reference_answer=r,
            rubric=b,
            source_kind=k,
        )
        for i, q, r, b, k in zip(ids, question, reference, rubrics, kinds, strict=True)
    ]


def _log(scores: Sequence[Score], log_metric: Callable[[str, float], None] | None) -> None:
    if log_metric is None:
        return
    for name in ("specific", "general"):
        values = [getattr(s, name) for s in scores if getattr(s, name) is not None]
        if values:
            log_metric(f"rubric/{name}_mean", statistics.fmean(values))
    log_metric("rubric/unscored", float(sum(not s.scored for s in scores)))


async def _score_all(
    completions: Sequence[Any],
    question: Sequence[str],
    reference: Sequence[str],
    rubric: Sequence[str],
    instance_id: Sequence[str] | None,
    recipe: Sequence[str] | None = None,
) -> list[Score]:
    pairs = list(
        zip(
            _instances(question, reference, rubric, instance_id, recipe),
            (completion_text(c) for c in completions),
            strict=True,
        )
    )
    return await runtime.shared_reward().ascore_many(pairs)


def rubric_reward(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    question: Sequence[str],
    reference: Sequence[str],
    rubric: Sequence[str],
    instance_id: Sequence[str] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """The rubric reward for a batch of completions (sync)."""
    scores = runtime.run(
        _score_all(completions, question, reference, rubric, instance_id, kwargs.get("recipe"))
    )
    _log(scores, log_metric)
    return [s.value for s in scores]


async def rubric_reward_async(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    question: Sequence[str],
    reference: Sequence[str],
    rubric: Sequence[str],
    instance_id: Sequence[str] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """The rubric reward for a batch of completions (async; TRL gathers async reward functions)."""
    scores = await runtime.arun(
        _score_all(completions, question, reference, rubric, instance_id, kwargs.get("recipe"))
    )
    _log(scores, log_metric)
    return [s.value for s in scores]
