"""Whole-answer judges: the ablation rewards that give an answer one number, not verdicts.

A :class:`AnswerJudge` (the holistic LLM judge, the reference-similarity scorer) returns a
:class:`Rating` per answer: a value in ``[0, 1]``, or ``None`` with the reason it could not be
scored. :class:`~papergym.reward.reward.RubricReward` turns it into a
:class:`~papergym.records.Score` that says its mode (:func:`~papergym.reward.ablations.answer_score`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from papergym.records import Instance, RewardMode


@dataclass(frozen=True)
class Rating:
    """One answer's value in ``[0, 1]`` and why; ``value=None`` is unscored, never 0."""

    value: float | None
    reason: str = ""


class AnswerJudge(ABC):
    """Rates a whole answer, without a rubric's verdicts."""

    mode: RewardMode
    """The reward mode this judge implements."""

    @property
    @abstractmethod
    def name(self) -> str:
        """A short description of this judge, for :attr:`papergym.records.Score.judge`."""

    @property
    def identity(self) -> str:
        """Everything that can change this judge's ratings (the score cache's key)."""
        return self.name

    @abstractmethod
    async def rate(self, instance: Instance, answer: str) -> Rating:
        """The rating of ``answer`` to ``instance``'s question."""

    async def rate_many(self, pairs: Sequence[tuple[Instance, str]]) -> list[Rating]:
        """:meth:`rate` of many pairs, in order."""
        return [await self.rate(i, a) for i, a in pairs]
