"""The process-wide reward the adapters share, and the event loop it runs on.

Trainers call reward functions from their own threads and loops; LLM clients, though, belong to
one event loop. So the adapters hand every judgement to one background loop per process
(:mod:`papergym.adapters.loop`: ``run`` from sync code, ``arun`` from async code), and the
reward is configured once per process, from its :class:`~papergym.settings.PaperGymConfig` (the ``reward`` and ``llm``
sections). A ``papergym`` command sets it (:func:`set_shared_config`); a process another framework
started (verl's workers, OpenRLHF, a TRL script) reads the file ``$PAPERGYM_CONFIG`` names, over
the documented ``PAPERGYM_REWARD_*``/``PAPERGYM_*`` fallbacks (:mod:`papergym.environment`).
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Literal

from papergym.adapters.loop import arun as arun
from papergym.adapters.loop import run as run
from papergym.reward import factory
from papergym.reward.reward import Judge, RubricReward

if TYPE_CHECKING:
    from papergym.llm.config import LLMConfig
    from papergym.llm.types import Role
    from papergym.settings.models import PaperGymConfig

_lock = threading.Lock()
_reward: RubricReward | None = None
_config_lock = threading.Lock()
_config: PaperGymConfig | None = None


def process_config() -> PaperGymConfig:
    """This process's configuration: the one set by :func:`set_shared_config`, else the file
    ``$PAPERGYM_CONFIG`` names (with the ``PAPERGYM_*`` fallbacks beneath it), loaded once."""
    global _config
    with _config_lock:
        if _config is None:
            from papergym import environment as env
            from papergym.settings import load_config

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
    """The LLM configuration the judge uses: ``reward.llm_config``'s file, else ``llm``."""
    return factory.judge_llm(config.reward, config.llm)


def judge_kind(config: PaperGymConfig) -> Literal["llm", "offline"]:
    """Which judge ``reward.judge`` names once ``auto`` is resolved."""
    return factory.judge_kind(config.reward, config.llm)


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
    return factory.make_judge(config.reward, config.llm)


def make_reward(config: PaperGymConfig | None = None, judge: Judge | None = None) -> RubricReward:
    """The rubric reward ``config.reward`` describes (default: :func:`process_config`'s)."""
    config = config or process_config()
    return factory.make_reward(config.reward, config.llm, judge)


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
