"""``RubricReward``: (instance, answer) → :class:`~papergym.records.Score`.

The one object every adapter (TRL, verl, OpenRLHF, the HTTP server) calls. It asks a judge for
per-criterion verdicts, turns them into a score with the pure rules of :mod:`scoring`, never
judges the same answer twice (concurrent duplicates share one judgement), and bounds how many
answers are judged at once.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from papergym.records import Instance, Score, Verdict
from papergym.reward.scoring import rubric_score


class Judge(Protocol):
    """Anything that returns (specific, general) verdicts for an answer."""

    @property
    def name(self) -> str: ...

    async def judge(
        self, instance: Instance, answer: str
    ) -> tuple[list[Verdict], list[Verdict]]: ...


def _answer_key(instance: Instance, answer: str) -> tuple[str, str]:
    return instance.id, hashlib.sha256(answer.encode("utf-8")).hexdigest()


@dataclass
class RubricReward:
    """Scores answers against an instance's rubric: ``α·specific + (1−α)·general``."""

    judge: Judge
    alpha: float = 0.7
    max_concurrency: int = 32
    _scores: dict[tuple[str, str], Score] = field(default_factory=dict, repr=False)
    _pending: dict[tuple[str, str], asyncio.Future[Score]] = field(default_factory=dict, repr=False)
    _semaphore: asyncio.Semaphore | None = field(default=None, repr=False)

    async def ascore(self, instance: Instance, answer: str) -> Score:
        """The score of one answer; a repeated answer is served from memory."""
        key = _answer_key(instance, answer)
        if key in self._scores:
            return self._scores[key]
        if key in self._pending:  # the same answer is being judged right now: wait for it
            return await asyncio.shield(self._pending[key])
        future: asyncio.Future[Score] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            async with self._bound():
                specific, general = await self.judge.judge(instance, answer)
            score = rubric_score(
                instance.id, specific, general, alpha=self.alpha, judge=self.judge.name
            )
            self._scores[key] = score
            future.set_result(score)
            return score
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # mark retrieved: waiters re-raise it, nobody logs it as lost
            raise
        finally:
            del self._pending[key]

    async def ascore_many(self, pairs: Sequence[tuple[Instance, str]]) -> list[Score]:
        """Scores of many answers, in order, judged concurrently within the bound."""
        return list(await asyncio.gather(*(self.ascore(i, a) for i, a in pairs)))

    def score(self, instance: Instance, answer: str) -> Score:
        """Synchronous :meth:`ascore`, for code without an event loop."""
        return self.score_many([(instance, answer)])[0]

    def score_many(self, pairs: Sequence[tuple[Instance, str]]) -> list[Score]:
        """Synchronous :meth:`ascore_many`; inside a running loop, await ``ascore_many``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._semaphore = None  # a semaphore belongs to the loop that made it
            return asyncio.run(self.ascore_many(pairs))
        raise RuntimeError(
            "RubricReward.score* called inside an event loop: await ascore/ascore_many"
        )

    def _bound(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
        return self._semaphore
