"""A content-addressed SQLite cache of model answers, safe to share between processes.

Re-running a pipeline should not pay twice for the same question. The key is a hash of what
determines the answer, so a hit is only ever the answer to the very same request.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from papergym.llm.types import Completion, JSONSchema, Message, SamplingParams

KEY_VERSION = 2
"""Bumped when what goes into a key changes, so old entries stop matching instead of lying.

2: the backend's identity (endpoints, local weights, decoding settings) replaced the bare
model name and backend kind, which let two servers serving the same model name share answers.
"""

BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another process's write before giving up."""


def cache_key(
    *,
    backend: Mapping[str, Any],
    messages: Sequence[Message],
    schema: JSONSchema | None,
    params: SamplingParams,
    sample_index: int,
) -> str:
    """The sha256 of a canonical JSON of everything that determines the answer.

    ``backend`` is :func:`~papergym.llm.identity.backend_identity`: which model answers, by name
    *and* where it is served (the normalised endpoints of an HTTP backend, the weights of a
    local one), since one name behind two servers can be two models. Credentials never enter
    it (URL userinfo and key-bearing query parameters are stripped; the API key is not read),
    and only the digest is stored.
    """
    payload: dict[str, Any] = {
        "version": KEY_VERSION,
        "backend": dict(backend),
        "messages": [message.model_dump(mode="json") for message in messages],
        "schema": schema,
        "params": params.model_dump(mode="json"),
        "sample_index": sample_index,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def default_cache_dir() -> Path:
    """``$PAPERGYM_CACHE_DIR`` when set, else ``~/.cache/papergym``."""
    from papergym.settings.env import get

    configured = get("PAPERGYM_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "papergym"


logger = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT,
    created REAL,
    completion TEXT
)
"""


def _is_busy(error: sqlite3.OperationalError) -> bool:
    message = str(error).lower()
    return "locked" in message or "busy" in message


def _open(path: Path) -> sqlite3.Connection:
    """A connection in WAL mode with a busy timeout, the table created."""
    connection = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:  # switching to WAL can report busy at once, without waiting: retry
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute(_SCHEMA)
            return connection
        except sqlite3.OperationalError as error:
            if not _is_busy(error) or time.monotonic() > deadline:
                connection.close()
                raise
            time.sleep(0.05)


class ResponseCache:
    """Completions by :func:`cache_key`, in one SQLite file that several processes may share.

    WAL journaling lets readers run beside a writer, and the busy timeout makes concurrent
    writers wait their turn instead of failing. Within a process one connection is shared by
    all threads behind a lock; queued writes go through a writer thread with its own connection
    (see :meth:`aput`); and a process that
    was forked opens its own, since an SQLite connection must not cross a fork.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = -1
        self._inherited: list[sqlite3.Connection] = []
        self._closed = False
        self._pending: dict[str, Completion] = {}
        self._writer_thread: _BatchWriter | None = None
        with self._lock:
            self._connect()

    def _connect(self) -> sqlite3.Connection:
        """The open connection for this process (the lock is held by the caller)."""
        if self._closed:
            raise ValueError(f"the response cache {self.path} is closed")
        if self._connection is not None and self._pid == os.getpid():
            return self._connection
        if self._connection is not None:  # inherited through fork: never touch, never close it
            self._inherited.append(self._connection)
        connection = _open(self.path)
        self._connection, self._pid = connection, os.getpid()
        return connection

    def get(self, key: str) -> Completion | None:
        """The cached completion for ``key``; None when absent or unreadable (a stale format)."""
        pending = self._pending.get(key)
        if pending is not None:  # queued by aput, not written yet
            return pending
        with self._lock:
            row = (
                self._connect()
                .execute("SELECT completion FROM responses WHERE key = ?", (key,))
                .fetchone()
            )
        if row is None:
            return None
        try:
            return Completion.model_validate_json(row[0])
        except ValidationError:
            return None

    def put(self, key: str, completion: Completion) -> None:
        """Store ``completion`` under ``key``, replacing any earlier one; the caller decides what."""
        with self._lock:
            self._connect().execute(
                "INSERT OR REPLACE INTO responses (key, model, created, completion) "
                "VALUES (?, ?, ?, ?)",
                (key, completion.model, time.time(), completion.model_dump_json()),
            )

    async def aget(self, key: str) -> Completion | None:
        """:meth:`get` for async callers, answered inline.

        A primary-key read takes microseconds and, under WAL, never waits for a writer, so a
        thread hop (which costs more than the read) would only slow a busy event loop down.
        Answers still queued for writing are found too.
        """
        return self.get(key)

    async def aput(self, key: str, completion: Completion) -> None:
        """Queue ``completion`` for the background writer and return at once.

        One writer thread commits queued answers in batches, so a busy run pays neither a
        thread hop per answer nor one transaction per answer, and the event loop never waits
        on another process holding the write lock. :meth:`flush` and :meth:`close` wait for it.
        """
        self._pending[key] = completion
        self._writer().submit(key, completion)

    def flush(self) -> None:
        """Wait until every queued answer is written."""
        if self._writer_thread is not None and self._writer_thread.pid == os.getpid():
            self._writer_thread.queue.join()

    def _writer(self) -> _BatchWriter:
        if self._closed:
            raise ValueError(f"the response cache {self.path} is closed")
        if self._writer_thread is None or self._writer_thread.pid != os.getpid():
            self._writer_thread = _BatchWriter(self)  # none yet, or the parent's before a fork
        return self._writer_thread

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            row = self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Write what is queued, close the connection; later calls raise. Closing twice is harmless."""
        if self._writer_thread is not None and self._writer_thread.pid == os.getpid():
            self._writer_thread.stop()
        self._writer_thread = None
        with self._lock:
            if self._connection is not None and self._pid == os.getpid():
                self._connection.close()
            self._connection = None
            self._closed = True

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class _BatchWriter:
    """A daemon thread that writes queued answers, many per transaction."""

    batch_size = 256

    def __init__(self, cache: ResponseCache) -> None:
        self.cache = cache
        self.pid = os.getpid()
        self.queue: queue.Queue[tuple[str, Completion] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="papergym-cache-writer", daemon=True)
        self.thread.start()

    def submit(self, key: str, completion: Completion) -> None:
        self.queue.put((key, completion))

    def stop(self) -> None:
        self.queue.put(None)
        self.thread.join()

    def _run(self) -> None:
        # Its own connection: a write waiting on another process's lock must never hold up
        # the reads the event loop makes through the cache's connection.
        connection = _open(self.cache.path)
        try:
            while True:
                first = self.queue.get()
                batch = [first]
                while len(batch) < self.batch_size and not self.queue.empty():
                    batch.append(self.queue.get_nowait())
                items = [item for item in batch if item is not None]
                if items:
                    self._write(connection, items)
                for _ in batch:
                    self.queue.task_done()
                if None in batch:
                    return
        finally:
            connection.close()

    def _write(self, connection: sqlite3.Connection, items: list[tuple[str, Completion]]) -> None:
        rows = [(key, c.model, time.time(), c.model_dump_json()) for key, c in items]
        try:
            connection.execute("BEGIN IMMEDIATE")
            connection.executemany(
                "INSERT OR REPLACE INTO responses (key, model, created, completion) "
                "VALUES (?, ?, ?, ?)",
                rows,
            )
            connection.execute("COMMIT")
        except sqlite3.Error as error:  # a lost cache write costs a repeated call, not a result
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            logger.warning(
                "response cache %s: %d answers not written: %s", self.cache.path, len(rows), error
            )
        finally:
            for key, completion in items:
                if self.cache._pending.get(key) is completion:
                    del self.cache._pending[key]
