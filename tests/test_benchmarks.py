"""The benchmarks cannot rot unnoticed (issue 20 #23): each has a ``--quick`` smoke mode that
``benchmarks/smoke.py`` finds and ``.ci/run`` runs, and the two that crashed at HEAD before
measuring anything (``make_judge("offline")``, a string where a configuration is taken) build
their judge. The smoke runs themselves are too slow for the default suite; CI runs them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from support.reward_load import mixed_instances, mixed_requests

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_benchmark_is_in_the_smoke_run_with_a_quick_mode() -> None:
    names = load("smoke").benchmark_names()
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")} - {"smoke", "fake_server"}
    assert set(names) == scripts and {"train_throughput", "reward_server_load"} <= scripts
    for name in names:
        assert '"--quick"' in (BENCHMARKS / f"{name}.py").read_text(encoding="utf-8"), name


def test_the_smoke_runner_reports_a_failing_benchmark(tmp_path: Path) -> None:
    smoke = load("smoke")
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nprint('about to fail')\nsys.exit(3)\n", encoding="utf-8")
    smoke.HERE = tmp_path
    run = smoke.run_quick("broken", timeout=60)
    assert run.code == 3 and "about to fail" in run.output
    (tmp_path / "stuck.py").write_text(
        "import time\nprint('started', flush=True)\ntime.sleep(60)\n"
    )
    stuck = smoke.run_quick("stuck", timeout=2)
    assert stuck.code is None and "started" in stuck.output and stuck.wall < 30


def test_the_reward_server_benchmark_builds_its_judge() -> None:
    from papergym.reward.offline import OfflineJudge

    assert isinstance(load("reward_server_load").judge_named("offline"), OfflineJudge)


@pytest.mark.slow
def test_the_benchmarks_that_crashed_at_head_score_in_process() -> None:
    from papergym.reward.offline import OfflineJudge

    bench = load("reward_server_load")
    requests = mixed_requests(mixed_instances(2), 2, items_per_request=1)
    expected, seconds = bench.in_process(requests, "offline")  # AttributeError at HEAD
    assert len(expected) == 2 and all(v is not None for v in expected.values()) and seconds > 0
    # imports torch, transformers and TRL: slow on its own
    assert isinstance(load("train_throughput").offline_judge(), OfflineJudge)


def test_graded_miniature_measures_by_hand() -> None:
    mini = load("graded_miniature")
    answers = [mini.Answer(0, "a", q) for q in (0.0, 0.5, 1.0)]
    perfect = mini.measures(answers, [0.0, 0.5, 1.0], [0.0, 0.0, 0.0])
    assert perfect["spearman"] == pytest.approx(1.0) and perfect["pair_acc"] == 1.0
    assert perfect["tied_pairs"] == 0.0 and perfect["own_vs_other_auc"] == 1.0
    flat = mini.measures(answers, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
    assert flat["pair_acc"] == 0.5 and flat["tied_pairs"] == 1.0
    assert flat["own_vs_other_auc"] == 0.5


@pytest.mark.slow  # about 7 s: 128 judge calls through the fake server
def test_graded_miniature_runs_one_small_seed(capsys: pytest.CaptureFixture[str]) -> None:
    mini = load("graded_miniature")
    assert mini.main(["--seeds", "1", "--questions", "2"]) == 0
    out = capsys.readouterr().out
    assert "graded - binary, paired by seed:" in out and "unscored answers (all variants): 0" in out
