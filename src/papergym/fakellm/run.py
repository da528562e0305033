"""``papergym fake-llm`` as functions: :func:`fake_server` makes the server of the command's
options, :func:`serve` runs it until the process is told to stop.

Tests and benchmarks start :class:`~papergym.fakellm.server.FakeOpenAIServer` in a thread
themselves; these are for a server that is the whole process (the command line,
:mod:`papergym.cli.fake_llm`, prints its start and summary lines).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Literal

from papergym.errors import BadInputError
from papergym.fakellm.completions import Behaviour
from papergym.fakellm.server import FakeOpenAIServer

Answers = Literal["plausible", "schema"]


def behaviour(option: str, spec: str) -> Behaviour:
    """``spec`` read as a behaviour; a bad one is a one-line usage error naming the option."""
    try:
        return Behaviour.parse(spec)
    except ValueError as error:
        raise BadInputError(None, f"{option}: {error}") from None


def fake_server(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    model: str = "papergym-fake",
    latency: float = 0.0,
    mode: str = "ok",
    script: str = "",
    answers: Answers = "plausible",
    fail_rate: float = 0.0,
    fail_mode: str = "500",
    seed: int = 0,
    hang_seconds: float = 3600.0,
    log: Callable[[str], None] | None = None,
) -> FakeOpenAIServer:
    """The server the options describe, not started. Behaviours are spelled as on the command
    line (``--script`` "503,hang,ok", ``--mode``, ``--fail-mode``); a bad one is a
    :class:`~papergym.errors.BadInputError` naming its option. ``answers`` plausible draws the
    answers of PaperGym's prompts from their text; schema gives any prompt a value of its
    schema."""
    from papergym.fakellm.plausible import responder

    behaviours = [behaviour("--script", part) for part in script.split(",") if part.strip()]
    return FakeOpenAIServer(
        host=host,
        port=port,
        model=model,
        latency=latency,
        default=behaviour("--mode", mode),
        script=behaviours,
        responder=responder if answers == "plausible" else None,
        hang_seconds=hang_seconds,
        fail_rate=fail_rate,
        fail_behaviour=behaviour("--fail-mode", fail_mode),
        seed=seed,
        log=log,
    )


class _Stop(Exception):
    """Raised by the signal handlers to end the wait of the main thread."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def serve(server: FakeOpenAIServer, on_listening: Callable[[], None]) -> None:
    """Start ``server``, call ``on_listening``, and serve until SIGINT or SIGTERM (main thread
    only); then stop it. A shell starts background jobs with SIGINT ignored, and benchmarks stop
    servers with SIGTERM: both end the wait like Ctrl-C, so the caller's summary always follows.
    """
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    with server, contextlib.suppress(_Stop, KeyboardInterrupt):
        on_listening()
        threading.Event().wait()
