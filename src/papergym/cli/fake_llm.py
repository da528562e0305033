"""``papergym fake-llm``: a fake OpenAI-compatible endpoint for dry runs and fault testing (the
server is :func:`papergym.fakellm.run.fake_server`, run by :func:`papergym.fakellm.run.serve`)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from papergym.cli.common import DebugOption, reports_errors
from papergym.cli.groups import single_app
from papergym.fakellm.run import Answers, fake_server, serve

app = single_app()

FAKE_LLM_EPILOG = """\b
Examples (a dry run of the LLM recipe, then a server that is slow and rate-limits 20%):
  papergym fake-llm --port 8001 &
  papergym build examples/papers -o out --base-url http://127.0.0.1:8001/v1 --model fake
  papergym build examples/corpus --recipe ares -o out-ares --base-url http://127.0.0.1:8001/v1 --model fake
  papergym fake-llm --port 8001 --latency 0.5 --fail-rate 0.2 --fail-mode 429 --log

A behaviour (--mode, --fail-mode, --script) is an HTTP status (429 adds Retry-After: 0) or one of: ok, error (500), hang (no answer until the client gives up), drop (the connection is closed without an answer), malformed (JSON cut before its closing bracket), truncated (half the content, finish_reason "length"), think (<think>...</think> before the content), fence (a ```json fence), prose (a sentence before the content).

Endpoints: POST /v1/chat/completions (stream=true is answered 400), GET /v1/models, GET /health. The start line (stdout) says where it listens; Ctrl-C or SIGTERM stops it (exit 0) after a summary line: chat requests served and the most in flight at once."""

HostOption = Annotated[
    str, typer.Option("--host", help="Address to listen on (0.0.0.0: every interface).")
]
PortOption = Annotated[
    int,
    typer.Option(
        "--port",
        min=0,
        max=65535,
        help="Port to listen on (0: any free port, shown in the start line).",
    ),
]
ModelOption = Annotated[
    str, typer.Option("--model", help="The model id GET /v1/models lists (any is accepted).")
]
LatencyOption = Annotated[
    float,
    typer.Option(
        "--latency",
        min=0.0,
        help="Seconds each answer waits before it is sent (requests wait concurrently).",
    ),
]
FailRateOption = Annotated[
    float,
    typer.Option(
        "--fail-rate",
        min=0.0,
        max=1.0,
        help="Probability that a chat request gets --fail-mode instead of an answer.",
    ),
]
FailModeOption = Annotated[
    str,
    typer.Option(
        "--fail-mode", help="What a failed request gets: a status code or a behaviour (see below)."
    ),
]
ModeOption = Annotated[
    str, typer.Option("--mode", help="What every request gets when no fault applies (see below).")
]
ScriptOption = Annotated[
    str,
    typer.Option(
        "--script",
        help="Comma-separated behaviours for the first requests, in order, before --mode "
        "and --fail-rate apply, e.g. 503,hang,ok.",
    ),
]
AnswersOption = Annotated[
    Answers,
    typer.Option(
        "--answers",
        help="plausible: answer PaperGym's prompts from the text they carry, so that a build "
        "(papers, or --recipe ares on a corpus) yields instances, review gives reviews on the "
        "venue's scale, write writes a paper citing the .bib's keys and the rubric judge "
        "gives one verdict per criterion, met when the answer covers it (other prompts get "
        "schema-true answers); schema: a deterministic value of the requested JSON schema for "
        "every prompt.",
    ),
]
SeedOption = Annotated[
    int, typer.Option("--seed", help="Seed of the --fail-rate draws (same seed, same faults).")
]
HangSecondsOption = Annotated[
    float,
    typer.Option(
        "--hang-seconds",
        min=0.0,
        help="How long a hung request (or a cut-off body) waits for its client to give up.",
    ),
]
LogOption = Annotated[
    bool,
    typer.Option(
        "--log",
        help="Print one line per HTTP request on stderr: client, method, path, status or "
        "what happened (dropped, abandoned), behaviour, seconds.",
    ),
]


def _print_err(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@app.command("fake-llm", epilog=FAKE_LLM_EPILOG)
@reports_errors
def fake_llm(
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    model: ModelOption = "papergym-fake",
    latency: LatencyOption = 0.0,
    fail_rate: FailRateOption = 0.0,
    fail_mode: FailModeOption = "500",
    mode: ModeOption = "ok",
    script: ScriptOption = "",
    answers: AnswersOption = "plausible",
    seed: SeedOption = 0,
    hang_seconds: HangSecondsOption = 3600.0,
    log: LogOption = False,
    debug: DebugOption = False,
) -> None:
    """Serve a fake OpenAI-compatible LLM: dry runs of the LLM recipe, and faults on demand.

    No GPU, no key, no network: answers follow the JSON schema each request asks for and, for
    PaperGym's prompts, are drawn from the paper text in the prompt, so `papergym build ...
    --base-url http://127.0.0.1:PORT/v1 --model fake` yields instances. Latency and faults
    (status errors, hangs, dropped connections, malformed or truncated answers) test a
    pipeline's retries and timeouts.
    """
    server = fake_server(
        host=host,
        port=port,
        model=model,
        latency=latency,
        mode=mode,
        script=script,
        answers=answers,
        fail_rate=fail_rate,
        fail_mode=fail_mode,
        seed=seed,
        hang_seconds=hang_seconds,
        log=_print_err if log else None,
    )
    faults = f", fail rate {fail_rate:g} ({fail_mode})" if fail_rate else ""

    def listening() -> None:
        print(
            f"papergym fake-llm listening on {server.base_url} (model {model}, answers {answers}, "
            f"latency {latency:g} s{faults}); Ctrl-C to stop",
            flush=True,
        )

    serve(server, listening)
    print(
        f"served {server.request_count} chat requests, max in flight {server.max_in_flight}",
        flush=True,
    )
