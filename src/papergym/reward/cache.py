"""``ScoreCache``: the bounded, content-keyed memory every reward judges through.

A reward computes a key from everything that decides a score (the rubric reward: question,
reference, rubric, answer, judge, α, normalisation; the review reward: the reviewer and the
text) and hands the cache a coroutine that computes the score. The cache then

- serves a key it holds from memory (an LRU of at most ``size`` scores; ``0`` keeps none),
- lets concurrent requests for the same key share one computation (even with ``size`` 0),
- bounds how many computations run at once (``max_concurrency``), and
- keeps a computed score only when the computation says so: a score whose judge or reviewer
  never answered (its endpoint failed, the budget was spent) is returned to the callers who
  asked for it at the time, and computed anew on the next request.

When the caller computing a key is cancelled (a client disconnected), the callers waiting on
it are not cancelled themselves: they compute it again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

S = TypeVar("S")

DEFAULT_CACHE_SIZE = 4096
"""Scores kept in memory. A rubric score with its verdicts' reasons is a few KB (about 7 KB
with an LLM judge's reasons), so the cache stays under ~30 MB; 4096 covers two steps of a large
GRPO batch (256 prompts × 8 answers), where repeats happen (duplicate answers in a group, a
retried request, check-reward's probes), while a long-running server does not grow without
bound. A review score is a few numbers."""

Computation = Callable[[], Awaitable[tuple[S, bool]]]
"""Computes one score: (the score, whether it may be kept)."""


class ScoreCache(Generic[S]):
    """A bounded LRU of scores by content key, with shared in-flight computations."""

    def __init__(self, size: int = DEFAULT_CACHE_SIZE, max_concurrency: int = 32) -> None:
        if size < 0:
            raise ValueError(f"cache_size must be 0 or more, not {size}")
        self.size = size
        self.max_concurrency = max_concurrency
        self._scores: OrderedDict[str, S] = OrderedDict()
        self._pending: dict[str, asyncio.Future[S]] = {}
        self._semaphore: asyncio.Semaphore | None = None

    def __len__(self) -> int:
        """How many scores the cache holds now."""
        return len(self._scores)

    async def get(self, key: str, compute: Computation[S]) -> S:
        """The score of ``key``: from memory, from a computation in flight, or computed now
        (within the concurrency bound) and kept when ``compute`` says it may be."""
        if key in self._scores:
            self._scores.move_to_end(key)
            return self._scores[key]
        if key in self._pending:  # the same content is being scored right now: wait for it
            try:
                return await asyncio.shield(self._pending[key])
            except _AskerCancelled:  # its asker left (a client disconnected): score it anew
                return await self.get(key, compute)
        future: asyncio.Future[S] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            async with self._bound():
                score, keep = await compute()
            if keep:
                self._remember(key, score)
            future.set_result(score)
            return score
        except BaseException as error:
            # a cancelled asker's waiters are not cancelled themselves: they score it again
            cancelled = isinstance(error, asyncio.CancelledError)
            future.set_exception(_AskerCancelled() if cancelled else error)
            future.exception()  # mark retrieved: waiters re-raise it, nobody logs it as lost
            raise
        finally:
            del self._pending[key]

    def new_loop(self) -> None:
        """Forget the concurrency bound before a new event loop uses the cache (a semaphore
        belongs to the loop that made it)."""
        self._semaphore = None

    def _remember(self, key: str, score: S) -> None:
        if self.size == 0:
            return
        self._scores[key] = score
        self._scores.move_to_end(key)
        while len(self._scores) > self.size:
            self._scores.popitem(last=False)  # the least recently used

    def _bound(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
        return self._semaphore


class _AskerCancelled(Exception):
    """The caller computing a score was cancelled; callers waiting on it must compute it anew."""
