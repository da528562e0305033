"""The process-wide reward the adapters share, and the event loop it runs on.

Trainers call reward functions from their own threads and loops; LLM clients, though, belong to
one event loop. So the adapters hand every judgement to one background loop per process, from
sync code (``run``) and from async code (``arun``) alike, and the reward is configured once, from
the environment:

- ``PAPERGYM_REWARD_JUDGE``: ``offline`` (default when no LLM is configured) or ``llm``;
- ``PAPERGYM_REWARD_ALPHA``: the specific/general mix (default 0.7);
- the LLM layer's variables (``PAPERGYM_LLM_CONFIG``, ``PAPERGYM_BASE_URL``, ...) for the judge.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from papergym.reward.reward import Judge, RubricReward

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_reward: RubricReward | None = None


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


def make_judge(kind: str | None = None) -> Judge:
    """The judge the environment asks for."""
    from papergym.llm.config import load_llm_config

    config = load_llm_config()
    kind = (
        kind
        or os.environ.get("PAPERGYM_REWARD_JUDGE")
        or ("llm" if config.configured else "offline")
    )
    if kind == "offline":
        from papergym.reward.offline import OfflineJudge

        return OfflineJudge()
    if kind == "llm":
        from papergym.llm.client import LLMClient
        from papergym.reward.judge import RubricJudge

        return RubricJudge(LLMClient.from_config(config))
    raise ValueError(f"PAPERGYM_REWARD_JUDGE must be 'offline' or 'llm', not {kind!r}")


def shared_reward() -> RubricReward:
    """The process's reward, built on first use from the environment."""
    global _reward
    with _lock:
        if _reward is None:
            alpha = float(os.environ.get("PAPERGYM_REWARD_ALPHA", "0.7"))
            _reward = RubricReward(make_judge(), alpha=alpha)
        return _reward


def set_shared_reward(reward: RubricReward | None) -> None:
    """Use ``reward`` in every adapter of this process (tests, or a custom judge)."""
    global _reward
    with _lock:
        _reward = reward
