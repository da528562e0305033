"""``papergym write prepare`` and ``papergym write``: time and LLM use per paper.

Part 1 (prepare, over ../shared/papers): per paper, the time to prepare it next to the time to
ingest it in the same run (``papergym ingest``, the peer that reads the same sources), so the
ratio shows what reading the bibliography, the cite-keeping text and the leakage check cost;
plus the sizes of prompt and target and how many references the prompt offers.

Part 2 (write, against the scripted writer on a loopback server): calls and tokens per paper,
next to the ideal (one outline call, one per section, one for the abstract), and the same again
on a rerun (the ideal there is 0 calls: every step is saved).

    python benchmarks/write.py [PAPERS_DIR]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.ingestion import read_paper
from papergym.sources.discover import discover
from papergym.write.prepare import prepare_paper
from papergym.write.settings import WriteSection
from support.writer import BIB, ScriptedWriter

DEFAULT_PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
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


def main() -> int:
    papers = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_PAPERS
    if papers.is_dir():
        console.print(prepare_table(papers))
    else:
        console.print(f"{papers} is absent: skipping the prepare table")
    console.print(write_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
