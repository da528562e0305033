"""One configuration for every command: the sections composed into one typed model, read from a
YAML file, ``key=value`` overrides and the ``PAPERGYM_*`` variables.

Only the entry points (the command line, the reward adapters that other frameworks import, the
framework integrations) use this package; every other package is handed its own section.
"""

from __future__ import annotations

from papergym.settings.load import load_config, save_config
from papergym.settings.models import PaperGymConfig

__all__ = ["PaperGymConfig", "load_config", "save_config"]
