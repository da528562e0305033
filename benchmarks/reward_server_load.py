"""The reward server under many concurrent clients with mixed rubrics, against in-process scoring.

A real ``papergym serve-reward`` subprocess on 127.0.0.1 (free port) is driven by C concurrent
clients (one keep-alive connection each, ``tests/support/reward_load.py``), half of the
requests on ``/get_reward`` (OpenRLHF) and half on ``/score``. Every answer is scored under its own
paper's rubric and under the others', with verl ``ground_truth`` labels that carry no instance id.
Every score that comes back is compared with the in-process :class:`RubricReward` score of the
same (rubric, answer) pair; a mismatch means a score was served under the wrong rubric.

Printed per concurrency level: requests and answers per second, latency percentiles, errors and
mismatches, and the ratio of the server's answers per second to in-process scoring of the same
answers (same judge, same cache behaviour, no HTTP). Each level gets a fresh server, so no level
is served from the previous level's cache.

    python benchmarks/reward_server_load.py [--concurrency 32 256] [--requests 512]
                                            [--items 2] [--judge offline] [--timeout 300]
                                            [--instances instances.jsonl] [--quick]

Bounded: a fixed number of requests per level and a wall-clock limit on each; 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from rich.console import Console
from rich.table import Table

from papergym.jsonl import read_jsonl
from papergym.records import Instance
from papergym.reward.reward import Judge, RubricReward
from papergym.reward.runtime import make_judge
from papergym.settings import load_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared load tool
from support.reward_load import (
    LoadRequest,
    drive,
    mixed_instances,
    mixed_requests,
    percentile,
)


def start_server(judge: str, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``papergym serve-reward`` on a free port; (process, port) once its judge is ready."""
    process = subprocess.Popen(
        [sys.executable, "-m", "papergym.cli", "serve-reward", "--port", "0", "--judge", judge],
        stderr=log.open("wb"),
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    deadline = time.monotonic() + 120
    port = None
    while time.monotonic() < deadline and process.poll() is None:
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read_text("utf-8"))
        if found:
            port = int(found.group(1))
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                    if r.status == 200:
                        return process, port
            except (urllib.error.URLError, OSError):
                pass  # 503 while the judge loads
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"the server did not become ready (port {port}); log: {log}")


def judge_named(judge: str) -> Judge:
    """The judge ``--judge`` names, as the server builds it: from a configuration (with the
    ``PAPERGYM_*`` fallbacks), reward.judge set."""
    return make_judge(load_config(None, [f"reward.judge={judge}"]))


def in_process(
    requests: list[LoadRequest], judge: str
) -> tuple[dict[tuple[str, str], float | None], float]:
    """In-process scores of every item, in request order; (expected by pair, seconds)."""
    reward = RubricReward(judge_named(judge))
    items = [i for r in requests for i in r.items]
    reward.score_many([(items[0].instance, "A warm-up answer.")])  # load the model, untimed
    started = time.perf_counter()
    scores = reward.score_many([(i.instance, i.answer) for i in items])
    seconds = time.perf_counter() - started
    return {(i.instance.id, i.answer): s.value for i, s in zip(items, scores, strict=True)}, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 256])
    parser.add_argument("--requests", type=int, default=512, help="requests per level")
    parser.add_argument("--items", type=int, default=2, help="answers per request")
    parser.add_argument("--judge", choices=["offline", "llm"], default="offline")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per level, at most")
    parser.add_argument("--instances", type=Path, help="instances.jsonl (default: built-in six)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 8 clients, 16 requests")
    args = parser.parse_args()
    if args.quick:
        args.concurrency, args.requests = [8], 16
    instances = read_jsonl(args.instances, Instance) if args.instances else mixed_instances()
    requests = mixed_requests(instances, args.requests, items_per_request=args.items)
    items = sum(len(r.items) for r in requests)
    console = Console(width=130)
    console.print(
        f"{len(instances)} rubrics, {args.requests} requests x {args.items} answers "
        f"({len({(i.instance.id, i.answer) for r in requests for i in r.items})} distinct pairs), "
        f"judge {args.judge}"
    )
    expected, local_s = in_process(requests, args.judge)
    local_rate = items / local_s
    table = Table(title="reward server under load (127.0.0.1)", title_justify="left")
    for column in (
        "clients", "req/s", "answers/s", "p50 ms", "p90 ms", "p99 ms", "max ms",
        "errors", "mismatches", "vs in-process",
    ):  # fmt: skip
        table.add_column(column, justify="right")
    codes = []
    wrong = 0  # errors and mismatches: the exit code says so (a smoke run must fail on them)
    for concurrency in args.concurrency:
        # a fresh server per level: the previous level's scores would all be cache hits
        with tempfile.TemporaryDirectory() as scratch:
            process, port = start_server(args.judge, Path(scratch) / "server.log")
            try:
                results, wall = asyncio.run(
                    drive(
                        "127.0.0.1", port, requests, concurrency=concurrency, timeout=args.timeout
                    )
                )
            finally:
                process.send_signal(signal.SIGTERM)
                codes.append(process.wait(timeout=30))
        ok = [r for r in results if r.status == 200]
        mismatches = sum(
            got != expected[(item.instance.id, item.answer)]
            for request, result in zip(requests, results, strict=True)
            if result.status == 200
            for item, got in zip(request.items, result.values, strict=True)
        )
        wrong += len(results) - len(ok) + mismatches
        latencies = [r.seconds * 1000 for r in ok]
        rate = sum(len(r.values) for r in ok) / wall
        table.add_row(
            str(concurrency),
            f"{len(ok) / wall:.1f}",
            f"{rate:.1f}",
            *(f"{percentile(latencies, q):.0f}" for q in (50, 90, 99, 100)),
            str(len(results) - len(ok)),
            str(mismatches),
            f"{rate / local_rate:.2f}x",
        )
    console.print(table)
    console.print(
        f"in-process: {local_rate:.1f} answers/s ({items} answers in {local_s:.1f} s); "
        f"server exit codes after SIGTERM: {codes}"
    )
    return 1 if wrong or any(codes) else 0


if __name__ == "__main__":
    sys.exit(main())
