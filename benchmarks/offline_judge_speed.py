"""Offline judge speed: what caching criteria and batching answers buy, and the long-answer cost.

Rows, each timed as the best of ``--repeats`` runs on this machine (model preloaded):

1. ``one by one, uncached``: a GRPO step's answers (``--group``, default 8, no sentence shared
   between them, so batching cannot win by deduplicating) judged the way the
   judge worked before issue 23: the criteria embedded again for every answer, each answer's
   sentences and every adjacent pair embedded, one embedding call per answer.
2. ``batched, cached``: :meth:`OfflineJudge.judge_many` on the same answers (criteria vectors
   kept per rubric; all answers' sentences in one call; pair vectors from sentence vectors).
3. ``16k-char answer``: one answer of about 16,000 characters (reference sentences repeated
   with numbered variants so none is a duplicate) against embedding each of its sentences once.

The share of a GRPO step is an estimate: the batched reward time over (it + ``--step-seconds``,
the CPU step time with a free reward that ``benchmarks/train_throughput.py`` measured: 1.89 s).

    python benchmarks/offline_judge_speed.py [INSTANCES.jsonl] [--group 8] [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from papergym.embed import embed
from papergym.jsonl import read_jsonl
from papergym.records import Instance
from papergym.reward.offline import OfflineJudge, criterion_core
from papergym.text import split_sentences


def best_of(repeats: int, work: Callable[[], object]) -> float:
    """The fastest of ``repeats`` runs of ``work``, in seconds."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def old_way(instance: Instance, answers: list[str]) -> None:
    """The embedding calls the judge made before issue 23, one answer at a time."""
    for answer in answers:
        embed([criterion_core(c.text) for c in instance.rubric.specific])
        sentences = split_sentences(answer)
        embed(sentences + [f"{a} {b}" for a, b in itertools.pairwise(sentences)])


QUICK_INSTANCES = Path(__file__).resolve().parents[1] / "examples/judge-labels/instances.jsonl"


def distinct_answers(instances: list[Instance], count: int) -> list[str]:
    """``count`` answers sharing no sentence (as a GRPO group's samples): the instances'
    references in turn, each sentence numbered by the answer it is in."""
    return [
        " ".join(
            f"In answer {n}, {s}"
            for s in split_sentences(instances[n % len(instances)].reference_answer)
        )
        for n in range(count)
    ]


def long_answer(instance: Instance, chars: int = 16_000) -> str:
    """About ``chars`` characters of the reference's sentences, each made distinct."""
    sentences = split_sentences(instance.reference_answer)
    out: list[str] = []
    for n in itertools.count():
        out.append(f"In part {n}, {sentences[n % len(sentences)]}")
        if sum(len(s) + 1 for s in out) >= chars:
            return " ".join(out)
    raise AssertionError("unreachable")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "instances",
        type=Path,
        nargs="?",
        default=QUICK_INSTANCES,
        help="instances.jsonl (default: the small labelled set in examples/judge-labels)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="Smoke mode: 2 answers, one run per row."
    )
    parser.add_argument("--group", type=int, default=8, help="Answers per GRPO step.")
    parser.add_argument("--repeats", type=int, default=3, help="Runs per row; the best counts.")
    parser.add_argument("--step-seconds", type=float, default=1.89, help="Free-reward step time.")
    args = parser.parse_args()
    if args.quick:
        args.group, args.repeats = 2, 1
    instances = list(read_jsonl(args.instances, Instance))
    instance = instances[0]
    judge = OfflineJudge()
    answers = distinct_answers(instances, args.group)
    embed(["warm up"])
    old = best_of(args.repeats, lambda: old_way(instance, answers))
    new = best_of(args.repeats, lambda: judge.judge_many([(instance, a) for a in answers]))
    text = long_answer(instance)
    sentences = split_sentences(text)
    once = best_of(args.repeats, lambda: embed(sentences))
    judged = best_of(args.repeats, lambda: judge.judge_sync(instance, text))
    table = Table(title=f"Offline judge speed ({instance.title[:50]})")
    for column in ("measure", "seconds", "ratio"):
        table.add_column(column, justify="left" if column == "measure" else "right")
    table.add_row(f"{args.group} answers, one by one, uncached", f"{old:.3f}", "1.00")
    table.add_row(f"{args.group} answers, batched, cached", f"{new:.3f}", f"{new / old:.2f}")
    table.add_row(
        f"share of a GRPO step (free step {args.step_seconds} s)",
        "",
        f"{new / (new + args.step_seconds):.2f}",
    )
    table.add_row(f"embed the {len(sentences)} sentences once", f"{once:.3f}", "1.00")
    table.add_row(f"judge the {len(text):,}-char answer", f"{judged:.3f}", f"{judged / once:.2f}")
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
