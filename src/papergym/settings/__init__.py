"""One configuration for every command: a typed model, a YAML file, ``key=value`` overrides.

The package imports nothing eagerly: the LLM layer reads the environment through
:mod:`papergym.settings.env`, and the model imports the LLM layer's config, so ``env`` must be
importable without ``models``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from papergym.settings.load import load_config, save_config
    from papergym.settings.models import PaperGymConfig

__all__ = ["PaperGymConfig", "load_config", "save_config"]


def __getattr__(name: str) -> Any:
    if name in ("load_config", "save_config"):
        from papergym.settings import load

        return getattr(load, name)
    if name == "PaperGymConfig":
        from papergym.settings.models import PaperGymConfig

        return PaperGymConfig
    raise AttributeError(name)
