"""Client-side limits: requests-per-minute and tokens-per-minute buckets, and retry backoff."""

from __future__ import annotations

import asyncio
import random
import time


class RateLimiter:
    """A token bucket refilled at ``per_minute`` units a minute, holding at most a minute's worth.

    ``acquire(n)`` waits until ``n`` units are available; amounts larger than the bucket are
    clipped to its size so that one huge request cannot wait forever.
    """

    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = per_minute
        self.tokens = per_minute
        self.updated = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self, amount: float = 1.0) -> None:
        amount = min(amount, self.capacity)
        async with self._lock:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= amount:
                    self.tokens -= amount
                    return
                await asyncio.sleep((amount - self.tokens) / self.rate)


def backoff_delay(
    attempt: int, *, base: float = 0.5, cap: float = 30.0, retry_after: float | None = None
) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): exponential, capped, with jitter.

    A server's ``Retry-After`` wins when it is given, so a rate-limited endpoint is not hammered.
    """
    if retry_after is not None and retry_after >= 0:
        return float(min(retry_after, cap * 4))
    return float(min(cap, base * 2**attempt) * random.uniform(0.5, 1.5))
