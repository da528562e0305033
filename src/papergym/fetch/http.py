"""A polite HTTP client for arXiv: one request at a time, a delay between requests, a
descriptive User-Agent, and bounded retries with exponential back-off on 503/429 (honouring
Retry-After) and on network errors. urllib from the standard library: no dependency to add.
"""

from __future__ import annotations

import email.utils
import http.client
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from papergym.fetch.settings import FetchSection

RETRIED_STATUSES = frozenset({429, 503})
CHUNK = 1 << 16
T = TypeVar("T")


class FetchError(Exception):
    """A request that failed for good (after its retries): ``reason`` is one line."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


class DiskError(Exception):
    """Writing a download failed (a full disk, say): the whole run stops, since every later
    download would fail the same way."""


@dataclass(frozen=True)
class Response:
    """A finished download: its HTTP headers that matter here, and the bytes it holds."""

    content_type: str
    size: int


class PoliteClient:
    """GETs against arXiv, never two at once and never closer than ``delay_s`` apart."""

    def __init__(
        self,
        settings: FetchSection,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.sleep = sleep
        self.clock = clock
        self.requests = 0
        self._last: float | None = None

    def get_text(self, url: str) -> str:
        """The body of ``url`` as text (API and OAI-PMH answers are small XML)."""
        return self._with_retries(url, _read_all).decode("utf-8", errors="replace")

    def download(self, url: str, target: Path) -> Response:
        """Stream ``url`` into ``target``; a body cut short is a :class:`FetchError` and a
        failed write a :class:`DiskError`, and either way ``target`` is removed."""
        try:
            return self._with_retries(url, lambda answer: _save(answer, target))
        except BaseException:
            target.unlink(missing_ok=True)
            raise

    def _with_retries(self, url: str, use: Callable[[http.client.HTTPResponse], T]) -> T:
        attempt = 0
        while True:
            self._wait_turn()
            try:
                with self._open(url) as answer:
                    return use(answer)
            except urllib.error.HTTPError as error:
                retry_after = _retry_after(error.headers.get("Retry-After"))
                if error.code not in RETRIED_STATUSES or attempt >= self.settings.max_retries:
                    raise FetchError(url, f"HTTP {error.code} {error.reason}") from None
            except (
                urllib.error.URLError,
                http.client.HTTPException,
                ConnectionError,
                TimeoutError,
            ) as error:
                # A refused connection is a server that is not there (a wrong --base-url, a
                # mirror down), not a busy one: waiting minutes for it helps nobody.
                if attempt >= self.settings.max_retries or _refused(error):
                    raise FetchError(url, _network_reason(error)) from None
                retry_after = None
            self.sleep(self._backoff(attempt, retry_after))
            attempt += 1

    def _open(self, url: str) -> http.client.HTTPResponse:
        request = urllib.request.Request(url, headers={"User-Agent": self.settings.user_agent})
        self.requests += 1
        answer: http.client.HTTPResponse = (
            urllib.request.urlopen(  # the settings allow http(s) only
                request, timeout=self.settings.timeout_s
            )
        )
        return answer

    def _wait_turn(self) -> None:
        """Sleep until ``delay_s`` has passed since the last request began."""
        now = self.clock()
        if self._last is not None:
            remaining = self.settings.delay_s - (now - self._last)
            if remaining > 0:
                self.sleep(remaining)
        self._last = self.clock()

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        doubled = self.settings.backoff_s * 2.0**attempt
        return min(max(doubled, retry_after or 0.0), self.settings.max_backoff_s)


def _read_all(answer: http.client.HTTPResponse) -> bytes:
    return answer.read()


def _save(answer: http.client.HTTPResponse, target: Path) -> Response:
    """Copy the body into ``target``, checking it arrived whole against Content-Length."""
    expected = answer.headers.get("Content-Length")
    try:
        handle = target.open("wb")
    except OSError as error:
        raise DiskError(f"cannot write {target}: {error.strerror or error}") from error
    with handle:
        size = _copy(answer, handle, target)
    if expected is not None and expected.isdigit() and int(expected) != size:
        raise http.client.IncompleteRead(b"", int(expected) - size)
    return Response(answer.headers.get("Content-Type", ""), size)


def _copy(answer: http.client.HTTPResponse, handle: BinaryIO, target: Path) -> int:
    """Network errors while reading propagate as they are (they are retried); an error while
    writing is a :class:`DiskError` (it is not)."""
    size = 0
    while chunk := answer.read(CHUNK):
        try:
            handle.write(chunk)
        except OSError as error:
            raise DiskError(f"cannot write {target}: {error.strerror or error}") from error
        size += len(chunk)
    try:
        handle.flush()
        os.fsync(handle.fileno())
    except OSError as error:
        raise DiskError(f"cannot write {target}: {error.strerror or error}") from error
    return size


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date (RFC 9110)."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _refused(error: Exception) -> bool:
    """Whether the connection was refused (nothing listens there)."""
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    return isinstance(reason, ConnectionRefusedError)


def _network_reason(error: Exception) -> str:
    if isinstance(error, http.client.IncompleteRead):
        return f"connection closed early ({error.expected} byte(s) missing)"
    if isinstance(error, urllib.error.URLError):
        return f"network error: {error.reason}"
    return f"network error: {type(error).__name__}: {error}"
