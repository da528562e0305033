"""PaperGym as an inspect_ai task (tested with inspect_ai 0.3.285).

PaperGym's package registers this module under inspect's ``inspect_ai`` entry point, so once
``papergym[inspect]`` is installed the task runs by name::

    inspect eval papergym/papergym -T data=BUILD_DIR --model openai-api/local/MODEL

``data`` is anything ``papergym eval`` reads: a build folder (its ``instances.jsonl``) or a
rubric dataset (ResearchPlanGen, ResearchQA, RubricHub, generic ``{question, criteria}``);
``split``, ``limit``, ``system_prompt`` and the reward's settings (``config``, ``overrides``,
``judge``, ``judge_base_url``, ``judge_model``, ``judge_api_key_env``, ``alpha``) are ``-T``
arguments. The policy answers once per question (inspect's ``generate``); the scorer grades
the answer with PaperGym's reward, configured as ``papergym score`` is.

Each sample's score value is ``{"reward", "specific", "general", "length"}``, the metrics are
their means, and the score's metadata holds every criterion's verdict and reason. An answer
the judge cannot score is ``Score.unscored(reason="grader_failed")`` (inspect's NaN sentinel):
kept in the log with its reason, counted as an unscored sample, left out of every mean — never
a 0. Everything that touches inspect_ai's API is in this module.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

try:
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser
    from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
    from inspect_ai.solver import TaskState, generate
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "papergym.integrations.inspect needs inspect_ai: pip install 'papergym[inspect]'"
    ) from error

from papergym.eval.data import load_eval_data
from papergym.export.common import rubric_dict
from papergym.integrations.common import (
    ascore,
    integration_config,
    reward_for,
    row_instance,
    verdict_rows,
)
from papergym.records import Instance
from papergym.records import Score as PaperGymScore

TESTED_VERSIONS = ("0.3.285",)
"""inspect_ai releases this module was tested with."""

VALUE_KEYS: tuple[str, ...] = ("reward", "specific", "general", "length")


def sample_input(question: str, system_prompt: str | None) -> list[ChatMessage]:
    """The training prompt: the question, after the system prompt when there is one."""
    messages: list[ChatMessage] = (
        [ChatMessageSystem(content=system_prompt)] if system_prompt else []
    )
    return [*messages, ChatMessageUser(content=question)]


def instance_sample(instance: Instance, system_prompt: str | None) -> Sample:
    """One question as an inspect sample; its metadata carries what the reward reads."""
    return Sample(
        id=instance.id,
        input=sample_input(instance.question, system_prompt),
        target=instance.reference_answer,
        metadata={
            "instance_id": instance.id,
            "question": instance.question,
            "reference": instance.reference_answer,
            "rubric": rubric_dict(instance.rubric),
            "paper_id": instance.paper_id,
            "recipe": instance.recipe,
        },
    )


def _part(value: float | None) -> float:
    return math.nan if value is None else value  # NaN: inspect leaves the key's sample out


def inspect_score(score: PaperGymScore, answer: str) -> Score:
    """A PaperGym score as inspect's: the value parts, or unscored with the judge's reason."""
    metadata: dict[str, Any] = {
        "verdicts": verdict_rows(score),
        "alpha": score.alpha,
        "normalisation": score.normalisation,
        "judge": score.judge,
        "answer_truncated": score.answer_truncated,
    }
    if score.value is None:
        metadata["unscored_reason"] = score.unscored_reason
        return Score.unscored(
            reason="grader_failed",
            answer=answer,
            explanation=score.unscored_reason,
            metadata=metadata,
        )
    return Score(
        value={
            "reward": score.value,
            "specific": _part(score.specific),
            "general": _part(score.general),
            "length": float(len(answer)),
        },
        answer=answer,
        explanation="; ".join(
            f"{v.criterion_id}: {'met' if v.passed else 'not met'}" for v in score.verdicts
        ),
        metadata=metadata,
    )


@scorer(metrics={key: [mean()] for key in VALUE_KEYS})
def rubric_scorer(
    config: str | None = None,
    overrides: list[str] | None = None,
    judge: str | None = None,
    judge_base_url: str | None = None,
    judge_model: str | None = None,
    judge_api_key_env: str | None = None,
    alpha: float | None = None,
) -> Scorer:
    """PaperGym's rubric reward as an inspect scorer (settings as :func:`papergym`'s)."""
    settings = integration_config(
        config,
        overrides or [],
        judge=judge,
        judge_base_url=judge_base_url,
        judge_model=judge_model,
        judge_api_key_env=judge_api_key_env,
        alpha=alpha,
    )
    reward = reward_for(settings)

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        instance = row_instance(state.metadata)
        return inspect_score(await ascore(reward, instance, answer), answer)

    return score


@task
def papergym(
    data: str,
    split: str | None = None,
    limit: int | None = None,
    system_prompt: str | None = None,
    config: str | None = None,
    overrides: list[str] | str | None = None,
    judge: str | None = None,
    judge_base_url: str | None = None,
    judge_model: str | None = None,
    judge_api_key_env: str | None = None,
    alpha: float | None = None,
) -> Task:
    """PaperGym's research-plan questions, graded by its rubric reward.

    ``data``: a build folder or rubric dataset; ``split``: test, train or all (default
    ``eval.split``: test when ``data.test_fraction`` is set); ``system_prompt``: default
    ``data.system_prompt``; the rest configure the reward (see the module docstring).
    """
    extra = [overrides] if isinstance(overrides, str) else list(overrides or [])
    settings = integration_config(config, extra, judge=judge, alpha=alpha)
    loaded = load_eval_data(
        Path(data), split or settings.eval.split, settings.data.test_fraction, limit
    )
    prompt = system_prompt if system_prompt is not None else settings.data.system_prompt
    samples = [instance_sample(instance, prompt) for instance in loaded.instances]
    return Task(
        dataset=MemoryDataset(samples, name=f"papergym:{loaded.path}", location=str(loaded.path)),
        solver=generate(),
        scorer=rubric_scorer(
            config=config,
            overrides=extra,
            judge=judge,
            judge_base_url=judge_base_url,
            judge_model=judge_model,
            judge_api_key_env=judge_api_key_env,
            alpha=alpha,
        ),
    )
