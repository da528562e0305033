"""The background event loop every adapter scores on.

Trainers call reward functions from their own threads and loops; LLM clients, though, belong to
one event loop. So the adapters hand every judgement to one background loop per process, from
sync code (``run``) and from async code (``arun``) alike.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="papergym-reward", daemon=True).start()
            _loop = loop
        return _loop


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the reward loop and wait for it (from any thread without a loop)."""
    future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, _background_loop())
    return future.result()


async def arun(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the reward loop and await it from the caller's own loop."""
    return await asyncio.wrap_future(
        asyncio.run_coroutine_threadsafe(coroutine, _background_loop())
    )
