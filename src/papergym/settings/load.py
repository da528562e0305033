"""Loading :class:`PaperGymConfig`: a YAML file plus ``key.sub=value`` overrides, over the
``PAPERGYM_*`` variables, with the precedence and the one-line errors of
:mod:`papergym.configload` (which reads any configuration model; this is the whole one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from papergym.configbase import CONFIG_FILE as CONFIG_FILE
from papergym.configbase import config_yaml as config_yaml
from papergym.configbase import save_config as save_config
from papergym.configload import Override as Override
from papergym.configload import apply_overrides as apply_overrides
from papergym.configload import deep_merge as deep_merge
from papergym.configload import flag as flag
from papergym.configload import is_override as is_override
from papergym.configload import load_model
from papergym.configload import model_of as model_of
from papergym.configload import parse_override as parse_override
from papergym.configload import read_config_file as read_config_file
from papergym.configload import split_arguments as split_arguments
from papergym.settings.models import PaperGymConfig


def load_config(
    path: Path | None = None,
    overrides: Sequence[str | Override] = (),
    *,
    env: Mapping[str, str] | None = None,
) -> PaperGymConfig:
    """The configuration of ``path`` (YAML, optional) and ``overrides``, over the variables.

    ``overrides`` are ``key=value`` texts or :func:`flag` records, applied in order (a later one
    wins). ``env`` replaces the process environment (tests).
    """
    return load_model(PaperGymConfig, path, overrides, env=env)
