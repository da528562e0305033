"""One embedding call for the documents in flight, instead of one call per document.

The runner keeps many documents in flight, and the offline ``domain`` step embeds each on a
worker thread (``in_thread``). Called one document at a time, MiniLM runs several small
``encode`` calls side by side, each paying its own overhead, and their threads compete for the
same cores. :class:`BatchingEmbedder` combines them: a caller that finds a free slot (``slots``,
default 2, calls at once) embeds everything waiting in one call of the wrapped embedder; callers
arriving meanwhile wait, and the next to find a free slot embeds everything that piled up.
Nothing waits on a timer, so a lone document is not slowed down. Two slots, not one: on a CPU
two calls side by side keep both cores busy while one of them tokenises.

On a CPU, MiniLM is compute-bound: batching leaves the work per document the same (measured in
``benchmarks/ares.py``, docs/ares.md); it is the per-call overhead on a GPU
(``PAPERGYM_EMBEDDER_DEVICE=cuda``), where one call of a document's few chunks leaves the device
mostly idle, that batching removes.

Each caller gets exactly the rows for its own texts, in order; a failure of the wrapped call is
raised in every caller of that batch.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from papergym.audit.overlap import Embedder

Vectors = npt.NDArray[np.float32]


@dataclass
class _Request:
    texts: list[str]
    vectors: Vectors | None = None
    error: BaseException | None = None
    taken: bool = False  # in a batch being embedded
    done: bool = False


@dataclass
class BatchingEmbedder:
    """An :data:`~papergym.audit.overlap.Embedder` that embeds concurrent callers' texts in one
    call of ``embedder`` (at most ``max_texts`` texts a call); thread-safe."""

    embedder: Embedder
    max_texts: int = 256
    slots: int = 2
    calls: int = 0  # calls of the wrapped embedder (for benchmarks and tests)
    _pending: list[_Request] = field(default_factory=list, repr=False)
    _running: int = field(default=0, repr=False)
    _cond: threading.Condition = field(default_factory=threading.Condition, repr=False)

    def __call__(self, texts: Sequence[str]) -> Vectors:
        request = _Request(list(texts))
        with self._cond:
            self._pending.append(request)
        while True:
            with self._cond:
                while not request.done and (request.taken or self._running >= self.slots):
                    self._cond.wait()
                if request.done:
                    break
                self._running += 1  # a free slot: this caller embeds what waits
                batch = self._take()
            self._embed(batch)
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def _take(self) -> list[_Request]:
        """The waiting requests, oldest first, up to ``max_texts`` texts (at least one)."""
        batch: list[_Request] = []
        size = 0
        while self._pending and (not batch or size + len(self._pending[0].texts) <= self.max_texts):
            request = self._pending.pop(0)
            request.taken = True
            batch.append(request)
            size += len(request.texts)
        return batch

    def _embed(self, batch: list[_Request]) -> None:
        try:
            vectors = self.embedder([t for r in batch for t in r.texts])
            start = 0
            for request in batch:
                request.vectors = vectors[start : start + len(request.texts)]
                start += len(request.texts)
        except BaseException as error:  # every caller of the batch learns of it
            for request in batch:
                request.error = error
        finally:
            with self._cond:
                self.calls += 1
                for request in batch:
                    request.done = True
                self._running -= 1
                self._cond.notify_all()
