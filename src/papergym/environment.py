"""The one place PaperGym reads environment variables: documented fallbacks, never written.

A command's configuration comes from, strongest first: its ``key=value`` overrides and flags,
its config file (``-c``), these variables, then the defaults of
:class:`papergym.settings.PaperGymConfig`. Variables that only fill config keys:

==================================== ===================================================
``PAPERGYM_CONFIG``                  the config file of processes started by another framework
                                     (verl, OpenRLHF, TRL), which cannot pass ``-c``
``PAPERGYM_LLM_CONFIG``              an LLM YAML file for ``llm`` (when the config gives none)
``PAPERGYM_BASE_URL``                ``llm.default.base_url``
``PAPERGYM_MODEL``                   ``llm.default.model``
``PAPERGYM_API_KEY_ENV``             ``llm.default.api_key_env``
``PAPERGYM_CACHE_DIR``               ``llm.cache_dir``
``PAPERGYM_REWARD_JUDGE``            ``reward.judge``
``PAPERGYM_REWARD_ALPHA``            ``reward.alpha``
``PAPERGYM_REWARD_MAX_ANSWER_CHARS`` ``reward.max_answer_chars`` (``none``: 0, no limit)
``PAPERGYM_REWARD_CACHE_SIZE``       ``reward.cache_size``
``PAPERGYM_REWARD_UNSCORED``         ``reward.unscored``
==================================== ===================================================

Besides these, three kinds of variable are read here on behalf of other modules: secrets whose
*name* the config holds (``llm.*.api_key_env``, ``serve.token_env``), the embedding model's
location and device (``PAPERGYM_EMBEDDER``, ``PAPERGYM_EMBEDDER_DEVICE``: where a model file is,
not how PaperGym behaves), and the terminal's ``COLUMNS``. Libraries' own variables
(``HF_HUB_OFFLINE``, ``CUDA_VISIBLE_DEVICES``) are read by those libraries, not by PaperGym.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PREFIX = "PAPERGYM_"
CONFIG = "PAPERGYM_CONFIG"
LLM_CONFIG = "PAPERGYM_LLM_CONFIG"

# variable → dotted config key it falls back for (the LLM file aside: it fills a whole section)
KEYS: dict[str, str] = {
    "PAPERGYM_BASE_URL": "llm.default.base_url",
    "PAPERGYM_MODEL": "llm.default.model",
    "PAPERGYM_API_KEY_ENV": "llm.default.api_key_env",
    "PAPERGYM_CACHE_DIR": "llm.cache_dir",
    "PAPERGYM_REWARD_JUDGE": "reward.judge",
    "PAPERGYM_REWARD_ALPHA": "reward.alpha",
    "PAPERGYM_REWARD_MAX_ANSWER_CHARS": "reward.max_answer_chars",
    "PAPERGYM_REWARD_CACHE_SIZE": "reward.cache_size",
    "PAPERGYM_REWARD_UNSCORED": "reward.unscored",
}


def environ() -> Mapping[str, str]:
    """The process environment, read-only (a mapping, so callers cannot write it back)."""
    return os.environ


def get(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value of ``name`` stripped, or None when unset or blank."""
    value = (environ() if env is None else env).get(name, "").strip()
    return value or None


def config_file(env: Mapping[str, str] | None = None) -> Path | None:
    """``$PAPERGYM_CONFIG``: the config file the reward adapters read."""
    value = get(CONFIG, env)
    return Path(value).expanduser() if value else None


def llm_config_file(env: Mapping[str, str] | None = None) -> Path | None:
    """``$PAPERGYM_LLM_CONFIG``: an LLM YAML file used for ``llm`` when nothing else gives it."""
    value = get(LLM_CONFIG, env)
    return Path(value).expanduser() if value else None


def fallbacks(env: Mapping[str, str] | None = None) -> list[tuple[str, str, Any]]:
    """(variable, dotted key, value) for each set variable of :data:`KEYS`, in table order.

    Values are text, validated by the config model like any YAML value; ``none`` for the answer
    limit keeps its old meaning (no limit).
    """
    found: list[tuple[str, str, Any]] = []
    for name, key in KEYS.items():
        value: Any = get(name, env)
        if value is None:
            continue
        if name == "PAPERGYM_REWARD_MAX_ANSWER_CHARS" and value.lower() == "none":
            value = 0
        found.append((name, key, value))
    return found


def secret(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value of the variable a config key names (an API key, a bearer token)."""
    return get(name, env)


def embedder() -> str | None:
    """``$PAPERGYM_EMBEDDER``: another location (folder or hub name) of the embedding model."""
    return get("PAPERGYM_EMBEDDER")


def embedder_device() -> str:
    """``$PAPERGYM_EMBEDDER_DEVICE``: the torch device of the embedding model (default cpu)."""
    return get("PAPERGYM_EMBEDDER_DEVICE") or "cpu"


def terminal_columns_set() -> bool:
    """Whether ``$COLUMNS`` is set (the terminal's width, for rich's consoles)."""
    return "COLUMNS" in environ()


def prefixed(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every ``PAPERGYM_*`` variable, for handing on to worker processes (verl's Ray workers)."""
    source = environ() if env is None else env
    return {key: value for key, value in source.items() if key.startswith(PREFIX)}
