"""A content-addressed SQLite cache of model answers, safe to share between processes.

Re-running a pipeline should not pay twice for the same question. The key is a hash of what
determines the answer, so a hit is only ever the answer to the very same request.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from papergym.llm.types import Completion, JSONSchema, Message, SamplingParams

KEY_VERSION = 1
"""Bumped when what goes into a key changes, so old entries stop matching instead of lying."""

BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another process's write before giving up."""


def cache_key(
    *,
    model: str,
    messages: Sequence[Message],
    schema: JSONSchema | None,
    params: SamplingParams,
    sample_index: int,
    backend: str = "",
) -> str:
    """The sha256 of a canonical JSON of everything that determines the answer.

    There is deliberately no endpoint URL or API key here: the same model behind two URLs (a
    local vLLM and a hosted copy, a second replica) answers the same, and keys are secrets that
    must never reach a file. ``backend`` is the backend's kind (say ``"openai"``), not its address.
    """
    payload: dict[str, Any] = {
        "version": KEY_VERSION,
        "backend": backend,
        "model": model,
        "messages": [message.model_dump(mode="json") for message in messages],
        "schema": schema,
        "params": params.model_dump(mode="json"),
        "sample_index": sample_index,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def default_cache_dir() -> Path:
    """``$PAPERGYM_CACHE_DIR`` when set, else ``~/.cache/papergym``."""
    configured = os.environ.get("PAPERGYM_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "papergym"


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


class ResponseCache:
    """Completions by :func:`cache_key`, in one SQLite file that several processes may share.

    WAL journaling lets readers run beside a writer, and the busy timeout makes concurrent
    writers wait their turn instead of failing. Within a process one connection is shared by
    all threads behind a lock (``asyncio.to_thread`` runs calls on several), and a process that
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
        connection = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:  # switching to WAL can report busy at once, without waiting: retry
            try:
                connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("PRAGMA synchronous = NORMAL")
                connection.execute(_SCHEMA)
                break
            except sqlite3.OperationalError as error:
                if not _is_busy(error) or time.monotonic() > deadline:
                    connection.close()
                    raise
                time.sleep(0.05)
        self._connection, self._pid = connection, os.getpid()
        return connection

    def get(self, key: str) -> Completion | None:
        """The cached completion for ``key``; None when absent or unreadable (a stale format)."""
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
        """:meth:`get` on a worker thread, so the event loop keeps running meanwhile."""
        return await asyncio.to_thread(self.get, key)

    async def aput(self, key: str, completion: Completion) -> None:
        """:meth:`put` on a worker thread, so the event loop keeps running meanwhile."""
        await asyncio.to_thread(self.put, key, completion)

    def __len__(self) -> int:
        with self._lock:
            row = self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the connection; later calls raise. Closing twice is harmless."""
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
