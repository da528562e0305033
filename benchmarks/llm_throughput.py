"""LLM client throughput and CPU cost against a fake OpenAI-compatible server.

For each injected server latency L and concurrency C, R distinct structured requests are sent
by two clients measured in the same run, each against a fresh fake server in its own process
(``papergym fake-llm --answers schema``), so that ``time.process_time()`` is the
client's CPU alone:

* ``peer`` - a bare ``openai.AsyncOpenAI`` loop: an ``asyncio.Semaphore(C)`` around
  ``chat.completions.create`` with a JSON-schema ``response_format``; no validation, no cache,
  no accounting. The least any client built on the SDK can do.
* ``ours`` - ``LLMClient.call(..., schema=StageOutput)`` with ``max_concurrency=C``, a fresh
  SQLite response cache (every request is distinct, so every lookup misses and every answer is
  written), local validation and usage/cost accounting.
* ``ours, re-run`` - the same requests again on the now warm cache, through a new client: no
  HTTP request may reach the server (checked with ``tracker.calls`` and the server's count).

Both clients submit all R requests at once (``asyncio.gather``), as a pipeline stage does, and
get a few un-timed warm-up requests first. How to read the table:

* ``ideal`` is C/L, what a client with zero overhead would reach; ``eff`` = req/s / ideal.
* ``CPU ms/req`` is the client process's CPU per request; ``server ms/req`` the fake server's,
  which shares this machine's cores (a real model server would not).
* ``vs peer`` columns are ours / peer: throughput (higher is better) and CPU per request
  (lower is better). Ratios carry over to other machines better than the absolute numbers.
* ``HTTP`` is the number of chat requests the server saw during the timed part.

The notes under the table say per cell whether the client was waiting on latency or on CPU:
an asyncio client runs on one core, so once CPU/request x C/L approaches 1 core (or the
client and server together approach the machine's cores) the ideal rate cannot be reached.

    python benchmarks/llm_throughput.py [--latencies 2 0.2] [--concurrency 16 64 256]
                                        [--requests N] [--seconds S] [--max-requests N]
                                        [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import openai
from fake_server import ServerProcess, bare_chat, fake_server, raise_open_files_limit
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from papergym.llm.cache import ResponseCache
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig, Price
from papergym.llm.structured import response_format_for
from papergym.llm.types import Message, SamplingParams

MODEL = "papergym-fake"
PARAMS = SamplingParams(temperature=0.0, max_tokens=1024)
WARMUP = 8

SYSTEM_PROMPT = (
    "You extract the core of a research paper section. Answer with a JSON object that has a "
    "title, a one-paragraph summary, the method used and a list of the main findings. "
    "Do not invent facts that are not in the text."
)
PASSAGE = (
    "We study sparse attention for long documents. Our method keeps a sliding window of local "
    "tokens and a small set of global tokens chosen by a learned router, which reduces the "
    "quadratic cost of attention to near-linear in sequence length. On three long-document "
    "benchmarks the model matches dense attention within half a point while using a quarter "
    "of the memory. Ablations show the router matters most on retrieval-heavy tasks, and that "
    "the window size can be halved with little loss. "
) * 3

T = TypeVar("T")


class StageOutput(BaseModel):
    """A typical stage answer: a few strings and a list."""

    title: str
    summary: str
    method: str
    findings: list[str]


@dataclass(frozen=True)
class Timing:
    """What one timed batch cost: wall seconds, client and server CPU seconds."""

    wall_s: float
    client_cpu_s: float
    server_cpu_s: float | None


@dataclass(frozen=True)
class Run:
    """One client's timed batch in one cell, with what the server saw."""

    label: str
    requests: int
    timing: Timing
    http_requests: int
    max_in_flight: int
    llm_calls: int | None = None

    @property
    def rps(self) -> float:
        return self.requests / self.timing.wall_s

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.timing.client_cpu_s / self.requests

    @property
    def server_cpu_ms(self) -> float | None:
        cpu = self.timing.server_cpu_s
        return None if cpu is None else 1000 * cpu / self.requests


@dataclass(frozen=True)
class Cell:
    latency: float
    concurrency: int
    requests: int
    peer: Run
    ours: Run
    rerun: Run

    @property
    def ideal(self) -> float:
        return self.concurrency / self.latency


# --- the clients -------------------------------------------------------------------------------


def prompts(count: int, offset: int) -> list[list[Message]]:
    """``count`` distinct two-message prompts (a system prompt and a passage of a paper)."""
    return [
        [
            Message(role="system", content=SYSTEM_PROMPT),
            Message(role="user", content=f"Section {offset + i}.\n\n{PASSAGE}"),
        ]
        for i in range(count)
    ]


async def timed(work: Awaitable[object], server_cpu: Callable[[], float | None]) -> Timing:
    """Wall, client CPU and server CPU spent while ``work`` runs."""
    server_start = server_cpu()
    cpu, wall = time.process_time(), time.perf_counter()
    await work
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    server_end = server_cpu()
    server = None if server_start is None or server_end is None else server_end - server_start
    return Timing(wall, cpu, server)


async def run_peer(
    server: ServerProcess,
    concurrency: int,
    warmup: Sequence[list[Message]],
    batch: Sequence[list[Message]],
) -> Timing:
    """The bare SDK: a semaphore around ``chat.completions.create``, nothing else."""
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="EMPTY", max_retries=0)
    gate = asyncio.Semaphore(concurrency)
    response_format: Any = response_format_for(StageOutput)

    async def one(messages: list[Message]) -> str:
        return await bare_chat(
            client, gate, MODEL, messages, PARAMS.temperature, PARAMS.max_tokens, response_format
        )

    try:
        await asyncio.gather(*(one(m) for m in warmup))
        return await timed(asyncio.gather(*(one(m) for m in batch)), server.cpu_seconds)
    finally:
        await client.close()


async def run_ours(
    server: ServerProcess,
    concurrency: int,
    cache_path: Path,
    warmup: Sequence[list[Message]],
    batch: Sequence[list[Message]],
) -> tuple[Timing, int]:
    """``LLMClient`` with a SQLite cache, schema validation and priced usage accounting."""
    backend = BackendConfig(
        model=MODEL, base_url=server.base_url, max_concurrency=concurrency, params=PARAMS
    )
    config = LLMConfig(default=backend, prices={MODEL: Price(input=0.1, output=0.4)})
    client = LLMClient(config, cache=ResponseCache(cache_path))

    async def one(messages: list[Message]) -> StageOutput:
        result = await client.call("extractor", messages, schema=StageOutput, stage="bench")
        assert result.parsed is not None
        return result.parsed

    try:
        await asyncio.gather(*(one(m) for m in warmup))
        calls = client.tracker.calls
        timing = await timed(asyncio.gather(*(one(m) for m in batch)), server.cpu_seconds)
        return timing, client.tracker.calls - calls
    finally:
        await client.aclose()


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run on uvloop when it is installed, else on the stock asyncio loop."""
    try:
        import uvloop  # type: ignore[import-not-found]
    except ImportError:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


# --- one cell: peer, ours, ours re-run ----------------------------------------------------------


def measure_cell(latency: float, concurrency: int, requests: int, workdir: Path) -> Cell:
    """Each client against its own fresh server, so counts and server CPU are its own."""
    warmup = prompts(WARMUP, offset=10**9)
    batch = prompts(requests, offset=0)
    cache_path = workdir / f"cache-{latency}-{concurrency}" / "responses.sqlite"

    with fake_server(latency, workdir / "server.log", "schema") as server:
        timing = run_loop(run_peer(server, concurrency, warmup, batch))
    peer = Run("peer", requests, timing, server.served - WARMUP, server.max_in_flight)

    with fake_server(latency, workdir / "server.log", "schema") as server:
        timing, calls = run_loop(run_ours(server, concurrency, cache_path, warmup, batch))
        ours_url = server.base_url
    ours = Run("ours", requests, timing, server.served - WARMUP, server.max_in_flight, calls)

    # the same endpoint as ``ours`` (the cache key holds it); warm-up prompts are cached too
    port = int(ours_url.rsplit(":", 1)[1].split("/")[0])
    with fake_server(latency, workdir / "server.log", "schema", port) as server:
        timing, calls = run_loop(run_ours(server, concurrency, cache_path, warmup, batch))
    rerun = Run("ours, re-run", requests, timing, server.served, server.max_in_flight, calls)
    return Cell(latency, concurrency, requests, peer, ours, rerun)


def default_requests(concurrency: int, latency: float, seconds: float, cap: int) -> int:
    """About ``seconds`` at the ideal rate and at least 4 rounds of C, at most ``cap``.

    The cap keeps CPU-bound cells (which run far below C/L) from taking minutes.
    """
    return max(4 * concurrency, min(cap, round(concurrency / latency * seconds)))


# --- reporting ---------------------------------------------------------------------------------


def _ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x" if reference else ""


def table_of(cells: Sequence[Cell]) -> Table:
    table = Table(
        title="LLM client throughput vs a bare AsyncOpenAI loop (fake server, own process)"
    )
    columns = (
        "L s", "C", "R", "client", "req/s", "ideal", "eff",
        "CPU ms/req", "server ms/req", "req/s vs peer", "CPU vs peer", "HTTP", "max in flight",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column == "client" else "right")
    for index, cell in enumerate(cells):
        if index:
            table.add_section()
        for run in (cell.peer, cell.ours, cell.rerun):
            expected = 0 if run is cell.rerun else cell.requests
            http = (
                f"{run.http_requests}"
                if run.http_requests == expected
                else f"[red]{run.http_requests}[/]"
            )
            server_ms = run.server_cpu_ms
            first = run is cell.peer
            table.add_row(
                f"{cell.latency:g}" if first else "",
                f"{cell.concurrency}" if first else "",
                f"{cell.requests}" if first else "",
                run.label,
                f"{run.rps:,.0f}",
                "" if run is cell.rerun else f"{cell.ideal:,.0f}",
                "" if run is cell.rerun else f"{run.rps / cell.ideal:.0%}",
                f"{run.cpu_ms:.2f}",
                "n/a" if server_ms is None else f"{server_ms:.2f}",
                "" if first else _ratio(run.rps, cell.peer.rps),
                "" if first else _ratio(run.cpu_ms, cell.peer.cpu_ms),
                http,
                f"{run.max_in_flight}",
            )
    return table


def notes_of(cells: Sequence[Cell], cores: int) -> list[str]:
    """Per cell: was the client latency-bound or CPU-bound, and what ours adds per request."""
    lines = []
    for cell in cells:
        ours, peer = cell.ours, cell.peer
        client_cores = ours.cpu_ms / 1000 * cell.ideal  # one event loop: at most ~1 core
        server_cores = (ours.server_cpu_ms or 0.0) / 1000 * cell.ideal
        head = f"L={cell.latency:g} C={cell.concurrency}:"
        if client_cores > 0.8 or client_cores + server_cores > 0.8 * cores:
            ceiling = min(
                1000 / ours.cpu_ms, cores * 1000 / (ours.cpu_ms + (ours.server_cpu_ms or 0))
            )
            verdict = (
                f"CPU-bound - reaching C/L={cell.ideal:,.0f} req/s would take {client_cores:.2f} "
                f"cores of client CPU (an event loop has 1) plus {server_cores:.2f} of fake-server "
                f"CPU ({cores} here); CPU caps ours near {ceiling:,.0f} req/s, achieved {ours.rps:,.0f}"
            )
        else:
            verdict = (
                f"latency-bound - ours needs {client_cores:.2f} of a core at C/L, "
                f"efficiency {ours.rps / cell.ideal:.0%}"
            )
        extra = ours.cpu_ms - peer.cpu_ms
        lines.append(
            f"{head} {verdict}. Ours uses {abs(extra):.2f} ms CPU/request "
            f"{'more' if extra > 0 else 'less'} than the bare SDK loop, cache lookup+write, "
            f"validation and accounting included; a warm-cache re-run costs "
            f"{cell.rerun.cpu_ms:.2f} ms/request and runs {_ratio(cell.rerun.rps, peer.rps)} the "
            "peer's rate."
        )
    return lines


def markedly_slower(cell: Cell) -> bool:
    return cell.ours.rps < 0.95 * cell.peer.rps or cell.ours.cpu_ms > 1.2 * cell.peer.cpu_ms


# --- main --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latencies", type=float, nargs="+", default=[2.0, 0.2], metavar="L")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64, 256], metavar="C")
    parser.add_argument("--requests", type=int, help="R for every cell (default: scaled per cell)")
    parser.add_argument(
        "--seconds", type=float, default=8.0, help="ideal seconds per timed batch (sets R)"
    )
    parser.add_argument(
        "--max-requests", type=int, default=4096, help="cap on the scaled R (default 4096)"
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: small L, C and R")
    args = parser.parse_args()
    if args.quick:
        args.latencies, args.concurrency, args.seconds = [0.1], [8], 0.5
    open_files = raise_open_files_limit()
    cores = os.cpu_count() or 1
    console = Console(width=150)
    console.print(
        f"{cores} cores, open-files limit {open_files}, loop "
        f"{'uvloop' if _has_uvloop() else 'asyncio'}, openai {openai.__version__}, "
        f"{WARMUP} un-timed warm-up requests per client"
    )
    cells: list[Cell] = []
    with tempfile.TemporaryDirectory(prefix="papergym-llm-bench-") as tmp:
        for latency in args.latencies:
            for concurrency in args.concurrency:
                requests = args.requests or default_requests(
                    concurrency, latency, args.seconds, args.max_requests
                )
                console.print(f"  L={latency:g}s C={concurrency} R={requests} ...", highlight=False)
                cells.append(measure_cell(latency, concurrency, requests, Path(tmp)))
    console.print(table_of(cells))
    for line in notes_of(cells, cores):
        console.print(f"- {line}", highlight=False)
    failed = [c for c in cells if c.rerun.llm_calls != 0 or c.rerun.http_requests != 0]
    for cell in failed:
        console.print(
            f"[red]FAIL[/] L={cell.latency:g} C={cell.concurrency}: the warm re-run made "
            f"{cell.rerun.llm_calls} LLM calls, {cell.rerun.http_requests} HTTP requests"
        )
    slower = [c for c in cells if markedly_slower(c)]
    if slower:
        console.print(
            "ours is markedly slower than the peer (req/s < 95% or CPU/request > 1.2x) in: "
            + ", ".join(f"L={c.latency:g} C={c.concurrency}" for c in slower)
        )
    return 1 if failed else 0


def _has_uvloop() -> bool:
    return importlib.util.find_spec("uvloop") is not None


if __name__ == "__main__":
    sys.exit(main())
