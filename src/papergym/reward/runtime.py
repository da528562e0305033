"""The process-wide reward the adapters share, and the event loop it runs on.

Trainers call reward functions from their own threads and loops; LLM clients, though, belong to
one event loop. So the adapters hand every judgement to one background loop per process, from
sync code (``run``) and from async code (``arun``) alike, and the reward is configured once per
process, from its :class:`~papergym.settings.PaperGymConfig` (the ``reward`` and ``llm``
sections). A ``papergym`` command sets it (:func:`set_shared_config`); a process another framework
started (verl's workers, OpenRLHF, a TRL script) reads the file ``$PAPERGYM_CONFIG`` names, over
the documented ``PAPERGYM_REWARD_*``/``PAPERGYM_*`` fallbacks (:mod:`papergym.settings.env`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from papergym.reward.reward import Judge, RubricReward

if TYPE_CHECKING:
    from papergym.llm.config import LLMConfig
    from papergym.llm.types import Role
    from papergym.settings.models import PaperGymConfig

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_reward: RubricReward | None = None
_config_lock = threading.Lock()
_config: PaperGymConfig | None = None


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


def process_config() -> PaperGymConfig:
    """This process's configuration: the one set by :func:`set_shared_config`, else the file
    ``$PAPERGYM_CONFIG`` names (with the ``PAPERGYM_*`` fallbacks beneath it), loaded once."""
    global _config
    with _config_lock:
        if _config is None:
            from papergym.settings import env, load_config

            _config = load_config(env.config_file())
        return _config


def set_shared_config(config: PaperGymConfig | None) -> None:
    """Make ``config`` this process's configuration (a command's, or None to reload); the
    shared reward is rebuilt from it on next use."""
    global _config, _reward
    with _config_lock:
        _config = config
    with _lock:
        _reward = None


def judge_llm_config(config: PaperGymConfig) -> LLMConfig:
    """The LLM configuration the judge uses: ``reward.llm_config``'s file, else ``llm``.

    The file says which model judges; where its answers are cached is the command's to say, as
    for every other LLM of the run. So the command's ``llm.cache=false`` (``--no-cache``)
    turns the judge's cache off too, and its ``llm.cache_dir`` (``--cache-dir``,
    ``$PAPERGYM_CACHE_DIR``) moves it; the file's own ``cache: false`` still holds, and its
    ``cache_dir`` is used where the command names none.
    """
    if config.reward.llm_config is None:
        return config.llm
    from papergym.llm.config import load_llm_config

    return load_llm_config(
        config.reward.llm_config,
        env={},
        no_cache=not config.llm.cache,
        cache_dir=config.llm.cache_dir,
    )


def judge_kind(config: PaperGymConfig) -> Literal["llm", "offline"]:
    """Which judge ``reward.judge`` names once ``auto`` is resolved."""
    kind = config.reward.judge
    if kind == "auto":
        return "llm" if judge_llm_config(config).configured else "offline"
    return kind


def check_reachable(config: LLMConfig, role: Role) -> None:
    """Refuse, in one line, an LLM endpoint of ``role`` that does not answer (a server must not
    say it is ready while every judgement would fail). A client of its own, closed after: the
    server's clients belong to the server's event loop."""
    from papergym.errors import BadInputError
    from papergym.llm.client import LLMClient
    from papergym.llm.types import LLMError
    from papergym.redact import redact

    async def ping() -> None:
        client = LLMClient(config)
        try:
            await client.ping([role])
        finally:
            await client.aclose()

    try:
        asyncio.run(ping())
    except LLMError as error:
        raise BadInputError(None, f"{role}: {redact(str(error).strip())}") from None


def make_judge(config: PaperGymConfig | None = None) -> Judge:
    """The judge ``config.reward`` names (default: :func:`process_config`'s)."""
    config = config or process_config()
    settings = config.reward
    llm = judge_llm_config(config)
    kind = judge_kind(config)
    if kind == "offline":
        from papergym.reward.offline import OfflineJudge

        return OfflineJudge(calibration=settings.calibration)
    from papergym.llm.client import LLMClient
    from papergym.reward.judge import RubricJudge

    per_call = settings.criteria_per_call
    return RubricJudge(
        LLMClient.from_config(llm),
        mode="all" if per_call == "all" else "one" if per_call == 1 else "k",
        k=per_call if isinstance(per_call, int) else 5,
        advisory_reference=settings.advisory_reference,
        general_reference=settings.general_reference,
    )


def make_reward(config: PaperGymConfig | None = None, judge: Judge | None = None) -> RubricReward:
    """The rubric reward ``config.reward`` describes (default: :func:`process_config`'s)."""
    config = config or process_config()
    settings = config.reward
    return RubricReward(
        judge or make_judge(config),
        alpha=settings.alpha,
        cache_size=settings.cache_size,
        max_answer_chars=settings.max_answer_chars or None,
        normalisation=settings.normalisation,
    )


def unscored_fallback() -> float:
    """The reward verl and OpenRLHF get for an unscored answer (``reward.unscored``)."""
    return process_config().reward.unscored


def shared_reward() -> RubricReward:
    """The process's reward, built on first use from :func:`process_config`."""
    global _reward
    config = process_config()
    with _lock:
        if _reward is None:
            _reward = make_reward(config)
        return _reward


def set_shared_reward(reward: RubricReward | None) -> None:
    """Use ``reward`` in every adapter of this process (tests, or a custom judge); None forgets
    the reward and the configuration, so both are read again on next use."""
    global _reward, _config
    if reward is None:
        with _config_lock:
            _config = None
    with _lock:
        _reward = reward
