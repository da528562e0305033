"""What training needs of a configuration, and the section types it reads.

Training takes the sections of the one PaperGym configuration it uses (the model, LoRA, data, one
block per stage, the reward and its LLM, the held-out evaluation, the cycle's review and
writing). :class:`TrainConfig` names that shape, so the trainers receive the configuration as an
argument and never import :mod:`papergym.settings`; the concrete model is
:class:`papergym.settings.PaperGymConfig` (loaded for scripts by
:func:`papergym.settings.train.load_config`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

from papergym.configbase import config_yaml, save_config
from papergym.train.settings import (
    STAGES,
    CycleSettings,
    DataSettings,
    GRPOSettings,
    LoraSettings,
    ModelSettings,
    OPSDSettings,
    SFTSettings,
    StageName,
    TinyModelSettings,
    WatchSettings,
)

if TYPE_CHECKING:
    from papergym.eval.settings import EvalSection
    from papergym.llm.config import LLMConfig
    from papergym.review.settings import ReviewSection
    from papergym.reward.settings import RewardSection
    from papergym.write.settings import WriteSection


class TrainConfig(Protocol):
    """The sections a training run reads (read-only), as the PaperGym configuration has them."""

    @property
    def name(self) -> str: ...
    @property
    def output_dir(self) -> Path: ...
    @property
    def seed(self) -> int: ...
    @property
    def stages(self) -> list[StageName]: ...
    @property
    def llm(self) -> LLMConfig: ...
    @property
    def reward(self) -> RewardSection: ...
    @property
    def eval(self) -> EvalSection: ...
    @property
    def review(self) -> ReviewSection: ...
    @property
    def write(self) -> WriteSection: ...
    @property
    def model(self) -> ModelSettings: ...
    @property
    def lora(self) -> LoraSettings: ...
    @property
    def data(self) -> DataSettings: ...
    @property
    def opsd(self) -> OPSDSettings: ...
    @property
    def grpo(self) -> GRPOSettings: ...
    @property
    def sft(self) -> SFTSettings: ...
    @property
    def cycle(self) -> CycleSettings: ...
    @property
    def watch(self) -> WatchSettings: ...

    def resolved(self) -> dict[str, Any]:
        """The configuration as plain YAML-able data, secrets masked."""
        ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update``'s keys replaced (pydantic's)."""
        ...


__all__ = [
    "STAGES",
    "DataSettings",
    "GRPOSettings",
    "LoraSettings",
    "ModelSettings",
    "OPSDSettings",
    "SFTSettings",
    "StageName",
    "TinyModelSettings",
    "TrainConfig",
    "WatchSettings",
    "config_yaml",
    "save_config",
]
