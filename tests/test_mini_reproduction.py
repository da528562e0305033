"""The miniature reproduction's statistics and eval records, on made-up answers (no training):
the paired differences by seed, and a results file `papergym report` can render."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from dataclasses import asdict
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from papergym.eval.records import EvalScore, EvalSummary
from papergym.jsonl import read_jsonl
from papergym.report.run import write_report

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mini_reproduction", ROOT / "benchmarks" / "mini_reproduction.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# Per row, the share of questions answered with the topic's items (1.0; else a generic 0.3).
SKILL = {
    "base": 0.1,
    "SFT": 0.05,
    "OPSD": 0.8,
    "GRPO": 0.4,
    "OPSD→GRPO": 0.4,
    "GRPO→OPSD": 0.4,
    "teacher (base + rubric)": 0.9,
}
SEEDS = (1, 2, 3)


def fake_results(bench: ModuleType) -> dict[str, list[dict[str, Any]]]:
    """Results shaped as a run writes them, from answers scored by the benchmark's reward."""
    world = bench.make_world()
    held, train = bench.eval_sets(world, with_rubric=False)
    results: dict[str, list[dict[str, Any]]] = {}
    for row in bench.ROWS:
        results[row] = []
        for seed in SEEDS:
            rng = random.Random(f"{row}{seed}")

            def texts(instances: list[Any], rng: random.Random = rng, row: str = row) -> list[str]:
                return [
                    bench.plan(world.items[i.title])
                    if rng.random() < SKILL[row]
                    else bench.GENERIC_PLAN
                    for i in instances
                ]

            results[row].append(
                {
                    "held_out": asdict(bench.score_texts(held.instances, texts(held.instances))),
                    "train": asdict(bench.score_texts(train.instances, texts(train.instances))),
                    "seconds": None if row in ("base", "teacher (base + rubric)") else 1.0,
                }
            )
    return results


def test_differences_are_paired_by_seed(bench: ModuleType) -> None:
    results = fake_results(bench)
    diffs = {(d.a, d.b): d for d in bench.differences(results)}
    opsd, sft = bench.held_out(results, "OPSD"), bench.held_out(results, "SFT")
    d = diffs[("OPSD", "SFT")]
    assert d.by_seed.value == pytest.approx(sum(opsd) / 3 - sum(sft) / 3)
    assert d.by_seed.n == 3
    assert d.wins == 3 and d.losses == 0
    # 0.8 vs 0.05 of the plans: far apart in every seed, but 3 of 3 seeds is sign-test p 0.25
    assert d.verdict == "OPSD > SFT? (interval only; sign test p 0.25)"
    # two methods with the same skill: their seeds split, the interval holds 0
    assert diffs[("OPSD→GRPO", "GRPO")].verdict == "not separated"
    assert diffs[("OPSD→GRPO", "GRPO")].by_question is None  # no eval summary given


def test_enough_seeds_make_a_robust_ordering(bench: ModuleType) -> None:
    results = fake_results(bench)
    six = {row: runs * 2 for row, runs in results.items()}  # 6 seeds, all agreeing
    d = next(d for d in bench.differences(six) if (d.a, d.b) == ("OPSD", "SFT"))
    assert d.wins == 6 and d.verdict == "OPSD > SFT"  # sign test p 2/64 < 0.05
    lines = bench.interpretation(six, bench.differences(six))
    assert any(line.startswith("Robust") and "OPSD > SFT" in line for line in lines)


def test_sign_test(bench: ModuleType) -> None:
    assert bench.sign_test(8, 0) == pytest.approx(2 / 256)
    assert bench.sign_test(0, 8) == pytest.approx(2 / 256)
    assert bench.sign_test(4, 4) == 1.0
    assert bench.sign_test(0, 0) == 1.0


def test_eval_records_render_as_a_report(bench: ModuleType, tmp_path: Path) -> None:
    results = fake_results(bench)
    world = bench.make_world()
    eval_dir = tmp_path / "eval"
    diffs, lines = bench.analyse(results, list(SEEDS), world, 40, eval_dir)

    summary = EvalSummary.model_validate_json((eval_dir / "summary.json").read_text("utf-8"))
    assert [s.system.name for s in summary.systems] == list(bench.ROWS)
    assert summary.samples == 3 and summary.questions == 24 and summary.judge == "keyword"
    scores = read_jsonl(eval_dir / "scores.jsonl", EvalScore)
    assert len(scores) == len(bench.ROWS) * 3 * 24
    assert {s.sample for s in scores} == {0, 1, 2}  # sample k is the k-th seed
    # a question's value is its mean over the seeds, so the system mean is the seeds' mean
    opsd = next(s for s in summary.systems if s.system.name == "OPSD")
    assert opsd.reward.value == pytest.approx(sum(bench.held_out(results, "OPSD")) / 3)
    # the by-question interval of a pair comes from the summary, turned the table's way round
    grpo_base = next(d for d in diffs if (d.a, d.b) == ("GRPO", "base"))
    assert grpo_base.by_question is not None
    assert grpo_base.by_question.value == pytest.approx(grpo_base.by_seed.value)
    assert any(line.startswith("Robust") for line in lines)

    report = tmp_path / "report.html"
    write_report([eval_dir], report)
    html = report.read_text("utf-8")
    assert "OPSD→GRPO" in html and "teacher (base + rubric)" in html


def test_from_json_reads_a_partial_run(bench: ModuleType, tmp_path: Path) -> None:
    results = fake_results(bench)
    partial = {row: runs[:2] for row, runs in results.items()}
    path = tmp_path / "partial.json"
    payload = {"seeds": [1, 2], "complete": False, "results": partial}
    path.write_text(json.dumps(payload), "utf-8")
    eval_dir = tmp_path / "eval"
    assert bench.main(["--from-json", str(path), "--eval-dir", str(eval_dir)]) == 0
    summary = EvalSummary.model_validate_json((eval_dir / "summary.json").read_text("utf-8"))
    assert summary.samples == 2
    assert sorted(f.name for f in eval_dir.iterdir()) == [
        "answers.jsonl",
        "questions.jsonl",
        "scores.jsonl",
        "summary.json",
    ]


def test_one_seed_establishes_no_ordering(bench: ModuleType) -> None:
    results = {row: runs[:1] for row, runs in fake_results(bench).items()}
    diffs = bench.differences(results)
    assert {d.verdict for d in diffs} == {"one seed"}
    lines = bench.interpretation(results, diffs)
    assert lines[-1].startswith("One seed")
