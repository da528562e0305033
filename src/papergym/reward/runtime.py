"""The process-wide reward the adapters share, and the event loop it runs on.

Trainers call reward functions from their own threads and loops; LLM clients, though, belong to
one event loop. So the adapters hand every judgement to one background loop per process
(:mod:`papergym.adapters.loop`: ``run`` from sync code, ``arun`` from async code), and the
reward is configured once per process, from the ``reward`` and ``llm`` sections of its
configuration (:mod:`papergym.processconfig`). A ``papergym`` command sets it
(:func:`set_shared_config`); a process another framework started (verl's workers, OpenRLHF, a TRL
script) reads those two sections from the file ``$PAPERGYM_CONFIG`` names, over the documented
``PAPERGYM_REWARD_*``/``PAPERGYM_*`` fallbacks (:mod:`papergym.environment`).
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import ConfigDict

from papergym import processconfig
from papergym.adapters.loop import arun as arun
from papergym.adapters.loop import run as run
from papergym.configbase import ConfigSection
from papergym.llm.config import LLMConfig
from papergym.reward import factory
from papergym.reward.reward import Judge, RubricReward
from papergym.reward.settings import RewardSection

if TYPE_CHECKING:
    from papergym.llm.types import Role

_lock = threading.Lock()
_reward: RubricReward | None = None


class RewardConfig(Protocol):
    """What the reward is built from: a configuration's ``reward`` and ``llm`` sections (the
    whole :class:`~papergym.settings.PaperGymConfig` of a command has them)."""

    @property
    def reward(self) -> RewardSection: ...

    @property
    def llm(self) -> LLMConfig: ...


class RewardSections(ConfigSection):
    """The sections of ``$PAPERGYM_CONFIG`` the reward reads; the file's others are other
    commands' business."""

    model_config = ConfigDict(extra="ignore")
    reward: RewardSection = RewardSection()
    llm: LLMConfig = LLMConfig()


def process_config() -> RewardConfig:
    """This process's ``reward`` and ``llm`` sections: those of the configuration set by
    :func:`set_shared_config`, else of the file ``$PAPERGYM_CONFIG`` names (with the
    ``PAPERGYM_*`` fallbacks beneath it), read once."""
    return processconfig.sections(RewardSections)


def set_shared_config(config: RewardConfig | None) -> None:
    """Make ``config`` this process's configuration (a command's, or None to reload); the
    shared reward is rebuilt from it on next use."""
    global _reward
    processconfig.set_shared(config)
    with _lock:
        _reward = None


def judge_llm_config(config: RewardConfig) -> LLMConfig:
    """The LLM configuration the judge uses: ``reward.llm_config``'s file, else ``llm``."""
    return factory.judge_llm(config.reward, config.llm)


def judge_kind(config: RewardConfig) -> Literal["llm", "offline"]:
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


def make_judge(config: RewardConfig | None = None) -> Judge:
    """The judge ``config.reward`` names (default: :func:`process_config`'s)."""
    config = config or process_config()
    return factory.make_judge(config.reward, config.llm)


def make_reward(config: RewardConfig | None = None, judge: Judge | None = None) -> RubricReward:
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
    global _reward
    if reward is None:
        processconfig.set_shared(None)
    with _lock:
        _reward = reward
