"""The ``Reward`` protocol: what every reward of PaperGym is, and all an adapter needs.

Like inspect_ai's ``Scorer``, a reward scores a batch of (input, answer) pairs and returns one
result per pair. A result's ``value`` is a number, or ``None`` with its ``unscored_reason`` when
the answer could not be scored (a judge's answer that could not be parsed after the retries, a
review that never came): unscored is kept apart from 0, never turned into it by the reward.

The rubric reward (:class:`~papergym.reward.reward.RubricReward`, input: an
:class:`~papergym.records.Instance`) and the review reward
(:class:`~papergym.review.reward.ReviewReward`, input: ignored, the answer is the paper) both
implement it, and both judge through one :class:`~papergym.reward.cache.ScoreCache`.

Besides scoring, a reward says how the trainers' adapters (:mod:`papergym.adapters`) talk about
it, so a new reward needs no adapter of its own: how to rebuild its input from a framework's
label (verl's ``ground_truth``, OpenRLHF's label, TRL's dataset columns), and the numbers each
framework logs of its results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

I = TypeVar("I")  # noqa: E741 - the input of a reward, as in Reward[I, R]
R = TypeVar("R", bound="RewardResult")


class RewardResult(Protocol):
    """One answer's result: a value in [0, 1], or None with the reason it is unscored."""

    @property
    def value(self) -> float | None: ...

    @property
    def scored(self) -> bool: ...

    @property
    def unscored_reason(self) -> str | None: ...

    @property
    def answer_truncated(self) -> bool: ...


class Reward(Protocol[I, R]):
    """Scores a batch of (input, answer) pairs; see the module docstring."""

    @property
    def name(self) -> str:
        """A short label (logs, a server's health answer)."""
        ...

    async def ascore_batch(self, pairs: Sequence[tuple[I, str]]) -> list[R]:
        """The results of ``pairs``, in order, judged concurrently within the reward's bound."""
        ...

    def input_of(self, label: Any, extra_info: Mapping[str, Any] | None) -> I:
        """The input of one answer from a framework's label (verl's ``ground_truth`` with its
        ``extra_info``, OpenRLHF's label, a server request's item)."""
        ...

    def inputs_of_columns(self, columns: Mapping[str, Any], count: int) -> list[I]:
        """The inputs of ``count`` answers from TRL's dataset columns (keyword arguments)."""
        ...

    def verl_metrics(self, item: I, result: R) -> dict[str, float]:
        """verl's fixed key set for one result, besides ``score`` (the same keys every call)."""
        ...

    def openrlhf_logs(self, results: Sequence[R]) -> dict[str, list[float]]:
        """OpenRLHF's ``extra_logs``: per-answer numbers of the batch."""
        ...

    def trl_logs(self, results: Sequence[R]) -> dict[str, float]:
        """The batch's numbers TRL's ``log_metric`` hook records."""
        ...
