"""Build speed and LLM cost per instance.

1. Offline (the extractive baseline) over a folder of papers (default ../shared/papers):
   papers per minute on this machine, with the embedding model's one-off load shown apart, and
   the time to resume the finished build (it reads no source and embeds nothing again).
2. The LLM recipe against the test server with injected latency (scripted, plausible answers):
   LLM calls and tokens per instance beside the naive count (one call per section + 4 reduces +
   question + reference + 2 rubric sets + merge + a leakage judgement), and wall time beside the
   ideal for the configured concurrency: the longer of the recipe's critical path (7 sequential
   rounds: map, reduce, question, reference, rubric sets, merge, leakage) and calls × latency / C.

    python benchmarks/build.py [PAPERS] [--latency 0.5] [--concurrency 64] [--skip-offline]
                               [--quick]

``--quick``: a smoke run of both parts on the bundled example paper (examples/papers) with a
0.05 s latency, so that the benchmark cannot rot unnoticed (``.ci/run`` runs it).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from papergym.embed import embed
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible import responder
from papergym.ingestion import ingest_sources
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.recipes.runner import Builder, settings_for

DEFAULT_PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
EXAMPLE_PAPERS = Path(__file__).resolve().parents[1] / "examples" / "papers"
CRITICAL_PATH_ROUNDS = 7


def offline(papers: Path, console: Console) -> None:
    start = time.perf_counter()
    embed(["warm up the embedding model"])
    load = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for("papergym", "extractive", None)
        start = time.perf_counter()
        result = asyncio.run(Builder(out=Path(tmp), settings=settings).run([papers]))
        seconds = time.perf_counter() - start
        # A resume of the finished build: no source parsed again, no criterion embedded again.
        start = time.perf_counter()
        asyncio.run(Builder(out=Path(tmp), settings=settings).run([papers]))
        resume = time.perf_counter() - start
    table = Table(title="Offline build (extractive baseline)", title_justify="left")
    columns = (
        "papers",
        "instances",
        "dropped",
        "seconds",
        "papers/min",
        "model load s",
        "resume s",
    )
    for column in columns:
        table.add_column(column, justify="right")
    table.add_row(
        str(result.papers),
        str(len(result.instances)),
        str(len(result.drops)),
        f"{seconds:.1f}",
        f"{result.papers / seconds * 60:.1f}",
        f"{load:.1f}",
        f"{resume:.1f}",
    )
    console.print(table)


def naive_calls(papers: Path) -> tuple[int, int]:
    """(papers, naive call count): one per section + 4 + 1 + 1 + 2 + 1 + 1 per paper."""
    report = ingest_sources([papers])
    calls = sum(len([s for s in p.sections if s.text.strip()]) + 10 for p in report.papers)
    return len(report.papers), calls


def llm_path(papers: Path, latency: float, concurrency: int, console: Console) -> None:
    start = time.perf_counter()
    count, naive = naive_calls(papers)
    ingest_seconds = time.perf_counter() - start
    embed(["load the embedding model before timing"])
    with (
        FakeOpenAIServer(responder=responder, latency=latency) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        config = LLMConfig(
            default=BackendConfig(
                model="bench", base_url=server.base_url, max_concurrency=concurrency
            ),
            cache=False,
        )
        settings = settings_for("papergym", "llm", config, paper_concurrency=count)

        async def run() -> tuple[float, int, int, int]:
            llm = LLMClient(config)
            start = time.perf_counter()
            result = await Builder(out=Path(tmp), settings=settings, llm=llm).run([papers])
            seconds = time.perf_counter() - start
            await llm.aclose()
            usage = llm.tracker
            tokens = sum(
                r.usage.prompt_tokens + r.usage.completion_tokens for r in usage.rows.values()
            )
            return seconds, len(result.instances), usage.calls, tokens

        seconds, instances, calls, tokens = asyncio.run(run())
        peak = server.max_in_flight
    ideal = max(CRITICAL_PATH_ROUNDS * latency, calls * latency / concurrency)
    per = max(instances, 1)
    table = Table(
        title=f"LLM recipe against the test server (latency {latency}s, concurrency {concurrency})",
        title_justify="left",
    )
    for column in (
        "papers",
        "instances",
        "calls/inst",
        "naive calls/inst",
        "tokens/inst",
        "wall s",
        "of which ingest s",
        "ideal s",
        "wall/ideal",
        "max in flight",
    ):
        table.add_column(column, justify="right")
    table.add_row(
        str(count),
        str(instances),
        f"{calls / per:.1f}",
        f"{naive / max(count, 1):.1f}",
        f"{tokens / per:,.0f}",
        f"{seconds:.1f}",
        f"{ingest_seconds:.1f}",
        f"{ideal:.1f}",
        f"{seconds / ideal:.2f}x",
        str(peak),
    )
    console.print(table)
    console.print(
        "Both call counts include the leakage judgement. Tokens are the test server's word "
        "counts, not a tokenizer's. The rest of wall - ideal is local CPU: ingestion and sentence "
        "embeddings for the gates and the leakage screen, on this machine's 2 cores."
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("papers", nargs="?", type=Path)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: the example paper, latency 0.05 s"
    )
    args = parser.parse_args()
    if args.papers is None:
        args.papers = EXAMPLE_PAPERS if args.quick else DEFAULT_PAPERS
    if args.quick:
        args.latency = 0.05
    if not args.papers.is_dir():
        print(f"{args.papers}: no such folder", file=sys.stderr)
        return 2
    console = Console(width=130)
    if not args.skip_offline:
        offline(args.papers, console)
    llm_path(args.papers, args.latency, args.concurrency, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
