"""``eval.scoring: benchmark``: a foreign rubric dataset scored its own way (ResearchQA coverage,
HealthBench points, ResearchPlanGen share met), beside the rubric reward's α mix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval.benchmark import (
    benchmark_score,
    coverage,
    criteria_met,
    healthbench_points,
    protocol_note,
    rule_for,
)
from papergym.eval.data import load_eval_data
from papergym.eval.records import EvalQuestion, EvalScore, EvalSummary
from papergym.fakellm.server import FakeOpenAIServer
from papergym.jsonl import read_jsonl
from papergym.records import Verdict
from support.plans_server import responder

runner = CliRunner()


def v(cid: str, passed: bool | None, weight: float = 1.0, kind: str = "specific") -> Verdict:
    return Verdict(criterion_id=cid, passed=passed, weight=weight, kind=kind)  # type: ignore[arg-type]


# -- the rules, as pure functions -------------------------------------------------------------


def test_coverage_is_the_mean_normalised_level_and_unrated_is_unscored() -> None:
    # ResearchQA's five ratings 1..5 normalised (x-1)/4: Completely, Mostly, Barely
    assert coverage([1.0, 0.75, 0.25]) == pytest.approx(2.0 / 3.0)
    assert coverage([0.0, 0.0]) == 0.0
    assert coverage([1.0, None]) is None
    assert coverage([]) is None
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        coverage([4.0])


def test_healthbench_points_divide_by_positive_points_and_clip() -> None:
    verdicts = [v("a", True, 5), v("b", False, 3), v("h", True, -2)]
    assert healthbench_points(verdicts) == pytest.approx((5 - 2) / 8)
    assert healthbench_points([v("a", False, 1), v("h", True, -4)]) == 0.0  # -4/1 clipped
    assert healthbench_points([v("a", True, 2), v("b", True, 2)]) == 1.0
    assert healthbench_points([v("a", None, 2)]) is None
    assert healthbench_points([v("h", True, -1)]) is None  # no positive points to divide by


def test_criteria_met_ignores_weights_and_unscored_propagates() -> None:
    assert criteria_met([v("a", True, 9), v("b", False), v("c", True), v("d", False)]) == 0.5
    assert criteria_met([v("a", True), v("b", None)]) is None
    assert criteria_met([]) is None


def test_benchmark_score_leaves_general_criteria_out() -> None:
    verdicts = [v("a", True), v("b", False), v("g1", True, kind="general")]
    assert benchmark_score("researchqa_coverage", verdicts) == 0.5
    assert benchmark_score("criteria_met", verdicts) == 0.5
    with pytest.raises(ValueError, match="not a benchmark rule"):
        benchmark_score("papergym", verdicts)


def test_each_format_has_its_rule_and_papergym_data_keeps_the_reward() -> None:
    assert rule_for("benchmark", "researchqa") == "researchqa_coverage"
    assert rule_for("benchmark", "rubrichub") == "healthbench_points"
    assert rule_for("benchmark", "researchplangen") == "criteria_met"
    assert rule_for("benchmark", "instances") == "papergym"
    assert rule_for("papergym", "researchqa") == "papergym"
    definition, differences = protocol_note("researchqa_coverage")
    assert "no α mix" in definition and any("binary" in d for d in differences)


# -- through ``papergym eval`` ------------------------------------------------------------------


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _researchqa(tmp_path: Path) -> Path:
    """Questions the scripted policy answers (QA, QB); items met when they say YES."""
    rows = [
        {
            "id": "rqa-1",
            "query": "QA: how can attention be made cheaper?",
            "rubric": [
                {"rubric_item": "Mentions YES a learned gate", "type": "explanation"},
                {"rubric_item": "Cites YES prior sparse attention", "type": "citation"},
                {"rubric_item": "Explains YES the cost", "type": "explanation"},
                {"rubric_item": "Discusses NO limitations", "type": "limitation"},
            ],
        },
        {
            "id": "rqa-2",
            "query": "QB: how should training speed-ups be validated?",
            "rubric": [
                {"rubric_item": "Compares YES with baselines", "type": "comparison"},
                {"rubric_item": "Reports NO variance", "type": "explanation"},
            ],
        },
    ]
    return _write(tmp_path / "researchqa.jsonl", rows)


def _eval(data: Path, out: Path, *extra: str) -> Any:
    args = ["eval", *extra, "--data", str(data), "-o", str(out), "--split", "all"]
    return runner.invoke(app, [*args, "llm.cache=false", "eval.resamples=50"])


def _scores(out: Path) -> dict[str, EvalScore]:
    return {s.instance_id: s for s in read_jsonl(out / "scores.jsonl", EvalScore)}


def _summary(out: Path) -> EvalSummary:
    return EvalSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))


def _scripted_eval(data: Path, out: Path, *extra: str) -> Any:
    """``papergym eval`` of the scripted policy, judged by the scripted LLM judge."""
    with FakeOpenAIServer(responder=responder) as server:  # the policy and the judge
        system = f"a=openai:m@{server.base_url}"
        judge = ["--base-url", server.base_url, "--model", "judge-m", "--no-cache"]
        return _eval(data, out, system, *judge, *extra)


def test_benchmark_scoring_with_a_scripted_llm_judge_gives_researchqa_coverage(
    tmp_path: Path,
) -> None:
    data = _researchqa(tmp_path)
    native = _scripted_eval(data, tmp_path / "native", "--scoring", "benchmark")
    assert native.exit_code == 0, native.output
    scores = _scores(tmp_path / "native")
    assert scores["rqa-1"].value == 0.75 and scores["rqa-2"].value == 0.5
    assert scores["rqa-1"].scoring == "researchqa_coverage" and scores["rqa-1"].alpha is None
    assert all(v.kind == "specific" for s in scores.values() for v in s.verdicts)
    summary = _summary(tmp_path / "native")
    assert summary.scoring == "researchqa_coverage"
    assert summary.systems[0].reward.value == pytest.approx(0.625)
    assert summary.protocol_differences and "coverage" in (summary.scoring_definition or "")
    assert "scoring researchqa_coverage" in native.output
    assert "differs from the published protocol" in native.output


@pytest.mark.slow  # two evals: about 3 s on 2 cores
def test_the_default_scoring_of_the_same_data_adds_general_criteria_and_mixes(
    tmp_path: Path,
) -> None:
    data = _researchqa(tmp_path)
    assert _scripted_eval(data, tmp_path / "native", "--scoring", "benchmark").exit_code == 0
    mixed = _scripted_eval(data, tmp_path / "mixed")
    assert mixed.exit_code == 0, mixed.output
    native_scores, mixed_scores = _scores(tmp_path / "native"), _scores(tmp_path / "mixed")
    assert _summary(tmp_path / "mixed").scoring == "papergym"
    assert mixed_scores["rqa-1"].specific == native_scores["rqa-1"].value == 0.75
    assert any(v.kind == "general" for v in mixed_scores["rqa-1"].verdicts)
    # the scripted judge meets no general criterion: 0.7 * 0.75 + 0.3 * 0
    assert mixed_scores["rqa-1"].value == pytest.approx(0.525)


@pytest.mark.slow  # two evals: about 3 s on 2 cores
def test_benchmark_scoring_of_points_and_plans_with_a_scripted_llm_judge(tmp_path: Path) -> None:
    hub = _write(
        tmp_path / "rubrichub.jsonl",
        [
            {
                "id": "rh-1",
                "prompt": "QA: how can attention be made cheaper?",
                "rubrics": [
                    {"criterion": "Uses YES a learned gate", "points": 5},
                    {"criterion": "Tests NO on long documents", "points": 3},
                    {"criterion": "Claims YES a speed-up it never measured", "points": -2},
                ],
            }
        ],
    )
    plans = _write(
        tmp_path / "plans.jsonl",
        [
            {
                "Goal": "QB: how should training speed-ups be validated?",
                "Rubric": ["Compares YES with baselines", "Reports NO variance", "Uses YES seeds"],
                "Reference solution": "ignored",
            }
        ],
    )
    expected = {"healthbench_points": (5 - 2) / 8, "criteria_met": 2 / 3}
    for data, rule in ((hub, "healthbench_points"), (plans, "criteria_met")):
        out = tmp_path / f"eval-{rule}"
        result = _scripted_eval(data, out, "--scoring", "benchmark")
        assert result.exit_code == 0, result.output
        (score,) = _scores(out).values()
        assert score.scoring == rule
        assert score.value == pytest.approx(expected[rule])
        questions = read_jsonl(out / "questions.jsonl", EvalQuestion)
        assert len(questions[0].criteria) == len(score.verdicts) == 3  # no general criteria
        assert _summary(out).scoring == rule


@pytest.mark.slow  # loads the offline judge's MiniLM: about 40 s the first time
def test_benchmark_scoring_with_the_offline_judge(tmp_path: Path) -> None:
    data = _researchqa(tmp_path)
    with FakeOpenAIServer(responder=responder) as server:
        system = f"a=openai:m@{server.base_url}"
        out = tmp_path / "eval"
        result = _eval(data, out, system, "--judge", "offline", "--scoring", "benchmark")
        assert result.exit_code == 0, result.output
    for score in _scores(out).values():
        assert score.scoring == "researchqa_coverage" and score.value is not None
        met = [v.passed for v in score.verdicts]
        assert len(met) in (2, 4) and score.value == sum(met) / len(met)
    assert _summary(out).judge.startswith("offline")


@pytest.mark.slow  # the offline judge: several seconds
def test_benchmark_scoring_leaves_papergym_instances_to_the_reward(tmp_path: Path) -> None:
    from support.plans_server import write_plans_build

    build = write_plans_build(tmp_path / "build")
    loaded = load_eval_data(build, "all", None, general=False)
    assert all(i.rubric.general for i in loaded.instances[:1])  # its own rubric, untouched
    with FakeOpenAIServer(responder=responder) as server:
        system = f"a=openai:m@{server.base_url}"
        out = tmp_path / "eval"
        result = _eval(build, out, system, "--judge", "offline", "--scoring", "benchmark")
        assert result.exit_code == 0, result.output
    assert _summary(out).scoring == "papergym"
    assert all(s.scoring is None for s in _scores(out).values())
