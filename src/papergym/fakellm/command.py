"""``papergym fake-llm``: a fake OpenAI-compatible endpoint for dry runs and fault testing."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from types import FrameType
from typing import Annotated, Literal

import typer

from papergym.cliutil import DebugOption, reports_errors
from papergym.errors import BadInputError
from papergym.fakellm.completions import Behaviour

FAKE_LLM_EPILOG = """\b
Examples (a dry run of the LLM recipe, then a server that is slow and rate-limits 20%):
  papergym fake-llm --port 8001 &
  papergym build examples/papers -o out --base-url http://127.0.0.1:8001/v1 --model fake
  papergym build examples/corpus --recipe ares -o out-ares --base-url http://127.0.0.1:8001/v1 --model fake
  papergym fake-llm --port 8001 --latency 0.5 --fail-rate 0.2 --fail-mode 429 --log

A behaviour (--mode, --fail-mode, --script) is an HTTP status (429 adds Retry-After: 0) or one of: ok, error (500), hang (no answer until the client gives up), drop (the connection is closed without an answer), malformed (JSON cut before its closing bracket), truncated (half the content, finish_reason "length"), think (<think>...</think> before the content), fence (a ```json fence), prose (a sentence before the content).

Endpoints: POST /v1/chat/completions (stream=true is answered 400), GET /v1/models, GET /health. The start line (stdout) says where it listens; Ctrl-C or SIGTERM stops it (exit 0) after a summary line: chat requests served and the most in flight at once."""


class _Stop(Exception):
    """Raised by the signal handlers to end the wait of the main thread."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _behaviour(option: str, spec: str) -> Behaviour:
    """``spec`` read as a behaviour; a bad one is a one-line usage error naming the option."""
    try:
        return Behaviour.parse(spec)
    except ValueError as error:
        raise BadInputError(None, f"{option}: {error}") from None


@reports_errors
def fake_llm(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            help="Port to listen on (0: any free port, shown in the start line).",
        ),
    ] = 8000,
    model: Annotated[
        str, typer.Option("--model", help="The model id GET /v1/models lists (any is accepted).")
    ] = "papergym-fake",
    latency: Annotated[
        float,
        typer.Option(
            "--latency",
            min=0.0,
            help="Seconds each answer waits before it is sent (requests wait concurrently).",
        ),
    ] = 0.0,
    fail_rate: Annotated[
        float,
        typer.Option(
            "--fail-rate",
            min=0.0,
            max=1.0,
            help="Probability that a chat request gets --fail-mode instead of an answer.",
        ),
    ] = 0.0,
    fail_mode: Annotated[
        str,
        typer.Option(
            "--fail-mode",
            help="What a failed request gets: a status code or a behaviour (see below).",
        ),
    ] = "500",
    mode: Annotated[
        str,
        typer.Option("--mode", help="What every request gets when no fault applies (see below)."),
    ] = "ok",
    script: Annotated[
        str,
        typer.Option(
            "--script",
            help="Comma-separated behaviours for the first requests, in order, before --mode "
            "and --fail-rate apply, e.g. 503,hang,ok.",
        ),
    ] = "",
    answers: Annotated[
        Literal["plausible", "schema"],
        typer.Option(
            "--answers",
            help="plausible: answer PaperGym's prompts from the text they carry, so that a build "
            "(papers, or --recipe ares on a corpus) yields instances, review gives reviews on the "
            "venue's scale, write writes a paper citing the .bib's keys and the rubric judge "
            "gives one verdict per criterion, met when the answer covers it (other prompts get "
            "schema-true answers); schema: a "
            "deterministic value of the requested JSON schema for every prompt.",
        ),
    ] = "plausible",
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the --fail-rate draws (same seed, same faults).")
    ] = 0,
    hang_seconds: Annotated[
        float,
        typer.Option(
            "--hang-seconds",
            min=0.0,
            help="How long a hung request (or a cut-off body) waits for its client to give up.",
        ),
    ] = 3600.0,
    log: Annotated[
        bool,
        typer.Option(
            "--log",
            help="Print one line per HTTP request on stderr: client, method, path, status or "
            "what happened (dropped, abandoned), behaviour, seconds.",
        ),
    ] = False,
    debug: DebugOption = False,
) -> None:
    """Serve a fake OpenAI-compatible LLM: dry runs of the LLM recipe, and faults on demand.

    No GPU, no key, no network: answers follow the JSON schema each request asks for and, for
    PaperGym's prompts, are drawn from the paper text in the prompt, so `papergym build ...
    --base-url http://127.0.0.1:PORT/v1 --model fake` yields instances. Latency and faults
    (status errors, hangs, dropped connections, malformed or truncated answers) test a
    pipeline's retries and timeouts.
    """
    from papergym.fakellm.plausible import responder
    from papergym.fakellm.server import FakeOpenAIServer

    behaviours = [_behaviour("--script", part) for part in script.split(",") if part.strip()]
    printer = None
    if log:

        def printer(line: str) -> None:
            print(line, file=sys.stderr, flush=True)

    server = FakeOpenAIServer(
        host=host,
        port=port,
        model=model,
        latency=latency,
        default=_behaviour("--mode", mode),
        script=behaviours,
        responder=responder if answers == "plausible" else None,
        hang_seconds=hang_seconds,
        fail_rate=fail_rate,
        fail_behaviour=_behaviour("--fail-mode", fail_mode),
        seed=seed,
        log=printer,
    )
    # A shell starts background jobs with SIGINT ignored, and benchmarks stop servers with
    # SIGTERM: both end the wait below like Ctrl-C, so the summary is always printed.
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    with server, contextlib.suppress(_Stop, KeyboardInterrupt):
        faults = f", fail rate {fail_rate:g} ({fail_mode})" if fail_rate else ""
        print(
            f"papergym fake-llm listening on {server.base_url} (model {model}, answers {answers}, "
            f"latency {latency:g} s{faults}); Ctrl-C to stop",
            flush=True,
        )
        threading.Event().wait()
    print(
        f"served {server.request_count} chat requests, max in flight {server.max_in_flight}",
        flush=True,
    )
