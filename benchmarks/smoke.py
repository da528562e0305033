"""Every benchmark's ``--quick`` smoke mode, one after another: so that none can rot unnoticed.

Two benchmarks once crashed at HEAD before measuring anything (an API they called had changed)
and nobody knew until someone ran them. ``.ci/run`` runs this script after the test suite: each
``benchmarks/*.py`` that runs as a script (it has a ``__main__`` guard; this file and the shared
helpers excepted) is run as ``python benchmarks/NAME.py --quick`` in its own process, and any
failure (a non-zero exit, or no exit within ``--timeout``) fails the run. A new benchmark is
picked up by itself, and must therefore accept ``--quick``.

Prints, per benchmark, the exit code, wall seconds and CPU seconds (the benchmark's process
and its children: servers, workers), and the totals; with a failure, the last lines of its
output. Each runs with ``OMP_NUM_THREADS=1``. The CPU column is the figure to read on a shared machine: wall time there depends on
what else runs.

    python benchmarks/smoke.py [NAME ...] [--timeout 300]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
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


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_quick(name: str, timeout: float) -> Run:
    """``python benchmarks/NAME.py --quick``, with its output captured."""
    # one thread each: a smoke run checks code, not speed, and on a small shared machine torch's
    # extra threads only spin against each other
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "160", "OMP_NUM_THREADS": "1"}
    cpu, start = _children_cpu(), time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(HERE / f"{name}.py"), "--quick"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
        code: int | None = done.returncode
        output = done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        code = None
        output = "".join(
            part.decode(errors="replace") if isinstance(part, bytes) else part or ""
            for part in (expired.stdout, expired.stderr)
        )
    return Run(name, code, time.perf_counter() - start, _children_cpu() - cpu, output)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: every one)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per benchmark")
    args = parser.parse_args()
    names = args.names or benchmark_names()
    unknown = sorted(set(names) - set(benchmark_names()))
    if unknown:
        print(f"error: no such benchmark: {', '.join(unknown)}", file=sys.stderr)
        return 2
    console = Console(width=120)
    console.print(
        f"{len(names)} benchmarks, --quick each; {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.1f}",
        highlight=False,
    )
    runs: list[Run] = []
    for name in names:
        runs.append(run_quick(name, args.timeout))
        last = runs[-1]
        status = "ok" if last.code == 0 else "TIMED OUT" if last.code is None else "FAILED"
        console.print(f"  {name}: {status} ({last.wall:.1f} s)", highlight=False)
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
        "total", "", f"{sum(r.wall for r in runs):.1f}", f"{sum(r.cpu for r in runs):.1f}"
    )
    console.print(table)
    failed = [r for r in runs if r.code != 0]
    for run in failed:
        console.rule(f"{run.name}: last {TAIL_LINES} lines")
        console.print("\n".join(run.output.splitlines()[-TAIL_LINES:]), markup=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
