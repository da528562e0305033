"""Training configuration for scripts: the PaperGym configuration, loaded with ``--data``.

A training file names the model, the data, the LoRA settings and one block per stage (``opsd``,
``grpo``, ``sft``); ``stages`` lists the order ``papergym train pipeline`` runs them in, so the
ablations of SPEC §4 (GRPO→OPSD, either stage alone) are one override away::

    papergym train pipeline configs/qwen3-8b.yaml --data out stages='[grpo, opsd]'

The model, the loader and the override rules live in :mod:`papergym.settings` (one mechanism for
every command); this module gives training scripts, tests and benchmarks the concrete
configuration (:data:`TrainConfig`) and its loader. :mod:`papergym.train` itself never imports
it: its functions take any object of the shape :class:`papergym.train.config.TrainConfig`
describes. ``configs/`` holds the shipped files, each of which the tests load and validate.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from papergym.reward.settings import RewardSection
from papergym.settings.load import (
    Override,
    apply_overrides,
    config_yaml,
    flag,
    read_config_file,
    save_config,
)
from papergym.settings.load import load_config as _load
from papergym.settings.models import PaperGymConfig
from papergym.train.settings import (
    STAGES,
    DataSettings,
    GRPOSettings,
    LoraSettings,
    ModelSettings,
    OPSDSettings,
    SFTSettings,
    StageName,
    TinyModelSettings,
)

TrainConfig = PaperGymConfig
"""A training run's configuration is the PaperGym configuration (its other sections unused); it
has the shape :class:`papergym.train.config.TrainConfig` asks for."""
RewardSettings = RewardSection


def load_config(
    path: Path | None,
    overrides: Sequence[str | Override] | None = None,
    *,
    data: Path | None = None,
) -> TrainConfig:
    """Read ``path`` (YAML), apply ``overrides`` and ``--data``, and validate.

    Errors name the file, the override or the variable that set the offending key, in one line.
    """
    extra = list(overrides or [])
    if data is not None:
        extra.append(flag("data.build_dir", str(data), "--data"))
    return _load(path, extra)


__all__ = [
    "STAGES",
    "DataSettings",
    "GRPOSettings",
    "LoraSettings",
    "ModelSettings",
    "OPSDSettings",
    "RewardSettings",
    "SFTSettings",
    "StageName",
    "TinyModelSettings",
    "TrainConfig",
    "apply_overrides",
    "config_yaml",
    "load_config",
    "read_config_file",
    "save_config",
]
