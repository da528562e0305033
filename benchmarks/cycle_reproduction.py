"""A miniature of CycleResearcher's training by review (SPEC §5): does the held-out review score
rise round over round, and does SimPO + NLL beat SimPO alone and SFT on the chosen papers?

PaperGym's real loop (``papergym.train.cycle.run.run_cycle``: fresh third of the inputs per round,
3 papers per input at T = 0.4, ``ReviewReward``, best/worst pairs with ties and unscored
skipped, TRL's CPO trainer with ``loss_type="simpo"``) on a synthetic writing task a tiny model
can learn on two CPU cores.

**The task.** "Write a paper titled *coral drift*. References: zomi, fivo, kabe." A good paper
is six short lines: the title, then ``# Introduction`` citing the first key, ``# Method`` citing
the second, ``# Results`` citing the third, ``# Conclusion``. 36 titles (adjective × noun),
each with 3 keys drawn from 40 made-up words; 20 inputs train, 16 are held out.

**The reviewer** is checkable: :class:`~papergym.train.cycle.reviewers.StructureReviewer`
through ``ReviewReward``: seven checks (each of the four sections present, in order, something
cited, every cited key among the input's references, found by the paper's title line), rating
``1 + 9 × passed/7`` on the ICLR scale, reward = rating scaled to [0, 1].

**The base model** (tiny Llama, 2 layers, hidden 96, tokenizer trained on the task's words) is
pretrained per seed on random title/key combinations with two coin-flip habits: half the time
its Method section cites ``smith`` (a popular paper not in the references) instead of the
second key, and half the time it skips the Results section. Coin flips survive sampling at
T = 0.4 (a 50/50 choice stays near 50/50 when sharpened), so the base's three papers per input
often differ, and a reviewer that penalises the habits has something to prefer. The base scores
about 0.79; a perfect writer scores 1.0.

**Methods**, each from the same base per seed, with LoRA r 16, the same learning rate, the same
optimiser steps per round (``--steps``, 8 × 4 pairs) and the same inputs per round:
SimPO + NLL (β 2, γ 0.5, α 1), SimPO alone (α 0), SFT on the chosen papers (TRL SFTTrainer).
**Held-out score**: 4 papers per held-out input at T = 0.4 from each round's weights (round 0:
the base), scored by the same reviewer. Intervals are 95% percentile bootstraps over seeds
(``eval.stats``); differences are paired by seed, with wins/ties/losses and an exact sign test.

**Results** (seeds 1-5, 3 rounds, 8 steps × 4 pairs per round unless said; 2 CPU cores shared
with other jobs: 14 min with the base pretraining, 3.5 min with the bases cached; the JSON of
each run: ``runs/cycle_reproduction/results-*.json``, tables again with ``--from-json``). Held-out score, mean
over seeds [95% seed bootstrap]; differences paired by seed, wins/ties/losses (with 5 seeds the
smallest two-sided sign-test p is 0.062):

=============  =====================  =====================  =====================  =====================
loop T = 0.4   round 0 (base)         round 1                round 2                round 3
=============  =====================  =====================  =====================  =====================
SimPO + NLL    0.686 [0.657, 0.710]   0.824 [0.816, 0.831]   0.836 [0.827, 0.845]   0.850 [0.845, 0.856]
SimPO          0.686                  0.822 [0.812, 0.830]   0.837 [0.829, 0.844]   0.846 [0.836, 0.853]
SFT (chosen)   0.686                  0.817 [0.807, 0.826]   0.842 [0.832, 0.853]   0.852 [0.847, 0.855]
=============  =====================  =====================  =====================  =====================

- The held-out review score rises: round 3 − round 0 is +0.165 [+0.146, +0.188] for SimPO + NLL
  (5/0/0 seeds), +0.160 SimPO, +0.166 SFT. Almost all of it comes in round 1 (+0.14, 5/0/0).
- Later rounds add little (+0.01 to +0.03 a round, 2-3 of 5 seeds) because pairs dry up: at the
  paper's T = 0.4 the trained policy's three papers per input are mostly identical, so from
  round 2 about 6 of 7 inputs are skipped as ties (1 pair a round, against 5.8 in round 1). The
  tie count in each round's metrics is the signal to watch for this.
- With the loop at T = 1.0 (``--temperature 1.0``; held-out still at 0.4) pairs keep coming (4-5
  a round) and round 2 also rises in every seed (+0.04 [+0.02, +0.07], 5/0/0, SimPO + NLL), but
  round 3 plateaus at the same 0.85: 6 of the 7 checks. The remaining failure is citing the
  input's own key where the base writes ``smith`` or a wrong key; the tiny base copies keys too
  rarely for the sampled papers to contain the right one, so no pair teaches it.
- At 8 steps a round, **SimPO + NLL, SimPO alone and SFT on the chosen papers do not separate**:
  at round 3, SimPO + NLL − SimPO +0.005 [−0.003, +0.016] (2/2/1), SimPO + NLL − SFT −0.001
  [−0.011, +0.008] (1/2/2) at T = 0.4; +0.003 and −0.007 [−0.015, +0.000] at T = 1.0.
- At 32 steps a round (``--steps 32``, T = 0.4) **the NLL term is what keeps SimPO working**.
  SimPO alone degenerates: by round 3 it is below the untrained base in 4 of 5 seeds (seed 1's
  papers are punctuation soup); held-out 0.579 [0.278, 0.822] after round 1, 0.542
  [0.331, 0.719] after round 3. SimPO + NLL stays at 0.850
  [0.843, 0.857]: round 3 SimPO + NLL − SimPO is +0.308 [+0.135, +0.515], 5/0/0 seeds. That is
  the failure the paper adds the NLL term against: the preference loss alone lowers the chosen
  text's likelihood along with the rejected one's. SFT on the chosen papers matches SimPO + NLL
  (−0.004 [−0.011, +0.002]): on this task the reviewer's preference is a mode of the base's own
  distribution, and imitating the chosen papers finds it as well as the preference loss does.

    OMP_NUM_THREADS=1 python benchmarks/cycle_reproduction.py [--seeds 1 2 3 4 5] [--rounds 3] [--quick]
    python benchmarks/cycle_reproduction.py --from-json runs/cycle_reproduction/results.json
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from rich.console import Console
from rich.table import Table

from papergym.eval.records import Estimate
from papergym.eval.stats import bootstrap_mean, paired_difference, sign_test
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.review.reward import ReviewReward
from papergym.settings.train import TrainConfig
from papergym.sources.bib import Reference
from papergym.train.cycle.generate import generate_papers
from papergym.train.cycle.records import CycleInput
from papergym.train.cycle.reviewers import StructureReviewer
from papergym.train.cycle.run import run_cycle
from papergym.train.opsd import encode_prompts
from papergym.train.run import quiet_libraries
from papergym.train.tiny import IM_END, build_tiny_model, build_tiny_tokenizer
from papergym.write.data import LeakageFigures, WriteManifest, WritePrompt

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORK_DIR = ROOT / "runs" / "cycle_reproduction"

# --- the synthetic task ------------------------------------------------------------------------

DATA_SEED = 4321
ADJECTIVES = ("coral", "solar", "arctic", "urban", "desert", "alpine")
NOUNS = ("drift", "bloom", "erosion", "migration", "signal", "runoff")
KEY_POOL = 40
TRAIN_INPUTS = 20
POPULAR = "smith"
"""The paper the base likes to cite whatever the references say (a habit to unlearn)."""
SECTIONS = ("introduction", "method", "results", "conclusion")
PROMPT = "Write a paper titled {title}. References: {a}, {b}, {c}."
TITLE_LINE = re.compile(r"^Title: (.+)$", re.MULTILINE)


def paper(title: str, keys: Sequence[str], *, popular: bool, skip_results: bool) -> str:
    """A paper in the task's format, with or without the base's two habits."""
    a, b, c = keys
    lines = [
        f"Title: {title}",
        f"# Introduction\nWe study {title} \\cite{{{a}}}.",
        f"# Method\nWe extend \\cite{{{POPULAR if popular else b}}}.",
    ]
    if not skip_results:
        lines.append(f"# Results\nWe beat \\cite{{{c}}} (simulated).")
    lines.append("# Conclusion\nIt works.")
    return "\n".join(lines)


@dataclass(frozen=True)
class World:
    """The fixed inputs: each title's three reference keys, and which inputs train."""

    keys: dict[str, tuple[str, ...]]
    pool: tuple[str, ...]
    train: tuple[str, ...]
    held_out: tuple[str, ...]


def make_world() -> World:
    rng = random.Random(DATA_SEED)
    consonants, vowels = "bdfgklmnprtvz", "aeiou"
    words: set[str] = set()
    while len(words) < KEY_POOL:
        words.add("".join(rng.choice(s) for s in (consonants, vowels, consonants, vowels)))
    pool = tuple(sorted(words))
    titles = [f"{a} {n}" for a in ADJECTIVES for n in NOUNS]
    rng.shuffle(titles)
    keys = {t: tuple(rng.sample(pool, 3)) for t in titles}
    return World(keys, pool, tuple(titles[:TRAIN_INPUTS]), tuple(titles[TRAIN_INPUTS:]))


def prompt_of(title: str, keys: Sequence[str]) -> str:
    a, b, c = keys
    return PROMPT.format(title=title, a=a, b=b, c=c)


def reviewer_for(world: World) -> StructureReviewer:
    """The checkable reviewer: sections, order, and citations of the input's keys only (the
    input is found by the paper's title line; an unknown title may cite nothing)."""

    def allowed(text: str) -> set[str]:
        match = TITLE_LINE.search(text)
        return set(world.keys.get(match.group(1).strip(), ())) if match else set()

    return StructureReviewer(required=SECTIONS, allowed_keys=allowed)


def write_data(world: World, folder: Path) -> Path:
    """The task as a ``papergym write prepare`` folder: the training inputs as prompts."""
    prompts = [
        WritePrompt(
            id=f"in{index:02d}",
            source=title,
            split="train",
            system="",
            prompt=prompt_of(title, world.keys[title]),
            keys=world.keys[title],
            references=tuple(Reference(key=k, title=k) for k in world.keys[title]),
        )
        for index, title in enumerate(world.train)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "prompts.jsonl", prompts)
    write_jsonl(folder / "sft.jsonl", [])
    manifest = WriteManifest(
        version="synthetic",
        command="benchmarks/cycle_reproduction.py",
        papers=len(prompts),
        examples=len(prompts),
        train=len(prompts),
        test=0,
        drops=(),
        leakage=LeakageFigures(ngram=8, papers_checked=0, references_left_out=0),
        settings={},
    )
    write_text_atomic(folder / "manifest.json", manifest.model_dump_json(indent=1))
    return folder


# --- the base model ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseSettings:
    """The tiny base and its pretraining; part of the cache key."""

    hidden_size: int = 96
    layers: int = 2
    heads: int = 4
    vocab_size: int = 512
    steps: int = 600
    batch_size: int = 16
    learning_rate: float = 3e-3
    warmup_steps: int = 60


def pretraining_example(world: World, rng: random.Random) -> tuple[str, str]:
    titles = world.train + world.held_out
    title = rng.choice(titles)
    keys = rng.sample(world.pool, 3)
    habits = {"popular": rng.random() < 0.5, "skip_results": rng.random() < 0.5}
    return prompt_of(title, keys), paper(title, keys, **habits)


def corpus(world: World) -> list[str]:
    """Every word the task uses, so titles and keys become single tokens."""
    texts = [paper(t, world.keys[t], popular=False, skip_results=False) for t in world.keys]
    texts += [prompt_of(t, world.keys[t]) for t in world.keys]
    texts += [" ".join(world.pool), POPULAR]
    return texts * 4


def pretrain(world: World, settings: BaseSettings, seed: int, target: Path) -> Path:
    """Teach the tiny model the format, the copying of keys, and the two coin-flip habits."""
    tokenizer = build_tiny_tokenizer(corpus(world), vocab_size=settings.vocab_size)
    model = build_tiny_model(
        tokenizer,
        hidden_size=settings.hidden_size,
        layers=settings.layers,
        heads=settings.heads,
        seed=seed,
        answer_tokens=None,
    )
    end = tokenizer.get_vocab()[IM_END]
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, partial(_warmup_decay, settings.warmup_steps, settings.steps)
    )
    model.train()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for _ in range(settings.steps):
            batch = [pretraining_example(world, rng) for _ in range(settings.batch_size)]
            ids, mask, labels = _tensors(tokenizer, batch, end)
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
    model.train(False)
    partial_dir = target.with_name(target.name + ".partial")
    shutil.rmtree(partial_dir, ignore_errors=True)
    tokenizer.save_pretrained(partial_dir)
    model.save_pretrained(partial_dir)
    os.replace(partial_dir, target)
    return target


def _warmup_decay(warmup: int, total: int, step: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return max(0.05, (total - step) / max(1, total - warmup))


def _tensors(
    tokenizer: Any, batch: Sequence[tuple[str, str]], end: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ids, mask and labels (-100 on prompt and padding)."""
    encoded = []
    for prompt, answer in batch:
        head = encode_prompts(tokenizer, [[{"role": "user", "content": prompt}]])[0]
        tail = tokenizer(answer, add_special_tokens=False)["input_ids"] + [end]
        encoded.append((head + tail, len(head)))
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.full((len(encoded), width), tokenizer.pad_token_id, dtype=torch.long)
    labels = torch.full((len(encoded), width), -100, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for row, (seq, start) in enumerate(encoded):
        ids[row, : len(seq)] = torch.tensor(seq)
        mask[row, : len(seq)] = 1
        labels[row, start : len(seq)] = torch.tensor(seq[start:])
    return ids, mask, labels


def base_model(world: World, settings: BaseSettings, seed: int, cache: Path) -> Path:
    key = json.dumps([asdict(settings), seed, DATA_SEED, PROMPT, POPULAR])
    target = cache / f"base-seed{seed}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    return pretrain(world, settings, seed, target)


# --- methods and evaluation --------------------------------------------------------------------

METHODS: dict[str, dict[str, Any]] = {
    "SimPO+NLL": {"loss": "simpo", "nll_weight": 1.0},
    "SimPO": {"loss": "simpo", "nll_weight": 0.0},
    "SFT(chosen)": {"loss": "sft"},
}


@dataclass(frozen=True)
class Budget:
    """Per round: optimiser steps × pairs per step, the same for every method."""

    rounds: int = 3
    temperature: float = 0.4
    """Sampling temperature of the loop (the paper's 0.4); held-out papers are always at 0.4."""
    steps: int = 8
    batch_size: int = 4
    learning_rate: float = 1e-3
    lora_r: int = 16
    eval_samples: int = 4
    max_new_tokens: int = 64


def method_config(
    method: str, base: Path, data: Path, out: Path, seed: int, budget: Budget
) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "name": out.name,
            "output_dir": str(out),
            "seed": seed,
            "model": {"name_or_path": str(base), "dtype": "float32"},
            "lora": {"r": budget.lora_r, "alpha": 2 * budget.lora_r},
            "cycle": {
                "data": str(data),
                "rounds": budget.rounds,
                "input_fraction": 1 / 3,
                "samples": 3,
                "temperature": budget.temperature,
                "max_new_tokens": budget.max_new_tokens,
                "generation_batch_size": 8,
                "reviewer": "structure",
                "watch": "none",
                "beta": 2.0,
                "gamma": 0.5,
                "learning_rate": budget.learning_rate,
                "steps": budget.steps,
                "batch_size": budget.batch_size,
                "gradient_accumulation_steps": 1,
                "max_length": 512,
                "warmup_ratio": 0.0,
                **METHODS[method],
            },
        }
    )


def held_out_score(model: str, world: World, budget: Budget, seed: int) -> float:
    """Mean review score of ``eval_samples`` papers per held-out input at T = 0.4."""
    reviewer = reviewer_for(world)
    inputs = [
        CycleInput(id=t, prompt=prompt_of(t, world.keys[t]), system=None) for t in world.held_out
    ]
    settings = method_config("SimPO+NLL", Path(model), Path("."), Path("."), seed, budget).cycle
    settings = settings.model_copy(update={"generation_batch_size": 16, "temperature": EVAL_T})
    groups = generate_papers(
        model, inputs, settings, seed=10_000 + seed, dtype="float32", samples=budget.eval_samples
    )
    values = [(reviewer.rating(text) - 1) / 9 for group in groups for text, _ in group]
    return sum(values) / len(values)


EVAL_T = 0.4
"""Held-out papers are sampled at the paper's temperature whatever the loop used."""


@contextlib.contextmanager
def captured(log: Path) -> Iterator[None]:
    """Trainer chatter into a log file, not the table."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with (
        log.open("a", encoding="utf-8") as handle,
        contextlib.redirect_stdout(handle),
        contextlib.redirect_stderr(handle),
    ):
        yield


def run_seed(
    seed: int,
    world: World,
    budget: Budget,
    work: Path,
    cache: Path,
    console: Console,
    base_settings: BaseSettings | None = None,
) -> dict[str, Any]:
    """Every method's held-out score after rounds 0..R, and its per-round training metrics."""
    data = write_data(world, work / "data")
    started = time.perf_counter()
    with captured(work / "log.txt"):
        base = base_model(world, base_settings or BaseSettings(), seed, cache)
        base_score = held_out_score(str(base), world, budget, seed)
    console.print(
        f"seed {seed}: base ready, held-out {base_score:.3f} ({time.perf_counter() - started:.0f}s)"
    )
    result: dict[str, Any] = {"seed": seed, "temperature": budget.temperature, "methods": {}}
    for method in METHODS:
        out = work / f"seed{seed}" / method.replace("+", "_").replace("(", "_").replace(")", "")
        config = method_config(method, base, data, out, seed, budget)
        reward = ReviewReward(reviewer_for(world))
        clock = time.perf_counter()
        with captured(work / "log.txt"):
            summary = run_cycle(config, reward, None)
            scores = [base_score] + [
                held_out_score(r["model"], world, budget, seed) for r in summary["rounds"]
            ]
        rounds = [
            {k: r.get(k) for k in ("pairs", "skipped_tie", "skipped_unscored", "chosen_score",
                                   "rejected_score", "mean_score", "words", "train_loss")}
            for r in summary["rounds"]
        ]  # fmt: skip
        result["methods"][method] = {"held_out": scores, "rounds": rounds}
        console.print(
            f"seed {seed} {method}: held-out by round "
            + " ".join(f"{s:.3f}" for s in scores)
            + f" ({time.perf_counter() - clock:.0f}s)"
        )
    return result


# --- statistics and tables ---------------------------------------------------------------------


def fmt(e: Estimate, signed: bool = False) -> str:
    assert e.value is not None
    spec = "+.3f" if signed else ".3f"
    if e.n < 2 or e.low is None or e.high is None:
        return format(e.value, spec)
    return f"{e.value:{spec}} [{e.low:{spec}}, {e.high:{spec}}]"


def compare(a: Sequence[float], b: Sequence[float]) -> str:
    diff = paired_difference(a, b, resamples=2000, seed=0)
    wins = sum(x > y for x, y in zip(a, b, strict=True))
    losses = sum(x < y for x, y in zip(a, b, strict=True))
    ties = len(a) - wins - losses
    return f"{fmt(diff, signed=True)}  {wins}/{ties}/{losses}  p={sign_test(wins, losses):.3f}"


def report(results: list[dict[str, Any]], console: Console) -> None:
    rounds = len(results[0]["methods"]["SimPO+NLL"]["held_out"])
    loop_t = results[0].get("temperature", 0.4)
    table = Table(
        title=f"Held-out review score by round ({len(results)} seeds, loop T={loop_t}, held-out "
        f"T={EVAL_T}; 95% bootstrap over seeds)"
    )
    table.add_column("method")
    for r in range(rounds):
        table.add_column(f"round {r}")
    for method in METHODS:
        cells = []
        for r in range(rounds):
            values = [s["methods"][method]["held_out"][r] for s in results]
            cells.append(fmt(bootstrap_mean(values, resamples=2000, seed=0)))
        table.add_row(method, *cells)
    console.print(table)

    diffs = Table(title="Paired by seed: difference [95% interval]  wins/ties/losses  sign test")
    diffs.add_column("comparison")
    diffs.add_column("value")
    last = rounds - 1
    for method in METHODS:
        series = [[s["methods"][method]["held_out"][r] for s in results] for r in range(rounds)]
        diffs.add_row(f"{method}: round {last} − round 0", compare(series[last], series[0]))
        for r in range(1, rounds):
            diffs.add_row(f"{method}: round {r} − round {r - 1}", compare(series[r], series[r - 1]))
    final = {m: [s["methods"][m]["held_out"][last] for s in results] for m in METHODS}
    diffs.add_row(f"round {last}: SimPO+NLL − SimPO", compare(final["SimPO+NLL"], final["SimPO"]))
    diffs.add_row(
        f"round {last}: SimPO+NLL − SFT(chosen)", compare(final["SimPO+NLL"], final["SFT(chosen)"])
    )
    diffs.add_row(
        f"round {last}: SimPO − SFT(chosen)", compare(final["SimPO"], final["SFT(chosen)"])
    )
    console.print(diffs)

    pairs = Table(title="Training rounds (mean over seeds): pairs / tie skips / chosen / rejected")
    pairs.add_column("method")
    for r in range(1, rounds):
        pairs.add_column(f"round {r}")
    for method in METHODS:
        cells = []
        for r in range(rounds - 1):
            rows = [s["methods"][method]["rounds"][r] for s in results]
            cells.append(
                f"{_mean_of(rows, 'pairs'):.1f} / {_mean_of(rows, 'skipped_tie'):.1f} / "
                f"{_mean_of(rows, 'chosen_score'):.3f} / {_mean_of(rows, 'rejected_score'):.3f}"
            )
        pairs.add_row(method, *cells)
    console.print(pairs)


def _mean_of(rows: Sequence[dict[str, Any]], key: str) -> float:
    """The mean of ``key`` over the rows that have it (a round without pairs has no scores)."""
    values = [row[key] for row in rows if row[key] is not None]
    return sum(values) / len(values) if values else math.nan


QUICK_BASE = BaseSettings(steps=20, warmup_steps=2)
"""--quick's base: it learns next to nothing; the smoke run checks the code, not the result."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8, help="optimiser steps per round")
    parser.add_argument("--work-dir", type=Path, help=f"default {DEFAULT_WORK_DIR}")
    parser.add_argument(
        "--temperature", type=float, default=0.4, help="the loop's sampling temperature"
    )
    parser.add_argument("--cache-dir", type=Path, help="pretrained bases (default WORK/cache)")
    parser.add_argument("--from-json", type=Path, help="print the tables of a saved run")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run (numbers mean nothing): one seed, one round of one step, a base "
        f"pretrained {QUICK_BASE.steps} steps, one short held-out paper per input, in a "
        "temporary WORK_DIR unless --work-dir is given",
    )
    args = parser.parse_args(argv)
    console = Console()
    if args.from_json:
        report(json.loads(args.from_json.read_text(encoding="utf-8")), console)
        return 0
    if args.work_dir is None and args.quick:  # never over a real run's results and bases
        with tempfile.TemporaryDirectory(prefix="cycle-reproduction-quick-") as tmp:
            args.work_dir = Path(tmp)
            return run(args, console)
    args.work_dir = args.work_dir or DEFAULT_WORK_DIR
    return run(args, console)


def run(args: argparse.Namespace, console: Console) -> int:
    torch.set_num_threads(1)
    quiet_libraries()
    world = make_world()
    budget = Budget(rounds=args.rounds, steps=args.steps, temperature=args.temperature)
    base_settings = BaseSettings()
    if args.quick:
        args.seeds = args.seeds[:1]
        budget = Budget(rounds=1, steps=1, eval_samples=1, max_new_tokens=24)
        base_settings = QUICK_BASE
    cache = args.cache_dir or args.work_dir / "cache"
    results = []
    started = time.perf_counter()
    for seed in args.seeds:
        results.append(run_seed(seed, world, budget, args.work_dir, cache, console, base_settings))
        write_text_atomic(args.work_dir / "results.json", json.dumps(results, indent=1))
    report(results, console)
    console.print(
        f"total {time.perf_counter() - started:.0f}s; results in {args.work_dir / 'results.json'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
