"""A miniature of CycleResearcher's writer SFT → training by review (SPEC §5): does starting the
cycle from a writer fine-tuned on real papers (``papergym train write-sft``) end better than
starting it from the base model?

The task, the reviewer and the tiny base are those of ``benchmarks/cycle_reproduction.py`` (read
its docstring): "Write a paper titled *coral drift*. References: zomi, fivo, kabe.", a checkable
structure reviewer (sections in order, only the input's keys cited), and a tiny Llama pretrained
per seed with two coin-flip habits (cite ``smith`` instead of the second key; skip Results).

**The real papers** are the training inputs' papers written correctly (every section, the
input's own keys): the ``sft.jsonl`` of the write-prepare folder, as ``write prepare`` would
make from real LaTeX papers. **Arms**, per seed, from the same base: *base → cycle* (SimPO +
NLL, the cycle_reproduction budget) and *write-sft → cycle* (``run_write_sft``: TRL SFT with
LoRA on those papers, then the same cycle with ``cycle.init_from`` set to its run). **Held-out
score**: 4 papers per held-out input at T = 0.4, by the same reviewer, after each stage.
Intervals are 95% percentile bootstraps over seeds; differences are paired by seed, with
wins/ties/losses and an exact sign test; a difference *holds* when its interval excludes 0.

**What a tiny model cannot show**: whether SFT on real papers makes a writer of *papers* (the
task is six lines, and the "real papers" are perfect by construction, so SFT is imitation of
the reviewer's own criteria); how SFT and the cycle interact at 12B with a learned reviewer
(CycleReviewer), or with long contexts. It shows the wiring (write-sft's weights are what round
1 of the cycle starts from), and whether, on a task where the base's habits are partly
unreachable by the cycle's pairs, a supervised start changes where the cycle ends.

Results: see docs/cycle.md ("Writer SFT → cycle, in miniature"), with the command and date.

    OMP_NUM_THREADS=1 python benchmarks/write_sft_miniature.py [--seeds 1 2 3] [--rounds 2] [--quick]

Needs nothing from ../shared (the task is synthetic); ``--quick`` is the smoke run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cycle_reproduction as task
import torch
from rich.console import Console
from rich.table import Table

from papergym.eval.stats import bootstrap_mean, paired_difference, sign_test
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.review.reward import ReviewReward
from papergym.settings.train import TrainConfig
from papergym.train.cycle.run import run_cycle
from papergym.train.run import quiet_libraries
from papergym.train.write_sft import run_write_sft
from papergym.write.data import WriteExample

DEFAULT_WORK_DIR = task.ROOT / "runs" / "write_sft_miniature"
ARMS = ("base→cycle", "write-sft→cycle")


def write_data(world: task.World, folder: Path) -> Path:
    """The task's write-prepare folder with ``sft.jsonl`` holding the real (correct) papers."""
    task.write_data(world, folder)
    examples = [
        WriteExample(
            id=f"in{index:02d}",
            source=title,
            title=title,
            split="train",
            system="",
            prompt=task.prompt_of(title, world.keys[title]),
            completion=task.paper(title, world.keys[title], popular=False, skip_results=False),
            keys=world.keys[title],
        )
        for index, title in enumerate(world.train)
    ]
    write_jsonl(folder / "sft.jsonl", examples)
    return folder


def sft_config(base: Path, data: Path, out: Path, seed: int, steps: int) -> TrainConfig:
    """write-sft's configuration: the cycle's LoRA and learning rate, 4 papers a step."""
    budget = task.Budget()
    return TrainConfig.model_validate(
        {
            "output_dir": str(out),
            "seed": seed,
            "model": {"name_or_path": str(base), "dtype": "float32"},
            "lora": {"r": budget.lora_r, "alpha": 2 * budget.lora_r},
            "sft": {
                "steps": steps,
                "learning_rate": budget.learning_rate,
                "batch_size": 4,
                "max_length": 512,
                "save_every": max(steps, 1),
                "keep_checkpoints": 1,
            },
            "cycle": {"data": str(data)},
        }
    )


def run_arm(
    arm: str, base: Path, data: Path, work: Path, seed: int, budget: task.Budget, sft_steps: int
) -> dict[str, Any]:
    """One arm's held-out scores by stage (base, [after SFT], after each round)."""
    world = task.make_world()
    held_out = [task.held_out_score(str(base), world, budget, seed)]
    config = task.method_config("SimPO+NLL", base, data, work / arm, seed, budget)
    if arm == "write-sft→cycle":
        sft_run = work / "write-sft"
        sft = run_write_sft(sft_config(base, data, sft_run, seed, sft_steps))
        held_out.append(task.held_out_score(sft["final_model"], world, budget, seed))
        cycle = config.cycle.model_copy(update={"init_from": sft_run.resolve()})
        config = config.model_copy(update={"cycle": cycle})
    summary = run_cycle(config, ReviewReward(task.reviewer_for(world)), None)
    held_out += [task.held_out_score(r["model"], world, budget, seed) for r in summary["rounds"]]
    pairs = [r["pairs"] for r in summary["rounds"]]
    return {"held_out": held_out, "pairs": pairs}


def run_seed(
    seed: int, args: argparse.Namespace, budget: task.Budget, base_settings: task.BaseSettings
) -> dict[str, Any]:
    world = task.make_world()
    work = args.work_dir / f"seed{seed}"
    data = write_data(world, args.work_dir / "data")
    result: dict[str, Any] = {"seed": seed, "arms": {}}
    with task.captured(args.work_dir / "log.txt"):
        base = task.base_model(world, base_settings, seed, args.work_dir / "cache")
    for arm in ARMS:
        clock = time.perf_counter()
        with task.captured(args.work_dir / "log.txt"):
            result["arms"][arm] = run_arm(arm, base, data, work, seed, budget, args.sft_steps)
        shown = " ".join(f"{v:.3f}" for v in result["arms"][arm]["held_out"])
        print(f"seed {seed} {arm}: held-out {shown} ({time.perf_counter() - clock:.0f}s)")
    return result


def cell(values: Sequence[float]) -> str:
    e = bootstrap_mean(values, resamples=2000, seed=0)
    assert e.value is not None
    if len(values) < 2 or e.low is None or e.high is None:
        return f"{e.value:.3f}"
    return f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]"


def difference(a: Sequence[float], b: Sequence[float]) -> tuple[str, bool]:
    """Paired a − b over seeds, its interval, wins/ties/losses, sign test; and whether it holds."""
    diff = paired_difference(a, b, resamples=2000, seed=0)
    wins = sum(x > y for x, y in zip(a, b, strict=True))
    losses = sum(x < y for x, y in zip(a, b, strict=True))
    holds = len(a) >= 2 and diff.low is not None and diff.high is not None
    holds = holds and (diff.low > 0 or diff.high < 0)  # type: ignore[operator]
    interval = f" [{diff.low:+.3f}, {diff.high:+.3f}]" if len(a) >= 2 else ""
    text = (
        f"{diff.value:+.3f}{interval}  {wins}/{len(a) - wins - losses}/{losses}  "
        f"p={sign_test(wins, losses):.3f}"
    )
    return text, holds


def report(results: list[dict[str, Any]], console: Console) -> None:
    base_arm = [r["arms"]["base→cycle"]["held_out"] for r in results]
    sft_arm = [r["arms"]["write-sft→cycle"]["held_out"] for r in results]
    table = Table(title=f"Held-out review score ({len(results)} seeds; 95% bootstrap over seeds)")
    for column in (
        "arm",
        "base",
        "after write-sft",
        *(f"round {i}" for i in range(1, len(base_arm[0]))),
    ):
        table.add_column(column)
    rounds = len(base_arm[0]) - 1
    table.add_row("base→cycle", cell([s[0] for s in base_arm]), "-",
                  *(cell([s[i] for s in base_arm]) for i in range(1, rounds + 1)))  # fmt: skip
    table.add_row("write-sft→cycle", cell([s[0] for s in sft_arm]), cell([s[1] for s in sft_arm]),
                  *(cell([s[i + 1] for s in sft_arm]) for i in range(1, rounds + 1)))  # fmt: skip
    console.print(table)
    rows = [
        ("final: write-sft→cycle − base→cycle", [s[-1] for s in sft_arm], [s[-1] for s in base_arm]),
        ("write-sft alone − base", [s[1] for s in sft_arm], [s[0] for s in sft_arm]),
        ("base→cycle: final − base", [s[-1] for s in base_arm], [s[0] for s in base_arm]),
        ("write-sft→cycle: final − after write-sft", [s[-1] for s in sft_arm], [s[1] for s in sft_arm]),
    ]  # fmt: skip
    diffs = Table(title="Paired by seed: difference [95% interval]  wins/ties/losses  sign test")
    for column in ("comparison", "value", "holds"):
        diffs.add_column(column)
    for name, a, b in rows:
        text, holds = difference(a, b)
        diffs.add_row(name, text, "yes" if holds else "no")
    console.print(diffs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=8, help="cycle optimiser steps per round")
    parser.add_argument("--sft-steps", type=int, default=16, help="write-sft optimiser steps")
    parser.add_argument("--work-dir", type=Path, help=f"default {DEFAULT_WORK_DIR}")
    parser.add_argument("--from-json", type=Path, help="print the tables of a saved run")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run (numbers mean nothing): one seed, one round of one step, 2 SFT steps, a "
        "base pretrained a few steps, in a temporary WORK_DIR unless --work-dir is given",
    )
    args = parser.parse_args(argv)
    console = Console()
    if args.from_json:
        report(json.loads(args.from_json.read_text(encoding="utf-8")), console)
        return 0
    if args.work_dir is None and args.quick:
        with tempfile.TemporaryDirectory(prefix="write-sft-miniature-quick-") as tmp:
            args.work_dir = Path(tmp)
            return run(args, console)
    args.work_dir = args.work_dir or DEFAULT_WORK_DIR
    return run(args, console)


def run(args: argparse.Namespace, console: Console) -> int:
    torch.set_num_threads(1)
    quiet_libraries()
    budget = task.Budget(rounds=args.rounds, steps=args.steps)
    base_settings = task.BaseSettings()
    if args.quick:
        args.seeds, args.sft_steps = args.seeds[:1], 2
        budget = task.Budget(rounds=1, steps=1, eval_samples=1, max_new_tokens=24)
        base_settings = task.QUICK_BASE
    started = time.perf_counter()
    results = []
    for seed in args.seeds:
        results.append(run_seed(seed, args, budget, base_settings))
        write_text_atomic(args.work_dir / "results.json", json.dumps(results, indent=1))
    report(results, console)
    console.print(
        f"total {time.perf_counter() - started:.0f}s; results in {args.work_dir / 'results.json'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
