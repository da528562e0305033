"""The offline build at corpus scale: papers per minute and peak memory as the count grows.

Generates synthetic LaTeX papers (:mod:`papergym.sources.synthetic`: sections, equations,
``\\input``s, bibliographies), then runs ``papergym build DIR -o OUT --builder extractive`` over
the first N of them for each N of ``--counts`` (a fresh output folder each), each in its own
process so that its peak resident memory (``wait4``'s ``ru_maxrss``) is that run's alone. It
reports, per count: instances, wall seconds, papers per minute (whole run, and net of the
process's fixed start-up: imports and the embedding model's load, measured apart), and peak
memory; then the ratio of peak memory at the largest count to the smallest (the goal is ≤ 1.2×:
a build's memory must not grow with its corpus), and the time to resume the finished largest
build (the same command run again on its folder) beside its build time.

    python benchmarks/build_scale.py [--counts 200,1000,2000] [--seed 0] [--work DIR] [--quick]

``--quick``: counts 5 and 15, so that the benchmark cannot rot unnoticed. It needs no
``../shared``: its papers are generated.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from papergym.sources.synthetic import write_corpus

SRC = Path(__file__).resolve().parents[1] / "src"
FLAT_GOAL = 1.2
STARTUP = (
    "from papergym.embed import embed; import papergym.recipes.runner, papergym.cli.build; "
    "embed(['load the model'])"
)


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_mib: float
    code: int


def measure(command: list[str], log: Path) -> Measured:
    """Run ``command`` in its own process; wall seconds and that process tree's peak RSS.

    ``os.wait4`` gives the rusage of this one child (``RUSAGE_CHILDREN`` would give the largest
    of all children so far); ``ru_maxrss`` is in KiB on Linux.
    """
    env = {**os.environ, "PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return Measured(time.perf_counter() - start, usage.ru_maxrss / 1024, process.returncode)


def build(papers: Path, out: Path, logs: Path) -> Measured:
    command = [sys.executable, "-m", "papergym.cli", "build", str(papers), "-o", str(out)]
    measured = measure([*command, "--builder", "extractive"], logs / f"{out.name}.log")
    if measured.code != 0:
        tail = (logs / f"{out.name}.log").read_text(encoding="utf-8")[-2000:]
        raise SystemExit(f"build of {papers} exited {measured.code}:\n{tail}")
    return measured


def count_lines(path: Path) -> int:
    with path.open("rb") as lines:
        return sum(1 for _ in lines)


def run(counts: list[int], seed: int, work: Path, console: Console) -> None:
    """Generate, build each count, resume the largest; print the table."""
    start = time.perf_counter()
    for count in counts:  # the first N of one corpus: write_corpus(N) is a prefix of the largest
        write_corpus(work / f"papers-{count}", count, seed)
    console.print(f"generated {sum(counts)} papers in {time.perf_counter() - start:.1f} s")
    startup = measure([sys.executable, "-c", STARTUP], work / "startup.log")
    table = Table(title="Offline build at scale (extractive, synthetic papers)")
    for column in ("papers", "instances", "wall s", "papers/min", "net papers/min", "peak MiB"):
        table.add_column(column, justify="right")
    table.add_row("0 (start-up)", "", f"{startup.seconds:.1f}", "", "", f"{startup.peak_mib:.0f}")
    peaks: dict[int, float] = {}
    last = Measured(0.0, 0.0, 0)
    for count in counts:
        out = work / f"out-{count}"
        shutil.rmtree(out, ignore_errors=True)  # a fresh build each time
        last = build(work / f"papers-{count}", out, work)
        peaks[count] = last.peak_mib
        net = max(last.seconds - startup.seconds, 1e-9)
        table.add_row(
            str(count),
            str(count_lines(out / "instances.jsonl")),
            f"{last.seconds:.1f}",
            f"{count / last.seconds * 60:.1f}",
            f"{count / net * 60:.1f}",
            f"{last.peak_mib:.0f}",
        )
        console.print(f"built {count} papers in {last.seconds:.1f} s, peak {last.peak_mib:.0f} MiB")
    largest = counts[-1]
    resume = build(work / f"papers-{largest}", work / f"out-{largest}", work)
    console.print(table)
    ratio = peaks[largest] / peaks[counts[0]]
    verdict = "flat" if ratio <= FLAT_GOAL else f"NOT flat (goal ≤ {FLAT_GOAL}×)"
    console.print(f"peak memory {largest} vs {counts[0]} papers: {ratio:.2f}× ({verdict})")
    console.print(
        f"resume of the finished {largest}-paper build: {resume.seconds:.1f} s "
        f"(build {last.seconds:.1f} s, start-up {startup.seconds:.1f} s), "
        f"peak {resume.peak_mib:.0f} MiB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--counts", default="200,1000,2000", help="paper counts, ascending")
    parser.add_argument("--seed", type=int, default=0, help="the corpus's seed")
    parser.add_argument("--work", type=Path, help="folder for papers and builds (default: temp)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5 and 15 papers")
    args = parser.parse_args()
    counts = [5, 15] if args.quick else sorted(int(c) for c in args.counts.split(","))
    console = Console(width=110)
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        run(counts, args.seed, args.work, console)
        return 0
    with tempfile.TemporaryDirectory(prefix="papergym-scale-") as tmp:
        run(counts, args.seed, Path(tmp), console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
