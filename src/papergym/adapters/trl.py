"""TRL adapter over any reward: reward functions for ``GRPOTrainer`` (plain and chat
completions, sync and async).

TRL passes the dataset's columns as keyword arguments; the reward rebuilds each completion's
input from them (:meth:`~papergym.reward_protocol.Reward.inputs_of_columns`). A function returns
one value per completion — ``None`` when the reward could not score it, which TRL turns into
NaN and leaves out of the mean instead of counting a 0 — and logs the reward's batch numbers
(:meth:`~papergym.reward_protocol.Reward.trl_logs`) through TRL's ``log_metric`` hook when the
trainer offers it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from papergym.adapters import loop
from papergym.reward_protocol import Reward

LogMetric = Callable[[str, float], None]
SyncFunction = Callable[..., list[float | None]]
AsyncFunction = Callable[..., Coroutine[Any, Any, list[float | None]]]


def completion_text(completion: Any) -> str:
    """The answer text of a plain (str) or chat-format ([{role, content}, ...]) completion."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        assistant = [m for m in completion if isinstance(m, dict) and m.get("role") == "assistant"]
        last = (assistant or list(completion))[-1]
        return str(last.get("content", "")) if isinstance(last, dict) else str(last)
    return ""


async def score_completions(
    reward: Reward[Any, Any], completions: Sequence[Any], columns: dict[str, Any]
) -> list[Any]:
    """The reward's results of a batch of completions, their inputs read from ``columns``."""
    texts = [completion_text(c) for c in completions]
    inputs = reward.inputs_of_columns(columns, len(texts))
    return await reward.ascore_batch(list(zip(inputs, texts, strict=True)))


def _values(
    reward: Reward[Any, Any], results: list[Any], log_metric: LogMetric | None
) -> list[Any]:
    if log_metric is not None:
        for name, value in reward.trl_logs(results).items():
            log_metric(name, value)
    return [r.value for r in results]


def reward_function(reward_of: Callable[[], Reward[Any, Any]], name: str) -> SyncFunction:
    """A sync TRL reward function named ``name`` (TRL names its metrics after it), scoring with
    the reward ``reward_of()`` returns at each call."""

    def function(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        log_metric: LogMetric | None = None,
        **columns: Any,
    ) -> list[float | None]:
        reward = reward_of()
        results = loop.run(score_completions(reward, completions, columns))
        return _values(reward, results, log_metric)

    function.__name__ = function.__qualname__ = name
    return function


def async_reward_function(reward_of: Callable[[], Reward[Any, Any]], name: str) -> AsyncFunction:
    """The async twin of :func:`reward_function` (TRL gathers async reward functions)."""

    async def function(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        log_metric: LogMetric | None = None,
        **columns: Any,
    ) -> list[float | None]:
        reward = reward_of()
        results = await loop.arun(score_completions(reward, completions, columns))
        return _values(reward, results, log_metric)

    function.__name__ = function.__qualname__ = name
    return function
