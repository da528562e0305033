"""``papergym review`` through the LLM layer, against a bare SDK client making the same calls.

For each injected server latency L and concurrency C, P papers are reviewed by N simulated
reviewers and a meta-review: N + 1 calls per paper. Two clients do the same calls in the same
run, each against its own fresh ``papergym fake-llm --answers schema`` process (schema-true
answers: every review parses, every rating is on the scale):

* ``bare`` - one ``openai.AsyncOpenAI`` with an ``asyncio.Semaphore(C)`` around
  ``chat.completions.create``: the same prompts (built with the reviewer's own prompt functions
  from the same anonymised, fitted text) and the same JSON schema, no validation, no cache, no
  records. The least a client can do.
* ``ours`` - :class:`papergym.review.reviewer.LLMReviewer` as the command runs it (anonymise,
  fit, N independent structured calls validated locally, the meta-review), through an
  :class:`~papergym.llm.client.LLMClient` with ``max_concurrency`` C and a fresh SQLite cache
  (every lookup misses). Both start every paper at once; the C bound on requests in flight is
  the only limit (the command also bounds papers, ``review.paper_concurrency``).

Papers are the shared ICLR texts (``../shared/reviews/iclr2022/papers``) when present, else
generated ones. How to read the table: ``ideal`` is C/L requests per second (zero overhead);
``ours/bare`` is the throughput ratio (target >= 0.9); ``calls/paper`` and ``tokens/paper`` are
what the LLM layer accounted for ours (the fake server counts a word as a token).

    python benchmarks/review.py [--latencies 0.5 0.1] [--concurrency 16 64] [--papers P]
                                [--reviewers N] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import openai
from rich.console import Console
from rich.table import Table

from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.structured import response_format_for
from papergym.review.anonymise import anonymise
from papergym.review.fit import fit_paper
from papergym.review.records import ICLR, Review
from papergym.review.reviewer import (
    LLMReviewer,
    answer_schema,
    load_profiles,
    meta_review_messages,
    panel,
    review_messages,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_server import bare_chat, fake_server, raise_open_files_limit

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reviews" / "iclr2022" / "papers"
MODEL = "reviewer-fake"
MAX_WORDS = 6000
MAX_TOKENS = 1024
WARMUP = 2
"""Un-timed papers each client reviews first (connections opened, code paths warm)."""


def load_texts(count: int) -> list[str]:
    """``count`` distinct paper texts: the shared ICLR papers, else generated ones."""
    if SHARED.is_dir():
        files = sorted(SHARED.glob("*.txt"))
        return [files[i % len(files)].read_text("utf-8") + f"\n(copy {i})" for i in range(count)]
    body = " ".join(f"w{i % 97}" for i in range(4000))
    return [f"# Paper {i}\n\n1 INTRODUCTION\n\n{body}\n\n2 METHOD\n\n{body}" for i in range(count)]


@dataclass(frozen=True)
class Result:
    calls: int
    wall_s: float
    cpu_s: float
    tokens_in: int = 0
    tokens_out: int = 0
    unscored: int = 0

    @property
    def rps(self) -> float:
        return self.calls / self.wall_s if self.wall_s else 0.0


async def run_ours(
    base_url: str,
    concurrency: int,
    texts: list[str],
    warm: list[str],
    reviewers: int,
    cache: Path,
) -> Result:
    backend = BackendConfig(model=MODEL, base_url=(base_url,), max_concurrency=concurrency)
    llm = LLMClient.from_config(LLMConfig(default=backend, cache=True, cache_dir=cache))
    reviewer = LLMReviewer(
        llm, reviewers=reviewers, max_paper_words=MAX_WORDS, max_tokens=MAX_TOKENS
    )

    async def one(index: int, text: str) -> int:
        record = await reviewer.review(f"p{index}", text)
        return len(record.unscored)

    try:
        await asyncio.gather(*(one(-1 - i, t) for i, t in enumerate(warm)))
        llm.tracker.rows.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        unscored = sum(await asyncio.gather(*(one(i, t) for i, t in enumerate(texts))))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        await llm.aclose()
    rows = llm.tracker.rows.values()
    return Result(
        calls=sum(r.calls for r in rows),
        wall_s=wall,
        cpu_s=cpu,
        tokens_in=sum(r.usage.prompt_tokens for r in rows),
        tokens_out=sum(r.usage.completion_tokens for r in rows),
        unscored=unscored,
    )


async def run_bare(
    base_url: str, concurrency: int, texts: list[str], warm: list[str], reviewers: int
) -> Result:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0)
    gate = asyncio.Semaphore(concurrency)
    schema = response_format_for(answer_schema(ICLR))
    chosen = panel(reviewers, load_profiles(), 0)
    placeholder = Review(
        reviewer="r", seed=0, summary="s", strengths=[], weaknesses=[], questions=[],
        soundness=3, presentation=3, contribution=3, rating=6, confidence=3,
    )  # fmt: skip

    async def one(text: str) -> int:
        paper = fit_paper(anonymise(text).text, MAX_WORDS).text
        await asyncio.gather(
            *(
                bare_chat(
                    client, gate, MODEL, review_messages(p, ICLR, paper), 0.7, MAX_TOKENS, schema
                )
                for _, p, _ in chosen
            )
        )
        meta = meta_review_messages(ICLR, paper, [placeholder] * reviewers)
        await bare_chat(client, gate, MODEL, meta, 0.7, MAX_TOKENS)
        return reviewers + 1

    try:
        await asyncio.gather(*(one(t) for t in warm))
        cpu, wall = time.process_time(), time.perf_counter()
        calls = sum(await asyncio.gather(*(one(t) for t in texts)))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        await client.close()
    return Result(calls=calls, wall_s=wall, cpu_s=cpu)


def measure(
    latency: float, concurrency: int, papers: int, reviewers: int, tmp: Path
) -> tuple[Result, Result]:
    loaded = load_texts(papers + WARMUP)
    warm, texts = loaded[:WARMUP], loaded[WARMUP:]
    with fake_server(latency, tmp / f"bare-{latency}-{concurrency}.log", "schema") as server:
        bare = asyncio.run(run_bare(server.base_url, concurrency, texts, warm, reviewers))
    cache = Path(tempfile.mkdtemp(dir=tmp))
    with fake_server(latency, tmp / f"ours-{latency}-{concurrency}.log", "schema") as server:
        ours = asyncio.run(run_ours(server.base_url, concurrency, texts, warm, reviewers, cache))
    return bare, ours


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latencies", type=float, nargs="+", default=[0.5, 0.1], metavar="L")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64], metavar="C")
    parser.add_argument("--papers", type=int, default=40, metavar="P")
    parser.add_argument("--reviewers", type=int, default=4, metavar="N")
    parser.add_argument("--quick", action="store_true", help="a smoke run: L 0.1, C 8, P 8")
    args = parser.parse_args()
    if args.quick:
        args.latencies, args.concurrency, args.papers = [0.1], [8], 8
    raise_open_files_limit()
    console = Console(width=160)
    console.print(
        f"{os.cpu_count()} cores, openai {openai.__version__}, {args.papers} papers x "
        f"({args.reviewers} reviewers + 1 meta-review), papers from "
        f"{'the shared ICLR set' if SHARED.is_dir() else 'generated text'}",
        highlight=False,
    )
    table = Table(title="papergym review vs a bare client (same calls, same run)")
    for column in (
        "L s", "C", "ideal req/s", "bare req/s", "ours req/s", "ours/bare", "ours eff",
        "calls/paper", "tokens in/paper", "tokens out/paper", "CPU ms/call bare", "CPU ms/call ours",
        "unscored",
    ):  # fmt: skip
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory(prefix="papergym-review-bench-") as tmp:
        for latency in args.latencies:
            for concurrency in args.concurrency:
                console.print(f"  L={latency:g}s C={concurrency} ...", highlight=False)
                bare, ours = measure(latency, concurrency, args.papers, args.reviewers, Path(tmp))
                ideal = concurrency / latency
                table.add_row(
                    f"{latency:g}", str(concurrency), f"{ideal:.0f}", f"{bare.rps:.1f}",
                    f"{ours.rps:.1f}", f"{ours.rps / bare.rps:.2f}", f"{ours.rps / ideal:.2f}",
                    f"{ours.calls / args.papers:.1f}", f"{ours.tokens_in / args.papers:,.0f}",
                    f"{ours.tokens_out / args.papers:,.0f}",
                    f"{1000 * bare.cpu_s / bare.calls:.2f}", f"{1000 * ours.cpu_s / ours.calls:.2f}",
                    str(ours.unscored),
                )  # fmt: skip
    console.print(table)
    console.print(
        "- calls/paper is N reviews + 1 meta-review: each reviewer is its own request (independent "
        "samples, distinct profiles and seeds), never one completion holding every review.",
        highlight=False,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
