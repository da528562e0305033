"""Reward cost and speed: LLM judge calls and tokens per answer, answers per second.

Instances come from an offline build (the extractive baseline, run here) of a folder of papers
(default ../shared/papers, else examples/papers), or from an ``instances.jsonl``. The answers
are each instance's reference answer plus simple variants (a numbered sentence appended), so
every answer is distinct and none is served from the reward's memory.

1. Per judging mode (all, k=3, one), against the test server with no latency: LLM judge calls
   and tokens per scored answer, from the client's usage tracker, beside the expected calls
   (mode all: 2 per answer, one per pass; k: ceil(n/k) per pass; one: one per criterion).
2. Answers per second for mode "all" against the test server with injected latency L at
   concurrencies C: the reward judges C answers at once, each with its 2 passes in flight
   together (the client allows 2C requests), so the ideal is C / L answers/s, as long as the
   server keeps up (its max in flight is shown).
3. The offline judge (sentence embeddings + word coverage; model preloaded): answers per
   second on this machine.
4. What a GRPO run would pay the LLM judge: steps x samples x batch answers (default
   200 x 8 x 64 = 102,400), extrapolated from part 1.

The test server runs in its own process (so its CPU is not the client's) and answers the
judge's verdict schema with exactly the number of verdicts the prompt asks for. Its token
counts are word counts, not a tokenizer's.

    python benchmarks/reward.py [PAPERS | instances.jsonl] [--latency 0.5]
                                [--concurrency 8 32 128] [--waves 4] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from papergym.fakellm.plausible_judge import first_span
from papergym.jsonl import read_jsonl
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.recipes.runner import Builder, settings_for
from papergym.records import Instance
from papergym.reward.judge import Mode, RubricJudge
from papergym.reward.reward import RubricReward

ROOT = Path(__file__).resolve().parents[1]
SHARED_PAPERS = ROOT.parent / "shared" / "papers"
EXAMPLE_PAPERS = ROOT / "examples" / "papers"
DEFAULT_PAPERS = SHARED_PAPERS if SHARED_PAPERS.is_dir() else EXAMPLE_PAPERS
MODES: tuple[tuple[str, Mode, int], ...] = (("all", "all", 0), ("k=3", "k", 3), ("one", "one", 1))
WARMUP = 4
REASON = (
    "The plan states the method and how it will be evaluated, which is what this criterion "
    "asks for."
)
_COUNT = re.compile(r"exactly (\d+) verdicts")


# --- the test server, in its own process -------------------------------------------------------


def verdict_responder(request: dict[str, Any]) -> dict[str, Any]:
    """The judge's answer: exactly the count the prompt asks for, ids 1..n, alternating 1/0."""
    messages = request.get("messages") or []
    first = next((m for m in messages if m.get("role") == "user"), {})
    content = first.get("content")
    found = _COUNT.search(content if isinstance(content, str) else "")
    count = int(found.group(1)) if found else 1
    quote = first_span(request)  # a "met" quotes the plan, as the judge must
    return {
        "verdicts": [
            {
                "criterion_id": n,
                "reason": REASON,
                "quote": quote if n % 2 else None,
                "verdict": n % 2,
            }
            for n in range(1, count + 1)
        ]
    }


def _serve(latency: float, conn: Connection) -> None:
    from papergym.fakellm import FakeOpenAIServer

    with FakeOpenAIServer(latency=latency, responder=verdict_responder) as server:
        conn.send(server.base_url)
        while True:
            message = conn.recv()
            if message == "stats":
                conn.send((server.request_count, server.max_in_flight))
            elif message == "stop":
                break


class Server:
    """Handle on the server process: its URL, and its request count / max in flight so far."""

    def __init__(self, conn: Connection, base_url: str) -> None:
        self._conn = conn
        self.base_url = base_url

    def stats(self) -> tuple[int, int]:
        self._conn.send("stats")
        served, peak = self._conn.recv()
        return int(served), int(peak)


@contextmanager
def server_process(latency: float) -> Iterator[Server]:
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=_serve, args=(latency, theirs), daemon=True)
    process.start()
    try:
        if not ours.poll(60):
            raise RuntimeError("test server did not start")
        yield Server(ours, ours.recv())
    finally:
        ours.send("stop")
        process.join(10)
        if process.is_alive():
            process.terminate()


# --- instances and answers ---------------------------------------------------------------------


def load_instances(source: Path) -> tuple[list[Instance], str]:
    if source.is_file():
        return read_jsonl(source, Instance), str(source)
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for("papergym", "extractive", None)
        result = asyncio.run(Builder(out=Path(tmp), settings=settings).run([source]))
        instances = list(result.instances)  # read from the build's instances.jsonl, in tmp
    return instances, f"extractive build of {source}"


def variant(reference: str, index: int) -> str:
    """The reference answer (index 0) or a distinct variant of it."""
    if index == 0:
        return reference
    return (
        f"{reference.rstrip()}\n\nVariant {index}: we will also report the results of run {index}."
    )


def answers(
    instances: Sequence[Instance], count: int, start: int = 0
) -> list[tuple[Instance, str]]:
    """``count`` distinct (instance, answer) pairs, cycling over instances, then variants."""
    pairs = []
    for n in range(start, start + count):
        instance = instances[n % len(instances)]
        pairs.append((instance, variant(instance.reference_answer, n // len(instances))))
    return pairs


def expected_calls(instance: Instance, mode: Mode, k: int) -> int:
    passes = [len(instance.rubric.specific), len(instance.rubric.general)]
    if mode == "all":
        return sum(1 for n in passes if n)
    size = 1 if mode == "one" else k
    return sum(math.ceil(n / size) for n in passes)


def llm_config(base_url: str, concurrency: int) -> LLMConfig:
    backend = BackendConfig(model="bench-judge", base_url=base_url, max_concurrency=concurrency)
    return LLMConfig(default=backend, cache=False)


# --- 1. calls and tokens per answer ------------------------------------------------------------


@dataclass(frozen=True)
class ModeCost:
    label: str
    answers: int
    calls: int
    expected: int
    prompt: int
    completion: int
    unscored: int

    @property
    def per_answer(self) -> tuple[float, float, float]:
        n = self.answers
        return self.calls / n, self.prompt / n, self.completion / n


async def _mode_cost(
    base_url: str, label: str, mode: Mode, k: int, pairs: Sequence[tuple[Instance, str]]
) -> ModeCost:
    llm = LLMClient(llm_config(base_url, 64))
    reward = RubricReward(RubricJudge(llm, mode=mode, k=k or 5), max_concurrency=32)
    scores = await reward.ascore_many(pairs)
    await llm.aclose()
    rows = llm.tracker.rows.values()
    return ModeCost(
        label=label,
        answers=len(pairs),
        calls=llm.tracker.calls,
        expected=sum(expected_calls(i, mode, k) for i, _ in pairs),
        prompt=sum(r.usage.prompt_tokens for r in rows),
        completion=sum(r.usage.completion_tokens for r in rows),
        unscored=sum(1 for s in scores for v in s.verdicts if v.passed is None),
    )


def part_costs(
    instances: Sequence[Instance], per_instance: int, console: Console
) -> list[ModeCost]:
    pairs = answers(instances, len(instances) * per_instance)
    with server_process(0.0) as server:
        costs = [
            asyncio.run(_mode_cost(server.base_url, label, mode, k, pairs))
            for label, mode, k in MODES
        ]
    specific = sum(len(i.rubric.specific) for i, _ in pairs) / len(pairs)
    general = sum(len(i.rubric.general) for i, _ in pairs) / len(pairs)
    table = Table(
        title=f"1. LLM judge cost per scored answer ({len(pairs)} answers, test server, no "
        f"latency; {specific:.1f} specific + {general:.1f} general criteria per answer)",
        title_justify="left",
    )
    for column in (
        "mode",
        "calls/answer",
        "expected",
        "calls/expected",
        "prompt tok/answer",
        "completion tok/answer",
        "total tok/answer",
        "vs all",
        "unscored verdicts",
    ):
        table.add_column(column, justify="right")
    base = sum(costs[0].per_answer[1:])
    for cost in costs:
        calls, prompt, completion = cost.per_answer
        table.add_row(
            cost.label,
            f"{calls:.2f}",
            f"{cost.expected / cost.answers:.2f}",
            f"{cost.calls / cost.expected:.2f}x",
            f"{prompt:,.0f}",
            f"{completion:,.0f}",
            f"{prompt + completion:,.0f}",
            f"{(prompt + completion) / base:.2f}x",
            str(cost.unscored),
        )
    console.print(table)
    console.print(
        "- Tokens are the test server's word counts (prompt: the judge's message; completion: "
        "the scripted verdict JSON, one ~20-word reason per criterion), not a tokenizer's.",
        highlight=False,
    )
    console.print(
        "- Every chunk repeats the question, the reference (specific pass) and the answer, so "
        "prompt tokens grow with the number of calls; completion tokens do not.",
        highlight=False,
    )
    return costs


# --- 2. answers per second with latency --------------------------------------------------------


@dataclass(frozen=True)
class Throughput:
    concurrency: int
    answers: int
    seconds: float
    calls: int
    peak: int
    client_cpu_s: float

    @property
    def rate(self) -> float:
        return self.answers / self.seconds


async def _throughput(
    base_url: str,
    concurrency: int,
    timed: Sequence[tuple[Instance, str]],
    warm: Sequence[tuple[Instance, str]],
) -> tuple[float, int, float]:
    llm = LLMClient(llm_config(base_url, 2 * concurrency))
    judge = RubricJudge(llm, mode="all")
    await RubricReward(judge, max_concurrency=concurrency).ascore_many(warm)
    before = llm.tracker.calls
    reward = RubricReward(judge, max_concurrency=concurrency)
    cpu = time.process_time()
    start = time.perf_counter()
    await reward.ascore_many(timed)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    await llm.aclose()
    return seconds, llm.tracker.calls - before, cpu


def part_throughput(
    instances: Sequence[Instance],
    latency: float,
    concurrencies: Sequence[int],
    waves: int,
    console: Console,
) -> None:
    results: list[Throughput] = []
    for concurrency in concurrencies:
        count = concurrency * waves
        timed = answers(instances, count)
        warm = answers(instances, WARMUP, start=count)
        with server_process(latency) as server:
            seconds, calls, cpu = asyncio.run(
                _throughput(server.base_url, concurrency, timed, warm)
            )
            _, peak = server.stats()
        results.append(Throughput(concurrency, count, seconds, calls, peak, cpu))
    table = Table(
        title=f'2. Answers per second, mode "all", test server latency {latency:g}s '
        f"(ideal = C / L answers/s)",
        title_justify="left",
    )
    for column in (
        "C",
        "answers",
        "calls",
        "wall s",
        "answers/s",
        "ideal/s",
        "eff",
        "ideal wall s",
        "max in flight (ideal 2C)",
        "client CPU ms/answer",
    ):
        table.add_column(column, justify="right")
    for r in results:
        ideal = r.concurrency / latency
        table.add_row(
            str(r.concurrency),
            str(r.answers),
            str(r.calls),
            f"{r.seconds:.2f}",
            f"{r.rate:.1f}",
            f"{ideal:.1f}",
            f"{r.rate / ideal:.0%}",
            f"{waves * latency:.2f}",
            f"{r.peak} ({2 * r.concurrency})",
            f"{1000 * r.client_cpu_s / r.answers:.2f}",
        )
    console.print(table)
    cores = os.cpu_count() or 1
    console.print(
        f"- Ideal: C answers in flight, each with its 2 passes (specific, general) as 2 "
        f"concurrent calls, each taking L: C / L answers/s = 2C / L requests/s. Each run is "
        f"{waves} waves of C answers (ideal wall = {waves} x L), after {WARMUP} untimed answers.",
        highlight=False,
    )
    console.print(
        f"- The client is one asyncio process on {cores} cores; the server another. When "
        f"client CPU ms/answer x C / L approaches 1000 ms/s, the client's one core, not "
        f"latency, bounds the rate.",
        highlight=False,
    )


# --- 3. the offline judge ----------------------------------------------------------------------


def part_offline(instances: Sequence[Instance], count: int, console: Console) -> None:
    from papergym.embed import embed
    from papergym.reward.offline import OfflineJudge

    start = time.perf_counter()
    embed(["warm up the embedding model"])
    load = time.perf_counter() - start
    judge = OfflineJudge()
    judge.judge_sync(*answers(instances, 1, start=10_000)[0])  # first-call overheads
    rows = []
    pairs = answers(instances, count)
    start = time.perf_counter()
    for instance, answer in pairs:
        judge.judge_sync(instance, answer)
    rows.append(("sequential judge_sync", time.perf_counter() - start))
    cores = os.cpu_count() or 1
    reward = RubricReward(judge, max_concurrency=cores)
    pairs = answers(instances, count, start=count)
    start = time.perf_counter()
    reward.score_many(pairs)
    rows.append((f"RubricReward, {cores} threads", time.perf_counter() - start))
    table = Table(
        title=f"3. Offline judge on this machine ({cores} cores, embedding model preloaded)",
        title_justify="left",
    )
    for column in ("path", "answers", "seconds", "answers/s", "ms/answer", "model load s"):
        table.add_column(column, justify="right")
    for label, seconds in rows:
        table.add_row(
            label,
            str(count),
            f"{seconds:.2f}",
            f"{count / seconds:.1f}",
            f"{1000 * seconds / count:.1f}",
            f"{load:.1f}",
        )
    console.print(table)
    console.print(
        "- Specific criteria only (general ones are left unscored by this judge); time grows "
        "with the answer's sentence count (every sentence and adjacent pair is embedded, on "
        "CPU here). Ideal with N threads: N x the sequential rate, if the cores are free.",
        highlight=False,
    )


# --- 4. extrapolation to a GRPO run ------------------------------------------------------------


def part_grpo(
    costs: Sequence[ModeCost], steps: int, samples: int, batch: int, console: Console
) -> None:
    total = steps * samples * batch
    table = Table(
        title=f"4. LLM judge cost of a GRPO run: {steps} steps x {samples} samples x batch "
        f"{batch} = {total:,} answers (from part 1)",
        title_justify="left",
    )
    for column in (
        "mode",
        "judge calls",
        "prompt tokens",
        "completion tokens",
        "total tokens",
        "calls/step",
        "vs all",
    ):
        table.add_column(column, justify="right")
    base = sum(costs[0].per_answer[1:])
    for cost in costs:
        calls, prompt, completion = cost.per_answer
        table.add_row(
            cost.label,
            f"{calls * total:,.0f}",
            f"{prompt * total / 1e6:,.1f}M",
            f"{completion * total / 1e6:,.1f}M",
            f"{(prompt + completion) * total / 1e6:,.1f}M",
            f"{calls * samples * batch:,.0f}",
            f"{(prompt + completion) / base:.2f}x",
        )
    console.print(table)
    console.print(
        "- Tokens are the test server's word counts: multiply by the judge tokenizer's "
        "tokens-per-word ratio (about 1.3-1.5 for English with common BPE tokenizers). Policy "
        "answers are assumed as long as the reference answers here; longer answers cost more "
        "prompt tokens in every call. Real reasons may be longer than the scripted one.",
        highlight=False,
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "source",
        nargs="?",
        type=Path,
        help="a folder of papers (built offline here) or an instances.jsonl (default "
        "../shared/papers, else examples/papers; --quick: examples/papers)",
    )
    parser.add_argument("--latency", type=float, default=0.5, metavar="L")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 128], metavar="C")
    parser.add_argument("--waves", type=int, default=4, help="timed answers = waves x C")
    parser.add_argument("--per-instance", type=int, default=4, help="answers per instance, part 1")
    parser.add_argument("--offline-answers", type=int, default=24, help="answers per path, part 3")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: the example paper, L 0.1, C 8, one wave, 2 offline answers",
    )
    args = parser.parse_args()
    if args.source is None:
        args.source = EXAMPLE_PAPERS if args.quick else DEFAULT_PAPERS
    if args.quick:
        args.latency, args.concurrency, args.waves = 0.1, [8], 1
        args.per_instance, args.offline_answers = 1, 2
    if not args.source.exists():
        print(f"{args.source}: no such folder or file", file=sys.stderr)
        return 2
    console = Console(width=150)
    start = time.perf_counter()
    instances, origin = load_instances(args.source)
    if not instances:
        print(f"{args.source}: no instances", file=sys.stderr)
        return 2
    console.print(
        f"{len(instances)} instances from {origin} ({time.perf_counter() - start:.1f}s); "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (other work on this "
        "machine slows parts 2 and 3)",
        highlight=False,
    )
    costs = part_costs(instances, args.per_instance, console)
    part_throughput(instances, args.latency, args.concurrency, args.waves, console)
    part_offline(instances, args.offline_answers, console)
    part_grpo(costs, args.steps, args.samples, args.batch, console)
    bad = [c for c in costs if c.unscored or c.calls != c.expected]
    for cost in bad:
        console.print(
            f"[red]FAIL[/] mode {cost.label}: {cost.calls} calls (expected {cost.expected}), "
            f"{cost.unscored} unscored verdicts"
        )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
