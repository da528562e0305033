"""What the LLM benchmarks share: ``papergym fake-llm`` in its own process, the bare SDK call
they measure the LLM layer against, and the open-files limit lift.

Used by ``benchmarks/eval.py`` and ``benchmarks/llm_throughput.py`` (run as scripts, so this
module is imported as ``fake_server`` from the scripts' folder).
"""

from __future__ import annotations

import asyncio
import os
import re
import resource
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai

from papergym.llm.types import Message

SERVER_START_TIMEOUT_S = 60.0


class ServerProcess:
    """``papergym fake-llm --answers ANSWERS`` on ``port`` (0: a free one), stopped with SIGTERM."""

    def __init__(self, latency: float, log: Path, answers: str, port: int = 0) -> None:
        self._log = log.open("w")
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "papergym.cli", "fake-llm", "--answers", answers),
                *("--port", str(port), "--latency", str(latency)),
            ],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline()
        found = re.search(r"(http://\S+/v1)", first)
        if found is None:
            self.process.kill()
            raise RuntimeError(f"fake server did not start: {first!r} (see {log})")
        self.base_url = found.group(1)
        self.served = self.max_in_flight = -1
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        health = self.base_url.removesuffix("/v1") + "/health"
        while True:
            try:
                with urllib.request.urlopen(health, timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"fake server at {health} never became healthy") from None
                time.sleep(0.05)

    def cpu_seconds(self) -> float | None:
        """The server process's user+system CPU so far (Linux ``/proc``; None elsewhere)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """SIGTERM, then read the summary line: chat requests served and max in flight."""
        self.process.send_signal(signal.SIGTERM)
        out, _ = self.process.communicate(timeout=30)
        self._log.close()
        found = re.search(r"served (\d+) chat requests, max in flight (\d+)", out)
        if found is None:
            raise RuntimeError(f"no summary from the fake server: {out!r}")
        self.served, self.max_in_flight = int(found.group(1)), int(found.group(2))


@contextmanager
def fake_server(latency: float, log: Path, answers: str, port: int = 0) -> Iterator[ServerProcess]:
    """A fresh fake server for one client's run, stopped (and its counts read) at the end.

    ``port`` 0 takes a free one; a re-run that should hit the cache passes the earlier server's
    port, since the cache key holds the endpoint."""
    server = ServerProcess(latency, log, answers, port)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


async def bare_chat(
    client: openai.AsyncOpenAI,
    gate: asyncio.Semaphore,
    model: str,
    messages: Sequence[Message],
    temperature: float,
    max_tokens: int,
    response_format: Any = None,
) -> str:
    """The bare SDK call the LLM layer is measured against: a semaphore around
    ``chat.completions.create``, no validation, no cache, no accounting."""
    extra: dict[str, Any] = {} if response_format is None else {"response_format": response_format}
    async with gate:
        response = await client.chat.completions.create(
            model=model,
            messages=[{"role": m.role, "content": m.content} for m in messages],  # type: ignore[misc]
            temperature=temperature,
            max_tokens=max_tokens,
            **extra,
        )
    return response.choices[0].message.content or ""


def raise_open_files_limit() -> int:
    """Lift the soft open-files limit to the hard one (each in-flight request holds sockets)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return int(soft)
