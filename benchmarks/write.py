"""``papergym write prepare`` and ``papergym write``: time and LLM use per paper.

Part 1 (prepare, over ../shared/papers): per paper, the time to prepare it next to the time to
ingest it in the same run (``papergym ingest``, the peer that reads the same sources), so the
ratio shows what reading the bibliography, the cite-keeping text and the leakage check cost;
plus the sizes of prompt and target and how many references the prompt offers.

Part 2 (write, against the scripted writer on a loopback server): calls and tokens per paper,
next to the ideal (one outline call, one per section, one for the abstract), and the same again
on a rerun (the ideal there is 0 calls: every step is saved).

Part 3 (a large bibliography, generated: N entries of varied LaTeX, some with abstracts and
@string venues): reading it as ``papergym write`` does (every entry parsed and checked, the
first ``write.max_references`` converted to text) next to bibtexparser's bare ``parse_string``
of the same text (the floor for any reader built on it) and to converting every entry (what
``write`` did before, timed on at most 5,000 entries and scaled): seconds and peak traced
memory.

    python benchmarks/write.py [PAPERS_DIR] [--bib-entries 100000] [--quick]

``--quick``: a smoke run: the bundled example paper for part 1, and 2,000 entries for part 3.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from bibtexparser.entrypoint import parse_string
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.ingestion import read_paper
from papergym.settings.models import WriteSection
from papergym.sources.bib import parse_bib, read_bib
from papergym.sources.discover import discover
from papergym.write.prepare import prepare_paper
from support.writer import BIB, ScriptedWriter

DEFAULT_PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
EXAMPLE_PAPERS = Path(__file__).resolve().parents[1] / "examples" / "papers"
EAGER_ENTRIES = 5000
"""Converting every entry is timed on at most this many (then scaled): 100,000 take minutes."""
console = Console()


def prepare_table(papers: Path) -> Table:
    table = Table(title=f"write prepare vs ingest over {papers}", title_justify="left")
    for column in (
        "paper",
        "ingest s",
        "prepare s",
        "ratio",
        "refs",
        "prompt words",
        "target words",
    ):
        table.add_column(column, justify="left" if column == "paper" else "right")
    settings = WriteSection()
    totals = [0.0, 0.0]
    for source in discover(papers):
        start = time.perf_counter()
        read_paper(source)
        ingest = time.perf_counter() - start
        start = time.perf_counter()
        prepared = prepare_paper(source, settings)
        prepare = time.perf_counter() - start
        totals[0] += ingest
        totals[1] += prepare
        example = prepared.example
        table.add_row(
            source.path.name,
            f"{ingest:.2f}",
            f"{prepare:.2f}",
            f"{prepare / ingest:.1f}x",
            str(len(example.keys)) if example else "dropped",
            str(len(example.prompt.split())) if example else "-",
            str(len(example.completion.split())) if example else "-",
        )
    table.add_section()
    table.add_row("total", f"{totals[0]:.2f}", f"{totals[1]:.2f}", f"{totals[1] / totals[0]:.1f}x")
    return table


def write_table() -> Table:
    table = Table(title="write: LLM calls per paper (scripted writer)", title_justify="left")
    for column in ("run", "calls", "ideal", "tokens in", "tokens out", "seconds"):
        table.add_column(column, justify="left" if column == "run" else "right")
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        server.responder = ScriptedWriter()
        bib = Path(tmp) / "paper.bib"
        bib.write_text(BIB, encoding="utf-8")
        args = ["write", str(bib), "-o", str(Path(tmp) / "out"), "--base-url", server.base_url]
        args += ["--model", "m", "--no-cache", "--json"]
        for run, ideal in (("first", 1 + 4 + 1), ("rerun", 0)):
            before = len([r for r in server.requests if "messages" in r])
            start = time.perf_counter()
            result = runner.invoke(app, args)
            seconds = time.perf_counter() - start
            calls = len([r for r in server.requests if "messages" in r]) - before
            usage = json.loads(result.stdout)["usage"]
            tokens_in = sum(row["prompt_tokens"] for row in usage)
            tokens_out = sum(row["completion_tokens"] for row in usage)
            table.add_row(
                run, str(calls), str(ideal), str(tokens_in), str(tokens_out), f"{seconds:.2f}"
            )
    return table


WORDS = [
    *[
        "graph",
        "neural",
        "sparse",
        "kernel",
        "attention",
        "bayesian",
        "convex",
        "robust",
        "spectral",
    ],
    *["stochastic", "manifold", "transport", "diffusion"],
    *("{M}arkov", "$\\ell_1$", "caf\\'e", 'na{\\"\\i}ve', 'Schr{\\"o}dinger'),
]
"""Title and abstract words: plain, case-protected, math and accented, as real .bib files mix."""


def large_bib(entries: int, seed: int = 7) -> str:
    """A .bib of ``entries`` varied entries: accents, math, case braces, an @string venue on a
    third of them, an abstract on a fifth."""
    rng = random.Random(seed)
    parts = ['@string{nips = "Advances in Neural Information Processing Systems"}\n']
    for i in range(entries):
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10)))
        authors = " and ".join(
            f"Surname{rng.randint(0, 999)}, F." for _ in range(rng.randint(1, 4))
        )
        venue = "journal = nips" if i % 3 == 0 else "booktitle = {Proc. " + rng.choice(WORDS) + "}"
        abstract = ""
        if i % 5 == 0:
            words = " ".join(rng.choice(WORDS) for _ in range(60))
            abstract = f",\n  abstract = {{{words}}}"
        parts.append(
            f"@article{{k{i},\n  title = {{{title}}},\n  author = {{{authors}}},\n"
            f"  year = {1990 + i % 35},\n  {venue}{abstract}\n}}\n"
        )
    return "".join(parts)


def _seconds(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _peak_mib(work: Callable[[], object]) -> float:
    """Peak traced memory of ``work`` (run again, traced: tracing slows it, so it is not timed)."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def large_bib_table(entries: int, eager_entries: int = EAGER_ENTRIES) -> Table:
    limit = WriteSection().max_references
    table = Table(
        title=f"A {entries:,}-entry .bib: reading it for `papergym write` ({limit} converted)",
        title_justify="left",
    )
    for column in ("reader", "entries", "seconds", "vs floor", "peak MiB (traced)"):
        table.add_column(column, justify="left" if column == "reader" else "right")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.bib"
        text = large_bib(entries)
        path.write_text(text, encoding="utf-8")
        floor = _seconds(lambda: parse_string(text, parse_stack=[]))
        floor_peak = _peak_mib(lambda: parse_string(text, parse_stack=[]))
        ours = _seconds(lambda: read_bib(path, limit=limit))
        ours_peak = _peak_mib(lambda: read_bib(path, limit=limit))
        eager_count = min(entries, eager_entries)
        eager_text = large_bib(eager_count)
        eager = _seconds(lambda: parse_bib(eager_text))
    scaled = eager * entries / eager_count
    table.add_row("bibtexparser parse_string (floor)", f"{entries:,}", f"{floor:.2f}", "1.00x",
                  f"{floor_peak:.0f}")  # fmt: skip
    table.add_row("read_bib, as write reads it", f"{entries:,}", f"{ours:.2f}",
                  f"{ours / floor:.2f}x", f"{ours_peak:.0f}")  # fmt: skip
    table.add_row(
        f"every entry converted (timed on {eager_count:,}, scaled)",
        f"{entries:,}",
        f"{scaled:.2f}",
        f"{scaled / floor:.2f}x",
        "-",
    )
    return table


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("papers", nargs="?", type=Path)
    parser.add_argument("--bib-entries", type=int, default=100_000, help="part 3's .bib size")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: the example paper, 2,000 entries"
    )
    args = parser.parse_args()
    if args.papers is None:
        args.papers = EXAMPLE_PAPERS if args.quick else DEFAULT_PAPERS
    eager = EAGER_ENTRIES
    if args.quick:
        args.bib_entries, eager = 2000, 100
    if args.papers.is_dir():
        console.print(prepare_table(args.papers))
    else:
        console.print(f"{args.papers} is absent: skipping the prepare table")
    console.print(write_table())
    console.print(large_bib_table(args.bib_entries, eager))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
