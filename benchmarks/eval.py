"""``papergym eval`` (and ``compare``) throughput through the LLM layer, against a bare SDK loop.

For each injected server latency L and concurrency C, Q distinct questions go through three
phases, each ``asyncio.gather``-ed at once as the commands do:

* ``generate`` - one answer per question from an endpoint system (Q calls);
* ``judge``    - the rubric reward with the LLM judge, ``criteria_per_call: all``: a specific
  and a general pass per answer (2Q calls, every verdict an HTTP request);
* ``compare``  - ``papergym compare``'s judge on two systems' answers, every ordering shown
  (2 orderings x Q calls).

Two clients do the same calls in the same run, each against its own fresh
``papergym fake-llm`` process (plausible answers, so the judge's numbered verdicts parse):

* ``bare`` - one ``openai.AsyncOpenAI`` with an ``asyncio.Semaphore(C)`` around
  ``chat.completions.create``, sending the same prompts (built with the same prompt functions)
  and JSON schemas; no validation, no cache, no records. The least a client can do.
* ``ours`` - the eval module's own code: ``resolve_system`` + ``system_client`` +
  ``generate`` (answers appended to ``answers.jsonl``), ``eval_reward`` + ``score_answers``
  (``scores.jsonl``), then compare's ``plan_tasks`` + ``run_tasks`` (``verdicts.jsonl``);
  ``llm.max_concurrency`` and ``eval.max_concurrency`` are C, the SQLite response cache is on
  (fresh, so every lookup misses), answers are validated and usage is accounted.

Both get the same few un-timed warm-up questions first. How to read the table:

* ``ideal`` is C/L, what a client with zero overhead reaches; ``eff`` = req/s / ideal.
* ``ours/bare`` is the throughput ratio of the phase (target >= 0.9).
* ``CPU ms/call`` is the client process's CPU per call (the fake server runs in its own
  process on the same machine: on a small machine both compete for the cores).
* ``HTTP`` is the chat requests the server saw during the timed phases, all phases together.

Below the table: judge calls per answer and per comparison (measured, and by the design for
more systems), tokens per answer, and per cell whether the client was latency- or CPU-bound.

    python benchmarks/eval.py [--latencies 1 0.2] [--concurrency 64 256] [--questions Q]
                              [--seconds S] [--max-questions N] [--timeout S] [--quick]
                              [--bare-pool] [--no-cache] [--profile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import openai
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from papergym.eval.compare_judge import plan_tasks, resolve_judges, run_tasks
from papergym.eval.compare_prompt import answer_schema, compare_messages, setup_id, shown_answer
from papergym.eval.compare_records import CompareVerdict
from papergym.eval.evaluate import (
    eval_reward,
    generate,
    messages_for,
    score_answers,
    system_client,
)
from papergym.eval.log import RecordLog
from papergym.eval.orderings import design, orderings_of
from papergym.eval.records import EvalAnswer, EvalScore
from papergym.eval.systems import resolve_system
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.structured import response_format_for
from papergym.llm.types import Message, SamplingParams
from papergym.llm.usage import UsageTracker
from papergym.records import Instance
from papergym.reward.judge import GENERAL_STAGE, SPECIFIC_STAGE, judge_messages, judgement_schema
from papergym.reward.reward import RubricReward
from papergym.settings.models import EvalSection, PaperGymConfig, RewardSection

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the shared rubrics
from fake_server import ServerProcess, bare_chat, fake_server, raise_open_files_limit

from support.reward_load import mixed_instances

POLICY_MODEL = "policy-fake"
JUDGE_MODEL = "judge-fake"
WARMUP = 8
PHASES = ("generate", "judge", "compare")
CONTEXT = (
    "We study this in a setting where compute is limited and the data are noisy. Earlier work "
    "either ignores the cost or assumes clean labels. The plan should say what is built, how "
    "it is trained and how it is evaluated against strong baselines."
)

T = TypeVar("T")


# --- questions ---------------------------------------------------------------------------------


def questions(count: int, offset: int) -> list[Instance]:
    """``count`` distinct questions (distinct ids and text, so no answer or verdict is shared
    through a cache), cycling over the shared load rubrics (4 specific + 7 general criteria)."""
    bases = mixed_instances()
    out = []
    for index in range(count):
        base = bases[index % len(bases)]
        number = offset + index
        out.append(
            base.model_copy(
                update={
                    "id": f"q{number}",
                    "question": f"{base.question} (Case {number}.) {CONTEXT}",
                }
            )
        )
    return out


def other_answer(answer: str) -> str:
    """System b's answer to a question: a different plan than system a's."""
    return f"{answer} We also add an ablation of each component."


# --- measurements ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phase:
    """One timed phase of one client: calls made, wall and client-CPU seconds."""

    calls: int
    wall_s: float
    cpu_s: float

    @property
    def rps(self) -> float:
        return self.calls / self.wall_s if self.wall_s else 0.0

    @property
    def cpu_ms(self) -> float:
        return 1000 * self.cpu_s / self.calls if self.calls else 0.0


@dataclass
class Run:
    """One client's three phases, what the server saw, and (ours) what the LLM layer counted."""

    label: str
    phases: dict[str, Phase] = field(default_factory=dict)
    warmup_calls: int = 0
    http: int = -1
    max_in_flight: int = -1
    answers: int = 0
    comparisons: int = 0
    tokens: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Phase → (prompt, completion) tokens the LLM layer accounted (ours only)."""
    unscored: int = 0
    unparsed: int = 0
    server_cpu_s: float | None = None
    """The fake server's CPU during the timed phases."""

    @property
    def total(self) -> Phase:
        ps = self.phases.values()
        return Phase(sum(p.calls for p in ps), sum(p.wall_s for p in ps), sum(p.cpu_s for p in ps))


async def timed(work: Awaitable[T]) -> tuple[T, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = await work
    return result, time.perf_counter() - wall, time.process_time() - cpu


# --- ours: the eval module's code path ---------------------------------------------------------


def ours_config(
    base_url: str, concurrency: int, cache_dir: Path, cache: bool = True
) -> PaperGymConfig:
    """An LLM judge role at the fake server, C requests in flight per endpoint, a fresh cache."""
    judge = BackendConfig(model=JUDGE_MODEL, base_url=(base_url,), max_concurrency=concurrency)
    return PaperGymConfig(
        llm=LLMConfig(default=judge, cache=cache, cache_dir=cache_dir),
        reward=RewardSection(judge="llm", criteria_per_call="all"),
        eval=EvalSection(max_concurrency=concurrency, max_tokens=1024),
    )


def _tokens(tracker: UsageTracker, stages: Callable[[str], bool]) -> tuple[int, int]:
    rows = [r for (stage, _, _), r in tracker.rows.items() if stages(stage)]
    return (
        sum(r.usage.prompt_tokens for r in rows),
        sum(r.usage.completion_tokens for r in rows),
    )


async def run_ours(
    base_url: str,
    concurrency: int,
    workdir: Path,
    warm: Sequence[Instance],
    batch: Sequence[Instance],
    server_cpu: Callable[[], float | None],
    cache: bool = True,
) -> Run:
    settings = ours_config(base_url, concurrency, workdir / "cache", cache)
    system = resolve_system(
        f"a=openai:{POLICY_MODEL}@{base_url}", concurrency=settings.eval.max_concurrency
    )
    tracker = UsageTracker()
    client = system_client(system, settings.llm, tracker)
    reward: RubricReward = eval_reward(settings)
    judge_llm: LLMClient = reward.judge.llm  # type: ignore[attr-defined]
    (judge,) = resolve_judges(["judge"], settings.llm)
    compare_client = LLMClient(judge.config, cache=judge_llm.cache, tracker=tracker)
    e = settings.eval
    params = SamplingParams(
        temperature=e.temperature, top_p=e.top_p, max_tokens=e.max_tokens, seed=e.seed
    )
    _, orderings = orderings_of(["a", "b"])
    run = Run("ours")

    async def phases(instances: Sequence[Instance], tag: str, record: bool) -> None:
        folder = workdir / tag
        folder.mkdir(parents=True)
        answers_log = RecordLog(folder / "answers.jsonl", EvalAnswer)
        scores_log = RecordLog(folder / "scores.jsonl", EvalScore)
        verdicts_log = RecordLog(folder / "verdicts.jsonl", CompareVerdict)
        by_id = {i.id: i for i in instances}
        calls = (tracker.calls, judge_llm.tracker.calls)

        failures, wall, cpu = await timed(
            generate(system, client, instances, params, 1, answers_log, set())
        )
        if failures:
            raise RuntimeError(f"generation failed: {failures[:3]}")
        answers = answers_log.read()
        gen = Phase(tracker.calls - calls[0], wall, cpu)

        _, wall, cpu = await timed(score_answers(reward, answers, by_id, scores_log))
        judged = Phase(judge_llm.tracker.calls - calls[1], wall, cpu)

        texts = {"a": {a.instance_id: a.answer for a in answers}}
        texts["b"] = {i: other_answer(t) for i, t in texts["a"].items()}
        tasks = plan_tasks(instances, orderings, [judge])
        before = tracker.calls
        outcome, wall, cpu = await timed(
            run_tasks(
                {judge.name: compare_client},
                tasks,
                texts,
                settings.compare,
                setup_id(settings.compare),
                lambda verdict: verdicts_log.append([verdict]),
            )
        )
        if outcome.failed:
            raise RuntimeError(f"compare failed: {outcome.failed[:3]}")
        if record:
            run.phases = {
                "generate": gen,
                "judge": judged,
                "compare": Phase(tracker.calls - before, wall, cpu),
            }
            run.answers, run.comparisons = len(answers), len(instances)
            scores = scores_log.read()
            run.unscored = sum(1 for s in scores for v in s.verdicts if v.passed is None) + sum(
                1 for s in scores if s.value is None
            )
            run.unparsed = sum(1 for v in outcome.verdicts if v.picks is None)
        else:
            run.warmup_calls = gen.calls + judged.calls + (tracker.calls - before)

    try:
        await phases(warm, "warmup", record=False)
        start = server_cpu()
        await phases(batch, "timed", record=True)
        run.server_cpu_s = cpu_between(start, server_cpu())
    finally:
        await client.aclose()
        await compare_client.aclose()
        await judge_llm.aclose()
    run.tokens = {
        "generate": _tokens(tracker, lambda s: s.startswith("eval:")),
        "judge": _tokens(judge_llm.tracker, lambda s: s in (SPECIFIC_STAGE, GENERAL_STAGE)),
        "compare": _tokens(tracker, lambda s: s == "compare"),
    }
    return run


# --- bare: the same calls through AsyncOpenAI and a semaphore ---------------------------------


async def run_bare(
    base_url: str,
    concurrency: int,
    warm: Sequence[Instance],
    batch: Sequence[Instance],
    server_cpu: Callable[[], float | None],
    pool: bool = False,
) -> Run:
    http: Any = None
    if pool:  # the SDK keeps 100 idle connections by default: above that, each round reconnects
        limits = type(openai.DEFAULT_CONNECTION_LIMITS)(
            max_connections=concurrency, max_keepalive_connections=concurrency
        )
        http = openai.DefaultAsyncHttpxClient(limits=limits)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, http_client=http)
    gate = asyncio.Semaphore(concurrency)
    schemas: dict[int, Any] = {}
    settings = PaperGymConfig()
    e, section = settings.eval, settings.compare

    async def chat(model: str, messages: list[Message], schema: type[BaseModel] | None) -> str:
        if schema is None:
            return await bare_chat(client, gate, model, messages, e.temperature, e.max_tokens)
        response_format = schemas.setdefault(id(schema), response_format_for(schema))
        return await bare_chat(client, gate, model, messages, 0.0, e.max_tokens, response_format)

    async def answer(instance: Instance) -> str:
        return await chat(POLICY_MODEL, messages_for(instance, None), None)

    async def judge(instance: Instance, text: str) -> None:
        specific = [c.text for c in instance.rubric.specific]
        general = [c.text for c in instance.rubric.general]
        await asyncio.gather(
            chat(
                JUDGE_MODEL,
                judge_messages(
                    "specific", instance.question, specific, text,
                    reference=instance.reference_answer,
                ),
                judgement_schema(len(specific)),
            ),
            chat(
                JUDGE_MODEL,
                judge_messages("general", instance.question, general, text),
                judgement_schema(len(general)),
            ),
        )  # fmt: skip

    async def compare(instance: Instance, shown: Sequence[str]) -> None:
        plans = [shown_answer(t, section.max_answer_chars)[0] for t in shown]
        await chat(JUDGE_MODEL, compare_messages(instance.question, plans), answer_schema(2))

    run = Run("bare")

    async def phases(instances: Sequence[Instance], record: bool) -> None:
        texts, wall_g, cpu_g = await timed(asyncio.gather(*(answer(i) for i in instances)))
        _, wall_j, cpu_j = await timed(
            asyncio.gather(*(judge(i, t) for i, t in zip(instances, texts, strict=True)))
        )
        pairs = [(t, other_answer(t)) for t in texts]
        _, orderings = orderings_of(["a", "b"])
        _, wall_c, cpu_c = await timed(
            asyncio.gather(
                *(
                    compare(i, [dict(zip(("a", "b"), pair, strict=True))[s] for s in ordering])
                    for i, pair in zip(instances, pairs, strict=True)
                    for ordering in orderings
                )
            )
        )
        n = len(instances)
        if record:
            run.phases = {
                "generate": Phase(n, wall_g, cpu_g),
                "judge": Phase(2 * n, wall_j, cpu_j),
                "compare": Phase(len(orderings) * n, wall_c, cpu_c),
            }
            run.answers, run.comparisons = n, n
        else:
            run.warmup_calls = (3 + len(orderings)) * n

    try:
        await phases(warm, record=False)
        start = server_cpu()
        await phases(batch, record=True)
        run.server_cpu_s = cpu_between(start, server_cpu())
    finally:
        await client.close()
    return run


# --- one cell ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    latency: float
    concurrency: int
    questions: int
    bare: Run
    ours: Run
    load: float

    @property
    def ideal(self) -> float:
        return self.concurrency / self.latency


def cpu_of(server: ServerProcess) -> Callable[[], float | None]:
    """The server's CPU seconds so far; None where ``/proc`` cannot tell (shown as unknown, not
    as a 0 that would read as a free server)."""
    return server.cpu_seconds


def cpu_between(start: float | None, end: float | None) -> float | None:
    return None if start is None or end is None else end - start


def run_loop(main: Awaitable[T], timeout: float) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main, timeout)

    return asyncio.run(bounded())


def measure_cell(
    latency: float,
    concurrency: int,
    count: int,
    workdir: Path,
    timeout: float,
    profile: cProfile.Profile | None,
    pool: bool = False,
    cache: bool = True,
) -> Cell:
    """Each client against its own fresh server, so the server's counts are its own."""
    warm, batch = questions(WARMUP, offset=10**6), questions(count, offset=0)
    load = os.getloadavg()[0]
    cell_dir = workdir / f"L{latency:g}-C{concurrency}"
    cell_dir.mkdir()
    with fake_server(latency, cell_dir / "server-bare.log", "plausible") as server:
        bare = run_loop(
            run_bare(server.base_url, concurrency, warm, batch, cpu_of(server), pool), timeout
        )
    bare.http, bare.max_in_flight = server.served - bare.warmup_calls, server.max_in_flight
    with fake_server(latency, cell_dir / "server-ours.log", "plausible") as server:
        if profile is not None:
            profile.enable()
        try:
            ours = run_loop(
                run_ours(
                    server.base_url,
                    concurrency,
                    cell_dir / "ours",
                    warm,
                    batch,
                    cpu_of(server),
                    cache,
                ),
                timeout,
            )
        finally:
            if profile is not None:
                profile.disable()
    ours.http, ours.max_in_flight = server.served - ours.warmup_calls, server.max_in_flight
    return Cell(latency, concurrency, count, bare, ours, load)


def default_questions(concurrency: int, latency: float, seconds: float, cap: int) -> int:
    """About ``seconds`` of generation at the ideal rate, at least 2 rounds of C, at most
    ``cap`` (CPU-bound cells run far below C/L and would take minutes)."""
    return max(2 * concurrency, min(cap, round(concurrency / latency * seconds)))


# --- reporting ---------------------------------------------------------------------------------


def table_of(cells: Sequence[Cell]) -> Table:
    table = Table(title="papergym eval + compare through the LLM layer vs a bare AsyncOpenAI loop")
    columns = (
        "L s", "C", "Q", "phase", "calls", "bare s", "ours s", "bare req/s", "ours req/s",
        "ideal", "ours eff", "ours/bare", "CPU ms/call bare", "CPU ms/call ours",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column == "phase" else "right")
    for index, cell in enumerate(cells):
        if index:
            table.add_section()
        for number, phase in enumerate((*PHASES, "all")):
            bare = cell.bare.total if phase == "all" else cell.bare.phases[phase]
            ours = cell.ours.total if phase == "all" else cell.ours.phases[phase]
            ratio = ours.rps / bare.rps if bare.rps else 0.0
            calls = (
                f"{ours.calls}"
                if ours.calls == bare.calls
                else f"[red]{ours.calls}/{bare.calls}[/]"
            )
            table.add_row(
                f"{cell.latency:g}" if number == 0 else "",
                f"{cell.concurrency}" if number == 0 else "",
                f"{cell.questions}" if number == 0 else "",
                phase,
                calls,
                f"{bare.wall_s:.2f}",
                f"{ours.wall_s:.2f}",
                f"{bare.rps:,.0f}",
                f"{ours.rps:,.0f}",
                f"{cell.ideal:,.0f}",
                f"{ours.rps / cell.ideal:.0%}",
                f"{ratio:.2f}" if ratio >= 0.9 else f"[red]{ratio:.2f}[/]",
                f"{bare.cpu_ms:.2f}",
                f"{ours.cpu_ms:.2f}",
            )
    return table


def notes_of(cells: Sequence[Cell], cores: int) -> list[str]:
    lines: list[str] = []
    first = cells[0].ours
    per_answer = first.phases["judge"].calls / first.answers
    per_comparison = first.phases["compare"].calls / first.comparisons
    by_design = ", ".join(f"{n} systems {len(design(n)[1])}" for n in range(2, 7))
    lines.append(
        f"judge calls per answer: {per_answer:g} (criteria_per_call=all: a specific and a general "
        f"pass; 'one' would make {len(mixed_instances()[0].rubric.specific)}+"
        f"{len(mixed_instances()[0].rubric.general)} per answer on these rubrics)"
    )
    lines.append(
        f"judge calls per comparison (question): {per_comparison:g} measured for 2 systems x 1 "
        f"judge; by the design, per judge: {by_design}"
    )
    for phase in PHASES:
        prompt, completion = first.tokens[phase]
        unit = first.comparisons if phase == "compare" else first.answers
        what = "question compared" if phase == "compare" else "answer"
        lines.append(
            f"tokens per {what} ({phase}): {prompt / unit:,.0f} prompt + "
            f"{completion / unit:,.0f} completion (the fake server's counts, 4 characters a token)"
        )
    for cell in cells:
        ours, bare = cell.ours.total, cell.bare.total
        expected = ours.calls
        http = [cell.bare.http, cell.ours.http]
        counts = (
            "server saw the same calls"
            if http == [expected, expected]
            else f"[red]server saw bare {http[0]}, ours {http[1]}, expected {expected}[/]"
        )
        client_cores = ours.cpu_ms / 1000 * cell.ideal
        server_s = cell.ours.server_cpu_s
        server_ms = None if server_s is None else 1000 * server_s / ours.calls
        server_cores = 0.0 if server_ms is None else server_ms / 1000 * cell.ideal
        server_text = (
            "fake-server CPU unknown (no /proc)"
            if server_ms is None
            else f"{server_cores:.2f} of fake-server CPU at {server_ms:.2f} ms/call"
        )
        if client_cores > 0.8 or client_cores + server_cores > 0.8 * cores:
            bound = (
                f"CPU-bound (C/L needs {client_cores:.2f} cores of client CPU, an event loop has "
                f"1, plus {server_text}; "
                f"{cores} cores, load average {cell.load:.1f} at the start)"
            )
        else:
            bound = f"latency-bound (ours needs {client_cores:.2f} of a core at C/L)"
        lines.append(
            f"L={cell.latency:g} C={cell.concurrency}: {bound}; ours/bare {ours.rps / bare.rps:.2f} "
            f"overall, CPU/call {ours.cpu_ms:.2f} vs {bare.cpu_ms:.2f} ms; {counts}; max in flight "
            f"bare {cell.bare.max_in_flight}, ours {cell.ours.max_in_flight}; ours unscored "
            f"verdicts {cell.ours.unscored}, unparsed comparisons {cell.ours.unparsed}"
        )
    return lines


# --- main --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latencies", type=float, nargs="+", default=[1.0, 0.2], metavar="L")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256], metavar="C")
    parser.add_argument("--questions", type=int, help="Q for every cell (default: scaled)")
    parser.add_argument(
        "--seconds", type=float, default=4.0, help="ideal seconds of generation per cell (sets Q)"
    )
    parser.add_argument("--max-questions", type=int, default=512, help="cap on the scaled Q")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="wall-clock limit per client run (s)"
    )
    parser.add_argument(
        "--bare-pool",
        action="store_true",
        help="give the bare client C keep-alive connections (default: the SDK's 100), as ours has",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="ours without the LLM response cache (llm.cache)"
    )
    parser.add_argument("--profile", type=Path, help="cProfile ours into FILE (pstats)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: L 0.1, C 16, Q 32")
    args = parser.parse_args()
    if args.quick:
        args.latencies, args.concurrency, args.questions = [0.1], [16], 32
    open_files = raise_open_files_limit()
    cores = os.cpu_count() or 1
    console = Console(width=170)
    console.print(
        f"{cores} cores, open-files limit {open_files}, openai {openai.__version__}, "
        f"{WARMUP} un-timed warm-up questions per client, load average "
        f"{os.getloadavg()[0]:.1f}",
        highlight=False,
    )
    profile = cProfile.Profile() if args.profile else None
    cells: list[Cell] = []
    with tempfile.TemporaryDirectory(prefix="papergym-eval-bench-") as tmp:
        for latency in args.latencies:
            for concurrency in args.concurrency:
                count = args.questions or default_questions(
                    concurrency, latency, args.seconds, args.max_questions
                )
                console.print(f"  L={latency:g}s C={concurrency} Q={count} ...", highlight=False)
                cells.append(
                    measure_cell(
                        latency,
                        concurrency,
                        count,
                        Path(tmp),
                        args.timeout,
                        profile,
                        args.bare_pool,
                        not args.no_cache,
                    )
                )
    console.print(table_of(cells))
    for line in notes_of(cells, cores):
        console.print(f"- {line}", highlight=False)
    if profile is not None:
        profile.dump_stats(args.profile)
        pstats.Stats(str(args.profile)).sort_stats("cumulative").print_stats(25)
    slow = [
        f"L={c.latency:g} C={c.concurrency} {p}"
        for c in cells
        for p in PHASES
        if c.ours.phases[p].rps < 0.9 * c.bare.phases[p].rps
    ]
    if slow:
        console.print("ours/bare below 0.9 in: " + ", ".join(slow), highlight=False)
    wrong = [
        c for c in cells if c.ours.http != c.ours.total.calls or c.bare.http != c.bare.total.calls
    ]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
