"""A miniature of SPEC §2 steps 8-9: does acting on leakage verdicts (build.leakage.action) make a
plan that only restates the question earn ≈0 on the specific rubric?

**Data.** Per seed, synthetic papers (LaTeX, made by :func:`paper_tex` from the seed): an
introduction of background sentences (a problem, the current approaches, the gap), a method
section in which one to three of five sentences restate the background's terms ("leaky": the
criterion written from it can be inferred from the question) and the others name components
the question does not mention, and an experiments section.

**Build.** ``papergym build`` with the LLM builder against the scripted ``fake-llm`` responder
(in process), three times per seed from the same papers: ``keep`` (removal off: verdicts only),
``remove`` and ``replace``. The scripted leakage judge flags a criterion when at least half of
its key terms are in the question.

**Measures**, per build (the seed's papers together): the specific-rubric score of the
restating "plan" (the question itself, scored by PaperGym's real reward with the scripted rubric
judge; mean over instances); the judge's leakage rate of the published criteria; the build's
own overlap screen's rate (lexical and embedding similarity: a method independent of the
judge); criteria per instance; instances kept.

**What this cannot show.** The scripted rubric judge says "met" by the same rule the scripted
leakage judge says "inferable", so the restating plan's score falls to 0 after the action by
construction: the miniature checks that the build acts on every verdict and that replacements
are judged, not that a real judge's verdicts are right. The overlap rate is the independent
check. A real model's leakage, and what removal does to a trained policy, need a GPU build.

**Statistics**: per seed, each measure; intervals are 95% percentile bootstraps over seeds
(``eval.stats.bootstrap_mean``); each difference (an action − keep) is paired by seed
(``eval.stats.paired_difference``), with the seeds it won, tied and lost and a sign test. A
difference "holds" when its interval excludes 0 and the sign test gives p < 0.05.

**Results** (seeds 1-6, 4 papers each; 17 of 24 papers built, the rest dropped by the
build's reveal gate in every arm alike; 407 s on a loaded 2-core machine): the restating plan's
specific score is 0.172 [0.128, 0.222] with ``keep`` and 0.000 with ``remove`` and ``replace``
(difference -0.172 [-0.222, -0.128], 6/6 seeds, sign test p 0.031: holds); the judge's rate
moves the same way (by construction, see above). ``remove`` leaves 8.28 criteria per instance
(-1.72, holds), ``replace`` keeps 10 (every leaked criterion found an unflagged replacement).
The overlap screen's rate is 0 in every arm: it does not see these rewordings of the question
at its thresholds, which is why the build acts on the judge's verdicts, not the screen's.

This miniature reads nothing from ``../shared``: it has nothing to skip without it.

    python benchmarks/leakage_miniature.py [--seeds 1 2 ...] [--papers 4] [--quick] [--out r.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from statistics import mean
from typing import Any

from papergym.eval.stats import Estimate, bootstrap_mean, paired_difference, sign_test
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible import responder
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.recipes.run import build_papers
from papergym.recipes.settings import BuildSection, LeakageSection
from papergym.records import Criterion, Instance
from papergym.reward.factory import make_reward
from papergym.reward.settings import RewardSection

ACTIONS = ("keep", "remove", "replace")
MEASURES = ("restate_specific", "judge_rate", "overlap_rate", "criteria", "instances")
SIGNIFICANT = 0.05

PROBLEMS = (
    "graph partitioning",
    "protein folding",
    "traffic forecasting",
    "crop monitoring",
    "speech enhancement",
    "fraud detection",
    "battery ageing",
    "query optimisation",
)
FLAWS = (
    "communication overhead",
    "label scarcity",
    "sensor drift",
    "memory footprint",
    "distribution shift",
    "annotation noise",
    "latency spikes",
    "calibration error",
)
PARTS = (
    "a contrastive encoder",
    "a learned scheduler",
    "a spectral filter",
    "a memory bank",
    "a gating network",
    "a cost model",
    "a diffusion prior",
    "a sparse router",
)
SIGNALS = (
    "neighbour statistics",
    "temporal gradients",
    "residual errors",
    "attention maps",
    "pairwise distances",
    "uncertainty estimates",
    "token frequencies",
    "load profiles",
)
DATA = ("three public benchmarks", "a held-out regional corpus", "two industrial logs",
        "a simulated testbed")  # fmt: skip


def paper_tex(rng: random.Random, index: int) -> str:
    """One synthetic paper: background, a method with 1-3 leaky sentences, experiments."""
    problem, flaw, other = rng.choice(PROBLEMS), rng.choice(FLAWS), rng.choice(FLAWS)
    parts, signals = rng.sample(PARTS, 4), rng.sample(SIGNALS, 4)
    background = [
        f"Existing {problem} methods remain costly because they ignore {flaw}.",
        f"However, current {problem} pipelines treat {flaw} as fixed across inputs.",
        f"Prior work on {problem} does not address {other} at scale.",
    ]
    leaky = [  # the question's terms in another shape: inferable, yet no near-copy of a
        # question sentence (the build's filter and reveal gate catch those first)
        f"Handling of {flaw} is made explicit inside the {problem} solver.",
        f"A {problem} variant aware of {flaw} is trained end to end.",
        f"Scaling to {other} is treated as a first-class design goal.",
    ][: rng.randint(1, 3)]
    novel = [f"We introduce {p} that learns from {s}." for p, s in zip(parts, signals, strict=True)]
    method = leaky + novel[: 5 - len(leaky)]
    rng.shuffle(method)
    experiments = [
        f"We evaluate on {rng.choice(DATA)} against a tuned heuristic baseline.",
        "We measure accuracy together with wall-clock time and memory use.",
        f"An ablation removes {parts[0]} to isolate its effect.",
    ]
    title = f"Handling {flaw} in {problem}, study {index}"
    return "\n".join([
        r"\documentclass{article}", rf"\title{{{title}}}", r"\begin{document}", r"\maketitle",
        r"\begin{abstract}", background[0], r"\end{abstract}",
        r"\section{Introduction}", " ".join(background),
        r"\section{Method}", " ".join(method),
        r"\section{Experiments}", " ".join(experiments),
        r"\end{document}", "",
    ])  # fmt: skip


def write_papers(folder: Path, seed: int, count: int) -> Path:
    rng = random.Random(seed)
    for index in range(count):
        paper = folder / f"paper-{index}"
        paper.mkdir(parents=True)
        (paper / "main.tex").write_text(paper_tex(rng, index), encoding="utf-8")
    return folder


def _rate(criteria: Sequence[Criterion], method: str) -> float | None:
    verdicts = [v for c in criteria for v in c.leakage if v.method == method]
    scored = [v for v in verdicts if v.leaked is not None]
    return sum(1 for v in scored if v.leaked) / len(scored) if scored else None


def restate_scores(instances: Sequence[Instance], llm: LLMConfig) -> list[float]:
    """The specific-rubric score of each instance's question, submitted as the plan."""
    reward = make_reward(RewardSection(judge="llm"), llm)

    async def run() -> list[float]:
        scores = await asyncio.gather(*(reward.ascore(i, i.question) for i in instances))
        return [s.specific for s in scores if s.specific is not None]

    return asyncio.run(run())


def measure(papers: Path, out: Path, action: str, llm: LLMConfig) -> dict[str, Any]:
    section = BuildSection(builder="llm", leakage=LeakageSection(action=action, min_criteria=3))
    result = build_papers([papers], out, section, llm)
    criteria = [c for i in result.instances for c in i.rubric.specific]
    restated = restate_scores(result.instances, llm)
    return {
        "restate_specific": mean(restated) if restated else None,
        "judge_rate": _rate(criteria, "judge"),
        "overlap_rate": _rate(criteria, "overlap"),
        "criteria": len(criteria) / len(result.instances) if result.instances else None,
        "instances": len(result.instances),
        "drops": [d.reason for d in result.drops],
    }


def run_seed(seed: int, papers: int, llm: LLMConfig, work: Path) -> dict[str, dict[str, Any]]:
    folder = write_papers(work / f"papers-{seed}", seed, papers)
    return {a: measure(folder, work / f"build-{seed}-{a}", a, llm) for a in ACTIONS}


def fmt(estimate: Estimate, signed: bool = False) -> str:
    value = f"{estimate.value:+.3f}" if signed else f"{estimate.value:.3f}"
    if estimate.low is None or estimate.high is None:
        return value
    return f"{value} [{estimate.low:+.3f}, {estimate.high:+.3f}]"


def usable(results: dict[int, dict[str, dict[str, Any]]]) -> dict[int, dict[str, dict[str, Any]]]:
    """The seeds whose every build kept an instance: a seed whose papers were all dropped has
    no score to pair (unscored, not 0), and is reported, not averaged in."""
    return {
        seed: arms
        for seed, arms in results.items()
        if all(arms[a]["restate_specific"] is not None for a in ACTIONS)
    }


def values(results: dict[int, dict[str, dict[str, Any]]], action: str, name: str) -> list[float]:
    return [float(r[action][name]) for r in results.values()]


def verdict(estimate: Estimate, wins: int, losses: int) -> str:
    if estimate.low is None or estimate.high is None or estimate.n < 2:
        return "one seed"
    if estimate.low <= 0 <= estimate.high:
        return "not separated"
    p = sign_test(wins, losses)
    direction = "lower" if estimate.high < 0 else "higher"
    return f"holds ({direction}, p {p:.3f})" if p < SIGNIFICANT else f"interval only (p {p:.2f})"


def report(results: dict[int, dict[str, dict[str, Any]]]) -> list[str]:
    """The per-action table and every action − keep difference, paired by seed."""
    every = results
    results = usable(results)
    skipped = sorted(set(every) - set(results))
    lines = [
        f"{len(results)} seeds: {sorted(results)}; without an instance in every build "
        f"(all papers dropped by the build's gates, left out): {skipped or 'none'}",
        "",
        "mean over seeds [95% seed interval]",
    ]
    for action in ACTIONS:
        cells = [f"{n} {fmt(bootstrap_mean(values(results, action, n)))}" for n in MEASURES]
        lines.append(f"  {action:8s} " + "; ".join(cells))
    lines += ["", "differences (action - keep), paired by seed: won/tied/lost, verdict"]
    for action in ACTIONS[1:]:
        for name in MEASURES:
            xs, ys = values(results, action, name), values(results, "keep", name)
            wins = sum(x > y for x, y in zip(xs, ys, strict=True))
            losses = sum(x < y for x, y in zip(xs, ys, strict=True))
            ties = len(xs) - wins - losses
            diff = paired_difference(xs, ys)
            lines.append(
                f"  {action} - keep  {name:16s} {fmt(diff, signed=True)}  "
                f"{wins}/{ties}/{losses}  {verdict(diff, wins, losses)}"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--papers", type=int, default=4, help="synthetic papers per seed")
    parser.add_argument("--quick", action="store_true", help="2 seeds x 3 papers (smoke run)")
    parser.add_argument("--out", type=Path, help="write the per-seed results as JSON")
    args = parser.parse_args(argv)
    seeds, papers = ([1, 2], 3) if args.quick else (args.seeds, args.papers)
    start = time.perf_counter()
    results: dict[int, dict[str, dict[str, Any]]] = {}
    with FakeOpenAIServer(responder=responder) as server, tempfile.TemporaryDirectory() as tmp:
        llm = LLMConfig(default=BackendConfig(model="m", base_url=server.base_url), cache=False)
        for seed in seeds:
            results[seed] = run_seed(seed, papers, llm, Path(tmp))
            print(f"seed {seed}: " + json.dumps(results[seed]), file=sys.stderr, flush=True)
    print("\n".join(report(results)))
    print(f"\nwall {time.perf_counter() - start:.1f}s")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
