"""The configuration of this process, read by each package as the sections it needs.

A ``papergym`` command hands its whole configuration to :func:`set_shared`; a process another
framework started (verl's workers, OpenRLHF, a TRL script) has none, so each reader loads its
own sections from the file ``$PAPERGYM_CONFIG`` names, over the ``PAPERGYM_*`` variables
(:mod:`papergym.environment`). A reader names its sections as a model (the reward's ``reward``
and ``llm``, the reviewer's ``review`` and ``llm``) whose other keys are ignored, so the reward
adapters import neither :mod:`papergym.settings` nor any section but their own.
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from pydantic import BaseModel

from papergym import environment
from papergym.configload import load_model

Sections = TypeVar("Sections", bound=BaseModel)

_lock = threading.Lock()
_shared: object | None = None
_read: dict[type[BaseModel], Any] = {}


def set_shared(config: object | None) -> None:
    """Make ``config`` (a command's whole configuration; None: the file again) this process's."""
    global _shared
    with _lock:
        _shared = config
        _read.clear()


def sections(model: type[Sections]) -> Sections:
    """This process's configuration as ``model``: the shared one's attributes of ``model``'s
    fields, else ``$PAPERGYM_CONFIG``'s (over the variables), read once per model."""
    with _lock:
        if model not in _read:
            if _shared is not None:
                _read[model] = model.model_validate(_shared, from_attributes=True)
            else:
                _read[model] = load_model(model, environment.config_file())
        found: Sections = _read[model]
        return found
