"""``ScoreCache``, the one cache both rewards judge through."""

from __future__ import annotations

import asyncio

import pytest

from papergym.reward.cache import Computation, ScoreCache


def test_lru_bound_kept_flag_and_shared_computations() -> None:
    cache: ScoreCache[str] = ScoreCache(size=2, max_concurrency=8)
    calls: list[str] = []

    def computing(key: str, keep: bool = True) -> Computation[str]:
        async def compute() -> tuple[str, bool]:
            calls.append(key)
            await asyncio.sleep(0.01)
            return f"score of {key}", keep

        return compute

    async def scenario() -> None:
        # concurrent requests for one key share one computation
        shared = await asyncio.gather(*(cache.get("a", computing("a")) for _ in range(5)))
        assert shared == ["score of a"] * 5 and calls == ["a"]
        await cache.get("b", computing("b"))
        await cache.get("a", computing("a"))  # a is now the most recently used
        await cache.get("c", computing("c"))  # evicts b, the least recently used
        assert len(cache) == 2 and calls == ["a", "b", "c"]
        await cache.get("b", computing("b"))
        assert calls[-1] == "b"
        # a score its computation says not to keep (an endpoint failed) is asked for again
        await cache.get("d", computing("d", keep=False))
        await cache.get("d", computing("d", keep=False))
        assert calls.count("d") == 2

    asyncio.run(scenario())


def test_no_cache_still_shares_concurrent_duplicates_and_bounds_concurrency() -> None:
    cache: ScoreCache[int] = ScoreCache(size=0, max_concurrency=2)
    running = 0
    most = 0

    async def compute() -> tuple[int, bool]:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.01)
        running -= 1
        return 1, True

    async def scenario() -> None:
        await asyncio.gather(*(cache.get(str(i % 4), compute) for i in range(12)))
        assert len(cache) == 0

    asyncio.run(scenario())
    assert most == 2


def test_a_negative_size_is_refused() -> None:
    with pytest.raises(ValueError, match="cache_size must be 0 or more"):
        ScoreCache(size=-1)
