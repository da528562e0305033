"""Ingestion speed and memory over the real papers in ../shared/papers.

Prints, per paper and in total, the time to ingest it and its peak Python memory (tracemalloc),
next to two references measured in the same run: the floor (only reading the raw source files)
and a naive peer (pylatexenc's stock LaTeX-to-text over the main file, with no input
resolution, cleaning, macros or sections). ``vs naive`` says what our extra work costs.

    python benchmarks/ingest.py [PAPERS_DIR] [--repeat N] [--quick]

``--quick``: a smoke run, once, over the bundled example paper (examples/papers).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from pylatexenc.latex2text import LatexNodes2Text
from rich.console import Console
from rich.table import Table

from papergym.ingestion import read_paper
from papergym.sources.discover import discover

DEFAULT_PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
EXAMPLE_PAPERS = Path(__file__).resolve().parents[1] / "examples" / "papers"


def read_raw(folder: Path) -> int:
    """The I/O floor: read every source file's bytes."""
    return sum(len(p.read_bytes()) for p in folder.rglob("*") if p.is_file())


def naive_peer(folder: Path, main_file: str) -> int:
    """What a one-line pipeline would do: stock pylatexenc over the main file's raw text."""
    text = (folder / main_file).read_text(encoding="utf-8", errors="replace")
    return len(LatexNodes2Text().latex_to_text(text))


def best_of(repeat: int, work: object) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("papers", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per paper")
    parser.add_argument("--quick", action="store_true", help="a smoke run: the example paper, once")
    args = parser.parse_args()
    if args.papers is None:
        args.papers = EXAMPLE_PAPERS if args.quick else DEFAULT_PAPERS
    if args.quick:
        args.repeat = 1
    if not args.papers.is_dir():
        print(f"{args.papers}: no such folder (pass a folder of papers)", file=sys.stderr)
        return 2
    sources = discover(args.papers)
    table = Table(title=f"Ingestion over {len(sources)} papers (best of {args.repeat})")
    for column in ("paper", "words", "ingest s", "naive s", "vs naive", "raw read s", "peak MiB"):
        table.add_column(column, justify="left" if column == "paper" else "right")
    total_ingest = total_raw = total_naive = compared_ingest = 0.0
    crashes = 0
    peaks = []
    words = 0
    for source in sources:
        raw = best_of(args.repeat, lambda s=source: read_raw(s.path))
        ingest = best_of(args.repeat, lambda s=source: read_paper(s))
        tracemalloc.start()
        paper = read_paper(source)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        try:
            naive: float | None = best_of(
                args.repeat, lambda s=source, m=paper.meta.main_file: naive_peer(s.path, m)
            )
        except Exception:  # the stock converter is not built for whole real papers
            naive = None
            crashes += 1
        peaks.append(peak)
        words += paper.words
        total_ingest += ingest
        total_raw += raw
        if naive is not None:
            total_naive += naive
            compared_ingest += ingest
        table.add_row(
            source.path.name,
            f"{paper.words:,}",
            f"{ingest:.3f}",
            "crashed" if naive is None else f"{naive:.3f}",
            "" if naive is None else f"{ingest / naive:.2f}x",
            f"{raw:.4f}",
            f"{peak:.1f}",
        )
    table.add_section()
    table.add_row(
        "total",
        f"{words:,}",
        f"{total_ingest:.2f}",
        f"{total_naive:.2f}",
        f"{compared_ingest / total_naive:.2f}x" if total_naive else "",
        f"{total_raw:.3f}",
        f"max {max(peaks):.1f}",
    )
    console = Console(width=120)
    console.print(table)
    console.print(
        f"papers/s: {len(sources) / total_ingest:.1f}   words/s: {words / total_ingest:,.0f}   "
        f"median peak memory: {statistics.median(peaks):.1f} MiB   "
        f"naive peer crashed on {crashes}/{len(sources)} papers (ours on none)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
