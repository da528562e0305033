"""The base of every configuration section: a frozen block whose unknown keys are errors.

Each package keeps the model of its own section beside its code (``reward/settings.py``,
``train/settings.py``, …) and receives it as an argument; :mod:`papergym.settings` only
composes the sections into one configuration, reads files and the environment, and resolves
overrides. A field's docstring is its description (pydantic's ``use_attribute_docstrings``):
``papergym config reference`` prints it, and the command line uses it as the flag's help.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ConfigSection(BaseModel):
    """A frozen block of the configuration whose unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
