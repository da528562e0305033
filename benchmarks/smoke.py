"""Every benchmark's ``--quick`` smoke mode: so that none can rot unnoticed.

Two benchmarks once crashed at HEAD before measuring anything (an API they called had changed)
and nobody knew until someone ran them. ``.ci/run`` runs this script after the test suite: each
``benchmarks/*.py`` that runs as a script (it has a ``__main__`` guard; this file and the shared
helpers excepted) is run as ``python benchmarks/NAME.py --quick`` in its own process, and any
failure (a non-zero exit, or no exit within ``--timeout``: it is killed with its process group)
fails the run. A new benchmark is picked up by itself, and must therefore accept ``--quick``.

They run ``--jobs`` at a time (default 2), each with ``OMP_NUM_THREADS=1``. Prints, per
benchmark, the exit code, wall seconds and CPU seconds (the benchmark's process and the
children it waited for: servers, workers), then the total wall time and CPU seconds; with a
failure, the last lines of its output. The CPU column is the figure to compare across
machines: wall time on a shared machine depends on what else runs.

    python benchmarks/smoke.py [NAME ...] [--timeout 300] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"smoke", "fake_server"}  # this runner, and a helper the LLM benchmarks import
TAIL_LINES = 30


@dataclass(frozen=True)
class Run:
    name: str
    code: int | None  # None: timed out
    wall: float
    cpu: float
    output: str


def benchmark_names() -> list[str]:
    """Every script in benchmarks/ (a ``__main__`` guard), by name."""
    return sorted(
        path.stem
        for path in HERE.glob("*.py")
        if path.stem not in NOT_BENCHMARKS
        and 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
    )


def run_quick(name: str, timeout: float) -> Run:
    """``python benchmarks/NAME.py --quick`` in a session of its own, output captured; killed
    (with its servers and workers) after ``timeout`` seconds."""
    # one thread each: a smoke run checks code, not speed, and on a small shared machine torch's
    # extra threads only spin against each other
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "160", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as output:
        start = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, str(HERE / f"{name}.py"), "--quick"],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        timer = threading.Timer(timeout, os.killpg, (process.pid, signal.SIGKILL))
        timer.start()
        try:
            # wait4: this child's CPU, and that of the children it waited for
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timed_out = not timer.is_alive()
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait
        wall = time.perf_counter() - start
        output.seek(0)
        text = output.read()
    code = None if timed_out else process.returncode
    return Run(name, code, wall, usage.ru_utime + usage.ru_stime, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: every one)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per benchmark")
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="benchmarks run at once (default: 2, or 1 on a one-core machine)",
    )
    args = parser.parse_args()
    names = args.names or benchmark_names()
    unknown = sorted(set(names) - set(benchmark_names()))
    if unknown:
        print(f"error: no such benchmark: {', '.join(unknown)}", file=sys.stderr)
        return 2
    console = Console(width=120)
    console.print(
        f"{len(names)} benchmarks, --quick each, {args.jobs} at a time; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}",
        highlight=False,
    )
    started = time.perf_counter()
    runs: list[Run] = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for run in pool.map(lambda name: run_quick(name, args.timeout), names):
            status = "ok" if run.code == 0 else "TIMED OUT" if run.code is None else "FAILED"
            console.print(f"  {run.name}: {status} ({run.wall:.1f} s)", highlight=False)
            runs.append(run)
    table = Table(title="Benchmarks, --quick (smoke)", title_justify="left")
    for column in ("benchmark", "exit", "wall s", "CPU s"):
        table.add_column(column, justify="left" if column == "benchmark" else "right")
    for run in runs:
        table.add_row(
            run.name, "timeout" if run.code is None else str(run.code), f"{run.wall:.1f}",
            f"{run.cpu:.1f}",
        )  # fmt: skip
    table.add_section()
    table.add_row(
        "total", "", f"{time.perf_counter() - started:.1f}", f"{sum(r.cpu for r in runs):.1f}"
    )
    console.print(table)
    failed = [r for r in runs if r.code != 0]
    for run in failed:
        console.rule(f"{run.name}: last {TAIL_LINES} lines")
        console.print("\n".join(run.output.splitlines()[-TAIL_LINES:]), markup=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
