"""The base of every configuration section: a frozen block whose unknown keys are errors.

Each package keeps the model of its own section beside its code (``reward/settings.py``,
``train/settings.py``, …) and receives it as an argument; :mod:`papergym.settings` only
composes the sections into one configuration, reads files and the environment, and resolves
overrides. A field's docstring is its description (pydantic's ``use_attribute_docstrings``):
``papergym config reference`` prints it, and the command line uses it as the flag's help.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import BaseModel, ConfigDict

from papergym.jsonl import write_text_atomic


class ConfigSection(BaseModel):
    """A frozen block of the configuration whose unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Resolvable(Protocol):
    """A configuration that can say itself as plain data (secrets masked)."""

    def resolved(self) -> dict[str, Any]: ...


CONFIG_FILE = "config.yaml"
"""The name of the resolved configuration every command saves in its output folder."""


def config_yaml(config: Resolvable) -> str:
    """The resolved configuration as YAML, secrets masked."""
    return yaml.safe_dump(config.resolved(), sort_keys=False, allow_unicode=True)


def save_config(folder: Path, config: Resolvable) -> Path:
    """Write ``folder/config.yaml`` (the resolved configuration, secrets masked); its path."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / CONFIG_FILE
    write_text_atomic(target, config_yaml(config))
    return target
