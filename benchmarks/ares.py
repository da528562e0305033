"""ARES at scale: memory as the corpus grows, LLM calls the prefilter saves, runner overhead.

1. Memory: the runner over synthetic corpora of 1k and 10k documents with the prefilter step, and
   of 200 and 1000 with both offline steps (prefilter, domain by MiniLM embedding: a few documents
   a second on a shared CPU), each run in a fresh process; peak RSS (ru_maxrss) beside the RSS
   before the run (imports, and the embedding model when used), and the ratio of the two peaks:
   flat means ~1.0.
2. Throughput: the smaller corpus through the runner (shards, progress records, bounded
   concurrency) beside a bare loop calling the same steps one document after another with no
   output: the ratio is what the runner costs or gains.
3. Prefilter: a mixed corpus (good pages and junk: menus, tables, boilerplate, stubs) through the
   LLM steps against the scripted loopback server (papergym.recipes.ares.scripted), with the
   prefilter on and off: LLM calls, kept instances and calls per kept instance.
4. Demo: examples/corpus against the scripted server: drops by step and reason.
5. Embedding batching: the offline steps through the runner with the domain step's embedder
   batching the documents in flight (BatchingEmbedder, the default) and with one embedding call
   per document (as before), same corpus, separate processes; documents a second, the ratio,
   embedding calls, and whether both runs chose the same domains.
6. Paper sections (``--only-sections DIR``, alone): every section of the papers under DIR
   (``../shared/papers``), as papergym's ingestion reads them, taken as one document each,
   through the LLM steps against the scripted server with the prefilter on and off: drops by
   step and reason, LLM calls, calls per kept instance, and how many of the sections the
   prefilter drops the scripted classifier would have kept (docs/ares.md quotes it).

    python benchmarks/ares.py [--sizes 1000 10000] [--embed-sizes 200 1000] [--mixed 200]
                              [--batching 200] [--skip-memory] [--only-batching] [--quick]
    python benchmarks/ares.py --only-sections ../shared/papers

``--quick``: a smoke run of parts 1-5 at toy sizes (200 documents, no embedding memory run,
8 mixed, the demo's web pages only, 4 for batching), so that the benchmark cannot rot
unnoticed (``.ci/run`` runs it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "corpus"

TOPICS = [
    ("blood pressure", "patients", "a home monitor"),
    ("bicycle chains", "riders", "a chain-wear gauge"),
    ("sourdough starters", "bakers", "a kitchen scale"),
    ("roof insulation", "home owners", "a moisture meter"),
    ("tax deadlines", "freelancers", "a spreadsheet"),
    ("river flooding", "town planners", "a gauge station"),
]
SENTENCES = [
    "Experts on {t} advise {p} to check the basics regularly, because small problems grow quietly.",
    "A common mistake with {t} is to trust a single observation instead of several taken over days.",
    "Using {tool} gives {p} more reliable information than guessing from memory or habit.",
    "The first step is to record the current state, so that later changes can be compared fairly.",
    "When the results look unusual, {p} should repeat the measurement before acting on it.",
    "Small, steady changes usually work better than a single drastic intervention made in a hurry.",
    "Some warning signs need urgent attention from a professional rather than a home remedy.",
    "Keeping a simple written log helps {p} notice slow trends that are easy to miss otherwise.",
    "Costs stay lower when problems with {t} are caught early instead of after a breakdown.",
    "Guides written for {p} often skip the reasons behind each rule, which makes them easy to forget.",
]
JUNK = [
    "Home\nProducts\nPricing\nAbout\nContact\nLog in\nSign up\n",
    "Accept all cookies\nPrivacy policy\nTerms of use\nAll rights reserved.\n" * 6,
    "\n".join(f"{2000 + i} | {i * 13 % 97} | {i * 7 % 31} | {i * 3 % 11}" for i in range(50)),
    "Opening hours: 9 to 5, Monday to Friday.",
    "lorem ipsum dolor sit amet " * 60,
]


def good_document(index: int, rng: random.Random) -> str:
    topic, people, tool = TOPICS[index % len(TOPICS)]
    lines = [s.format(t=topic, p=people, tool=tool) for s in SENTENCES]
    rng.shuffle(lines)
    body = " ".join(lines)
    return f"A practical note on {topic}, number {index}\n\n{body}\n\n{body}\n\nNote {index} ends here."


def write_corpus(path: Path, count: int, junk_share: float = 0.0, seed: int = 0) -> Path:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            if rng.random() < junk_share:
                text = JUNK[i % len(JUNK)] + f"\n(item {i})"
            else:
                text = good_document(i, rng)
            handle.write(json.dumps({"id": f"doc-{i:06d}", "text": text}) + "\n")
    return path


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


# --- 1 and 2: memory and throughput (in a child process each) -----------------------------------


def child_offline(
    count: int, bare: bool, embedding: bool, unbatched: bool = False
) -> dict[str, Any]:
    """Run the offline steps over a fresh corpus of ``count`` documents; the numbers as JSON.

    ``embedding`` False keeps the prefilter alone: the domain step embeds every document with
    MiniLM on the CPU (a few documents a second on a shared 2-core machine), which would make a
    10k-document run take an hour while adding a constant amount of memory (the model).
    """
    from papergym.embed import embed
    from papergym.jsonl import iter_jsonl
    from papergym.recipes.ares.batching import BatchingEmbedder
    from papergym.recipes.ares.build import AresJob, open_corpus
    from papergym.recipes.ares.pipeline import ares_steps
    from papergym.recipes.ares.record import AresDraft
    from papergym.recipes.ares.runner import AresRunner
    from papergym.recipes.steps import Reject

    config = AresJob()
    calls = 0

    def counted(texts: Any) -> Any:
        nonlocal calls
        calls += 1
        return embed(texts)

    embedder: Any = counted if unbatched or bare else BatchingEmbedder(counted)
    steps = ares_steps(config.ares, config.audit, None, embedder)
    if embedding:
        embed(["load the embedding model before measuring"])
    else:
        steps = [s for s in steps if s.name == "prefilter"]
    with tempfile.TemporaryDirectory() as tmp:
        corpus_path = write_corpus(Path(tmp) / "corpus.jsonl", count)
        corpus = open_corpus([corpus_path], config.ares)
        before = rss_mb()
        start, cpu = time.perf_counter(), time.process_time()
        domains: list[str | None] | None = None
        if bare:

            async def loop() -> int:
                kept = 0
                for entry in corpus:
                    record: Any = AresDraft.start(entry.item)  # type: ignore[arg-type]
                    for step in steps:
                        record = await step.run(record)
                        if isinstance(record, Reject):
                            break
                    kept += not isinstance(record, Reject)
                return kept

            kept = asyncio.run(loop())
        else:
            runner = AresRunner(
                out=Path(tmp) / "out",
                corpus=corpus,
                steps=steps,
                start=AresDraft.start,
                finish=lambda d: d,
                kept_model=AresDraft,
                shard_size=config.ares.shard_size,
                concurrency=config.ares.concurrency,
            )
            kept = asyncio.run(runner.run()).kept
            domains = [
                d.domain
                for p in sorted((Path(tmp) / "out").glob("kept-*.jsonl"))
                for d in iter_jsonl(p, AresDraft)
            ]
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
    return {
        "cpu_seconds": cpu,
        "count": count,
        "kept": kept,
        "seconds": seconds,
        "before": before,
        "peak": rss_mb(),
        "embed_calls": calls,
        "domains": domains,
    }


def run_child(
    count: int, bare: bool, embedding: bool = False, unbatched: bool = False
) -> dict[str, Any]:
    args = [sys.executable, __file__, "--child", str(count)]
    args += (["--bare"] if bare else []) + (["--embedding"] if embedding else [])
    args += ["--unbatched"] if unbatched else []
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def memory(sizes: list[int], embedding: bool, console: Console) -> None:
    rows = [run_child(n, bare=False, embedding=embedding) for n in sizes]
    steps = "prefilter and domain by embedding" if embedding else "prefilter"
    table = Table(title=f"Memory: {steps}, one process per corpus size", title_justify="left")
    for column in ("documents", "kept", "seconds", "RSS before MB", "peak RSS MB", "growth MB"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            f"{row['count']:,}",
            f"{row['kept']:,}",
            f"{row['seconds']:.1f}",
            f"{row['before']:.0f}",
            f"{row['peak']:.0f}",
            f"{row['peak'] - row['before']:.0f}",
        )
    console.print(table)
    if len(rows) >= 2:
        console.print(
            f"peak RSS ratio {rows[-1]['count']:,} / {rows[0]['count']:,} documents: "
            f"{rows[-1]['peak'] / rows[0]['peak']:.2f} "
            f"(corpus {rows[-1]['count'] / rows[0]['count']:.0f}x)"
        )
    bare = run_child(sizes[0], bare=True, embedding=embedding)
    runner = rows[0]
    table = Table(title=f"Throughput, {sizes[0]:,} documents, {steps}", title_justify="left")
    for column in ("", "documents/s", "ratio"):
        table.add_column(column, justify="right")
    table.add_row("bare loop (no output)", f"{bare['count'] / bare['seconds']:.1f}", "1.00")
    table.add_row(
        "runner (shards, progress)",
        f"{runner['count'] / runner['seconds']:.1f}",
        f"{bare['seconds'] / runner['seconds']:.2f}",
    )
    console.print(table)


# --- 5: batching the domain step's embeddings ----------------------------------------------------


def batching(count: int, console: Console) -> None:
    runs = {
        name: run_child(count, bare=False, embedding=True, unbatched=name == "one per document")
        for name in ("one per document", "batched (default)")
    }
    base = runs["one per document"]
    table = Table(
        title=f"Offline steps with MiniLM, {count:,} documents: embedding calls batched or not",
        title_justify="left",
    )
    columns = ("embedder", "documents/s", "ratio", "documents / CPU s", "ratio", "embed calls")
    for column in columns:
        table.add_column(column, justify="right")
    for name, run in runs.items():
        table.add_row(
            name,
            f"{run['count'] / run['seconds']:.1f}",
            f"{base['seconds'] / run['seconds']:.2f}",
            f"{run['count'] / run['cpu_seconds']:.1f}",
            f"{base['cpu_seconds'] / run['cpu_seconds']:.2f}",
            f"{run['embed_calls']:,}",
        )
    console.print(table)
    same = runs["batched (default)"]["domains"] == base["domains"]
    console.print(f"same domains for every kept document: {same}")


# --- 3 and 4: LLM calls against the scripted server ----------------------------------------------


def llm_build(paths: list[Path], prefilter: bool, out: Path | None = None) -> tuple[Any, int]:
    """The build's result and the chat requests the scripted server answered (no cache); the
    build goes to ``out`` when given, else to a folder removed after."""
    from papergym.fakellm import FakeOpenAIServer
    from papergym.llm.config import BackendConfig, LLMConfig
    from papergym.recipes.ares.build import AresJob, open_corpus, run_shards
    from papergym.recipes.ares.scripted import AresScript

    with FakeOpenAIServer(responder=AresScript()) as server, tempfile.TemporaryDirectory() as tmp:
        llm = LLMConfig(default=BackendConfig(model="m", base_url=server.base_url), cache=False)
        config = AresJob(llm=llm)
        config = config.model_copy(
            update={"ares": config.ares.model_copy(update={"prefilter": prefilter})}
        )
        corpus = open_corpus(paths, config.ares)
        result = asyncio.run(run_shards(corpus, out or Path(tmp), config))
        return result, server.request_count


def prefilter_savings(count: int, console: Console) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp) / "mixed.jsonl", count, junk_share=0.4, seed=1)
        runs = {on: llm_build([corpus], on) for on in (True, False)}
    table = Table(
        title=f"LLM calls, {count} documents (40% junk), scripted server", title_justify="left"
    )
    for column in ("prefilter", "calls", "kept", "calls / kept instance", "classifier calls"):
        table.add_column(column, justify="right")
    for on, (result, calls) in runs.items():
        classify = sum(
            r.calls for (stage, _, _), r in result.usage.rows.items() if "classify" in stage
        )
        table.add_row(
            "on" if on else "off",
            f"{calls:,}",
            f"{result.kept:,}",
            f"{calls / max(result.kept, 1):.2f}",
            f"{classify:,}",
        )
    console.print(table)
    saved = runs[False][1] - runs[True][1]
    console.print(f"the prefilter saves {saved:,} calls ({saved / runs[False][1]:.0%})")


def demo(console: Console, quick: bool = False) -> None:
    result, calls = llm_build([DEMO / "web-pages.jsonl"] if quick else [DEMO], True)
    table = Table(
        title=f"Demo corpus ({result.documents} documents) against the scripted server: "
        f"{result.kept} instances, {calls} calls",
        title_justify="left",
    )
    for column in ("step", "reason", "count"):
        table.add_column(column)
    for (step, reason), count in Counter(result.drops).most_common():
        table.add_row(step, reason, str(count))
    console.print(table)


def sections(papers: Path, console: Console) -> None:
    """Part 6: the sections of the papers under ``papers`` as documents, prefilter on and off."""
    from papergym.ingestion import ingest

    found = ingest(papers)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "sections.jsonl"
        rows = [
            {"id": f"{paper.id}-{n}", "text": section.text}
            for paper in found
            for n, section in enumerate(paper.sections)
        ]
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        runs = {on: llm_build([corpus], on, Path(tmp) / f"out-{on}") for on in (True, False)}
        kept = {on: _kept_documents(Path(tmp) / f"out-{on}") for on in runs}
        dropped = _dropped(Path(tmp) / "out-True", "prefilter")
    table = Table(
        title=f"{len(rows)} sections of {len(found)} papers as documents, scripted server",
        title_justify="left",
    )
    for column in ("prefilter", "kept", "drops by step: reason", "calls", "calls / kept"):
        table.add_column(column, justify="left" if column.startswith("drops") else "right")
    for on, (result, calls) in runs.items():
        drops = ", ".join(
            f"{step}: {reason.split(':')[0]} {count}"
            for (step, reason), count in Counter(result.drops).most_common()
        )
        table.add_row(
            "on" if on else "off",
            str(result.kept),
            drops,
            f"{calls:,}",
            f"{calls / max(result.kept, 1):.2f}",
        )
    console.print(table)
    console.print(
        f"the prefilter drops {len(dropped)} section(s), {len(dropped & kept[False])} of which "
        "the run without it kept"
    )


def _kept_documents(out: Path) -> set[str]:
    """The corpus ids of the documents a build made instances of."""
    lines = [line for p in out.glob("instances-*.jsonl") for line in p.read_text().splitlines()]
    return {json.loads(line)["source_path"].split("#", 1)[1] for line in lines}


def _dropped(out: Path, step: str) -> set[str]:
    lines = [line for p in out.glob("dropped-*.jsonl") for line in p.read_text().splitlines()]
    return {d["paper_id"] for d in map(json.loads, lines) if d["step"] == step}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--mixed", type=int, default=200)
    parser.add_argument("--embed-sizes", type=int, nargs="*", default=[200, 1000])
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--batching", type=int, default=200)
    parser.add_argument("--only-batching", action="store_true")
    parser.add_argument("--unbatched", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--embedding", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="a smoke run at toy sizes")
    parser.add_argument(
        "--only-sections", type=Path, metavar="DIR", help="part 6 alone, on the papers in DIR"
    )
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.embed_sizes, args.mixed, args.batching = [200], [], 8, 4
    if args.child:
        print(json.dumps(child_offline(args.child, args.bare, args.embedding, args.unbatched)))
        return
    console = Console()
    if args.only_sections:
        sections(args.only_sections, console)
        return
    if args.only_batching:
        batching(args.batching, console)
        return
    if not args.skip_memory:
        memory(args.sizes, False, console)
        if args.embed_sizes:
            memory(args.embed_sizes, True, console)
    prefilter_savings(args.mixed, console)
    demo(console, args.quick)
    if args.batching:
        batching(args.batching, console)


if __name__ == "__main__":
    main()
