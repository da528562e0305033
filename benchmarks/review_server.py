"""``papergym serve-reward --reward review`` under long answers: is ``/health`` answered meanwhile?

Each case starts the server (the offline baseline reviewer, so no LLM is involved) as its own
process, waits until it is ready, sends one ``POST /score`` with a long answer, and polls
``GET /health`` from another thread while that request is in flight. The table shows how long the
``/score`` took and the worst ``/health`` latency during it, against the idle ``/health`` latency
measured just before (``ratio`` = worst / idle; an event loop held by the answer's work shows up
as a worst latency close to the ``/score`` time).

Cases: a run of one repeated letter (the anonymiser's slowest input, a policy's degenerate
output), cut to ``reward.max_answer_chars`` (default 16,000) before any work; the same run with
the limit off (``--max-answer-chars 0``: the whole text is anonymised, in a worker process); prose
of the same length; a 60,000-character answer under ``--max-answer-chars 1000``; and a body of
30 MB (under the 32 MB limit).

    python benchmarks/review_server.py [--quick] [--no-limit-case]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

PROSE = (
    "We propose a method for routing attention to the relevant blocks of a long document and "
    "evaluate it on two benchmarks, reporting accuracy, memory and time. "
)


@dataclass(frozen=True)
class Case:
    name: str
    answer: str
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Result:
    case: Case
    body_mb: float
    idle_ms: float
    score_s: float
    worst_ms: float
    polls: int
    truncated: bool | None


def cases(quick: bool, no_limit: bool) -> list[Case]:
    scale = 10 if quick else 1
    letters = 100_000 // scale
    found = [
        Case(f"{letters:,} × 'a'", "a" * letters),
        Case(f"{letters:,} chars of prose", (PROSE * (letters // len(PROSE) + 1))[:letters]),
        Case(
            f"{60_000 // scale:,} × 'a', --max-answer-chars 1000",
            "a" * (60_000 // scale),
            ("--max-answer-chars", "1000"),
        ),
        Case(f"{30 // scale} MB body", "a" * (30_000_000 // scale)),
    ]
    if no_limit:
        found.append(
            Case(f"{letters:,} × 'a', no limit", "a" * letters, ("--max-answer-chars", "0"))
        )
    return found


def _request(
    port: int, method: str, path: str, body: bytes | None = None
) -> tuple[int, float, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    started = time.perf_counter()
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, time.perf_counter() - started, response.read()
    finally:
        connection.close()


def _start(flags: tuple[str, ...]) -> tuple[subprocess.Popen[str], int]:
    command = [sys.executable, "-m", "papergym.cli", "serve-reward", "--reward", "review"]
    process = subprocess.Popen(
        [*command, "--port", "0", *flags],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert process.stderr is not None
    found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", process.stderr.readline())
    if not found:
        raise SystemExit("the server did not start")
    threading.Thread(target=process.stderr.read, daemon=True).start()
    port = int(found.group(1))
    deadline = time.monotonic() + 300
    while True:
        try:
            if _request(port, "GET", "/health")[0] == 200:
                return process, port
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit("the server did not get ready")
        time.sleep(0.2)


def run(case: Case) -> Result:
    process, port = _start(case.flags)
    try:
        idle = min(_request(port, "GET", "/health")[1] for _ in range(5))
        body = json.dumps({"items": [{"answer": case.answer}]}).encode()
        finished = threading.Event()
        worst, polls = 0.0, 0

        def poll() -> None:
            nonlocal worst, polls
            while not finished.is_set():
                worst = max(worst, _request(port, "GET", "/health")[1])
                polls += 1
                time.sleep(0.05)

        poller = threading.Thread(target=poll)
        poller.start()
        status, seconds, answer = _request(port, "POST", "/score", body)
        finished.set()
        poller.join()
        truncated = json.loads(answer)["scores"][0]["answer_truncated"] if status == 200 else None
        return Result(case, len(body) / 1e6, idle * 1000, seconds, worst * 1000, polls, truncated)
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tenth of each size (smoke run)")
    parser.add_argument(
        "--no-limit-case",
        action="store_true",
        help="also the run of letters with no answer limit (minutes, until the anonymiser is "
        "linear)",
    )
    args = parser.parse_args()
    table = Table(title="review server: /health during one long /score", title_justify="left")
    for column in ("answer", "body MB", "/score s", "cut", "idle /health ms", "worst ms", "ratio"):
        table.add_column(column, justify="left" if column == "answer" else "right")
    for case in cases(args.quick, args.no_limit_case):
        r = run(case)
        table.add_row(
            case.name,
            f"{r.body_mb:.2f}",
            f"{r.score_s:.1f}",
            "-" if r.truncated is None else "yes" if r.truncated else "no",
            f"{r.idle_ms:.1f}",
            f"{r.worst_ms:.0f} ({r.polls} polls)",
            f"{r.worst_ms / max(r.idle_ms, 0.001):.0f}×",
        )
    Console(width=130).print(table)


if __name__ == "__main__":
    main()
