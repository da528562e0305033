"""The process-wide reward the adapters share, and the event loop it runs on.

Trainers call reward functions from their own threads and loops; LLM clients, though, belong to
one event loop. So the adapters hand every judgement to one background loop per process, from
sync code (``run``) and from async code (``arun``) alike, and the reward is configured once, from
the environment:

- ``PAPERGYM_REWARD_JUDGE``: ``offline`` (default when no LLM is configured) or ``llm``;
- ``PAPERGYM_REWARD_ALPHA``: the specific/general mix (default 0.7);
- ``PAPERGYM_REWARD_MAX_ANSWER_CHARS``: longer answers are cut to this many characters before
  they are judged, and flagged (default 16000; ``0`` or ``none``: no limit);
- ``PAPERGYM_REWARD_CACHE_SIZE``: scores kept in memory, least recently used dropped first
  (default 4096; ``0``: no cache);
- the LLM layer's variables (``PAPERGYM_LLM_CONFIG``, ``PAPERGYM_BASE_URL``, ...) for the judge.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

from papergym.reward.reward import (
    DEFAULT_CACHE_SIZE,
    DEFAULT_MAX_ANSWER_CHARS,
    Judge,
    RubricReward,
)

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
            _reward = RubricReward(
                make_judge(),
                alpha=alpha,
                cache_size=_int_env("PAPERGYM_REWARD_CACHE_SIZE", DEFAULT_CACHE_SIZE) or 0,
                max_answer_chars=_int_env(
                    "PAPERGYM_REWARD_MAX_ANSWER_CHARS", DEFAULT_MAX_ANSWER_CHARS
                ),
            )
        return _reward


def _int_env(name: str, default: int) -> int | None:
    """A non-negative integer variable; unset means ``default``, ``0``/``none`` means None."""
    text = os.environ.get(name, "").strip().lower()
    if not text:
        return default
    if text == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {text!r}") from None
    if value < 0:
        raise ValueError(f"{name} must be 0 or more, not {value}")
    return value or None


def set_shared_reward(reward: RubricReward | None) -> None:
    """Use ``reward`` in every adapter of this process (tests, or a custom judge)."""
    global _reward
    with _lock:
        _reward = reward
