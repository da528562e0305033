"""Evaluation in training: ``eval/*`` rows every ``eval.steps`` steps (OPSD, SFT, GRPO), once
each across a resume, and ``train pipeline`` ending with an eval of the base model and every
stage in ``RUN/eval/``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from train_samples import TOPICS, train_instance
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval.records import EvalSummary
from papergym.export.common import split_instances
from papergym.export.trl import trl_rows
from papergym.jsonl import write_jsonl
from papergym.records import Instance
from papergym.settings.train import StageName, TrainConfig
from papergym.train.evaluation import StepEvaluator, should_evaluate, step_evaluator
from papergym.train.models import load_model, load_tokenizer
from papergym.train.run import StageContext

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
HELD_OUT = 0.5
"""With papers p0..p3 this holds out p2 alone: three training papers, one held-out question."""
EVAL = {"steps": 2, "max_tokens": 8, "resamples": 20}
EVAL1 = {**EVAL, "steps": 1}
EVAL_KEYS = {"eval/reward", "eval/reward_low", "eval/reward_high", "eval/specific"}


@pytest.fixture
def papers() -> list[Instance]:
    return [train_instance(f"p{i}", TOPICS[i]) for i in range(4)]


@pytest.fixture
def splits(papers: list[Instance]) -> dict[str, list[Instance]]:
    splits = split_instances(papers, HELD_OUT)
    assert [i.paper_id for i in splits["test"]] == ["p2"]
    return splits


def context(
    tmp_path: Path,
    tiny_model: Path,
    splits: dict[str, list[Instance]],
    stage: StageName,
    **sections: Any,
) -> StageContext:
    config = TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "stages": [stage],
            "model": {"name_or_path": str(tiny_model), "dtype": "float32"},
            "lora": {"r": 4, "alpha": 8},
            "reward": {"judge": "offline"},
            "eval": EVAL,
            **sections,
        }
    )
    rows = {name: trl_rows(items) for name, items in splits.items()}
    return StageContext(config, stage, tmp_path / "run" / f"1-{stage}", str(tiny_model), rows)


def eval_rows(ctx: StageContext) -> list[dict[str, Any]]:
    return [r for r in ctx.metrics.read() if "eval/reward" in r]


def check_row(row: dict[str, Any]) -> None:
    assert set(row) >= EVAL_KEYS
    assert row["eval/questions"] == 1
    if row["eval/reward"] is None:  # the one answer was cut at max_tokens: unscored, not 0
        assert row["eval/unscored"] == 1
    else:
        assert 0.0 <= row["eval/reward_low"] <= row["eval/reward"] <= row["eval/reward_high"] <= 1
        assert row["eval/unscored"] == 0
    assert row["eval/words"] >= 0


def test_should_evaluate_every_n_steps_and_never_when_off() -> None:
    assert [s for s in range(7) if should_evaluate(s, 3)] == [3, 6]
    assert not any(should_evaluate(s, 0) for s in range(5))
    assert not any(should_evaluate(s, None) for s in range(5))


def test_no_evaluator_without_a_held_out_split_or_eval_steps(
    tmp_path: Path, tiny_model: Path, splits: dict[str, list[Instance]]
) -> None:
    tokenizer = load_tokenizer(str(tiny_model))
    ctx = context(tmp_path, tiny_model, splits, "opsd")
    assert step_evaluator(ctx.config, "opsd", {"train": ctx.rows["train"]}, tokenizer) is None
    off = context(tmp_path, tiny_model, splits, "opsd", eval={"steps": 0})
    assert step_evaluator(off.config, "opsd", off.rows, tokenizer) is None


def test_evaluator_answers_with_the_model_in_memory_and_restores_its_mode(
    tmp_path: Path, tiny_model: Path, splits: dict[str, list[Instance]]
) -> None:
    ctx = context(tmp_path, tiny_model, splits, "opsd", eval={**EVAL, "max_tokens": 24})
    evaluator = step_evaluator(ctx.config, "opsd", ctx.rows, load_tokenizer(str(tiny_model)))
    assert isinstance(evaluator, StepEvaluator)
    model = load_model(str(tiny_model), "float32")
    model.train(True)
    answers = evaluator.answers(model)
    assert model.training  # put back as the trainer left it
    assert [a.instance_id for a in answers] == [i.id for i in splits["test"]]
    # the tiny model ends its answers by itself within 24 tokens (its generation config)
    assert answers[0].finish_reason == "stop" and answers[0].error is None
    assert evaluator.answers(model) == answers  # greedy: the same answer again
    cut = StepEvaluator(**{**evaluator.__dict__, "max_tokens": 2})
    values = cut.evaluate(model)
    assert values["eval/unscored"] == 1 and values["eval/reward"] is None  # never a silent 0


def test_opsd_writes_eval_rows_every_eval_steps_once_across_a_resume(
    tmp_path: Path, tiny_model: Path, splits: dict[str, list[Instance]]
) -> None:
    from papergym.train.opsd import run_opsd

    opsd = {"steps": 2, "batch_size": 2, "micro_batch_size": 2, "max_new_tokens": 4}
    ctx = context(tmp_path, tiny_model, splits, "opsd", opsd={**opsd, "save_every": 1}, eval=EVAL1)
    run_opsd(ctx)
    rows = eval_rows(ctx)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        check_row(row)
    # killed after step 2's eval, before its checkpoint: resume from checkpoint-1
    shutil.rmtree(ctx.checkpoints_dir / "checkpoint-2")
    shutil.rmtree(ctx.final_dir)
    summary = run_opsd(ctx)
    assert summary["resumed_from"] == "checkpoint-1"
    assert [r["step"] for r in eval_rows(ctx)] == [1, 2]
    assert [r["step"] for r in ctx.metrics.read() if "loss" in r] == [1, 2]


def test_sft_writes_eval_rows_at_the_right_steps_once_across_a_resume(
    tmp_path: Path, tiny_model: Path, splits: dict[str, list[Instance]]
) -> None:
    from papergym.train.sft import run_sft

    sft = {"steps": 2, "batch_size": 2, "max_length": 256, "save_every": 1}
    ctx = context(tmp_path, tiny_model, splits, "sft", sft=sft, eval=EVAL1)
    run_sft(ctx)
    rows = eval_rows(ctx)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        check_row(row)
    shutil.rmtree(ctx.checkpoints_dir / "checkpoint-2")
    run_sft(ctx)
    assert [r["step"] for r in eval_rows(ctx)] == [1, 2]
    assert [r["step"] for r in ctx.metrics.read() if "loss" in r] == [1, 2]


def test_grpo_evaluates_with_the_reward_it_trains_on(
    tmp_path: Path, tiny_model: Path, splits: dict[str, list[Instance]]
) -> None:
    from test_grpo import HashJudge

    from papergym.reward.reward import RubricReward
    from papergym.train.grpo import run_grpo

    grpo = {"steps": 2, "num_generations": 2, "max_completion_length": 12, "save_every": 1}
    ctx = context(tmp_path, tiny_model, splits, "grpo", grpo=grpo, eval={**EVAL, "max_tokens": 24})
    run_grpo(ctx, reward=RubricReward(HashJudge()))
    rows = eval_rows(ctx)
    assert [r["step"] for r in rows] == [2]
    check_row(rows[0])


def _build(tmp_path: Path, papers: list[Instance]) -> Path:
    folder = tmp_path / "build"
    folder.mkdir()
    write_jsonl(folder / "instances.jsonl", papers)
    return folder


PIPELINE = [
    "stages=[opsd, sft]",
    "opsd.steps=2",
    "opsd.batch_size=2",
    "opsd.micro_batch_size=2",
    "opsd.max_new_tokens=8",
    "opsd.save_every=1",
    "sft.steps=1",
    "sft.batch_size=2",
    "sft.max_length=256",
    "sft.save_every=1",
    f"data.test_fraction={HELD_OUT}",
    "eval.steps=2",
    "eval.max_tokens=24",
]


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


@pytest.mark.slow
def test_pipeline_ends_with_an_eval_of_base_and_every_stage_and_resumes(
    tmp_path: Path, papers: list[Instance]
) -> None:
    run = tmp_path / "run"
    args = [
        "train",
        "pipeline",
        str(CONFIGS / "tiny-cpu.yaml"),
        "--data",
        str(_build(tmp_path, papers)),
    ]
    args += ["-o", str(run), "--json", *PIPELINE]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["eval"]["dir"] == str(run / "eval")
    summary = EvalSummary.model_validate_json((run / "eval" / "summary.json").read_text())
    names = [s.system.name for s in summary.systems]
    assert names == ["base", "1-opsd", "2-sft"]
    assert summary.systems[0].system.model == str(run / "tiny-model")
    assert summary.systems[2].system.model == str(run / "2-sft" / "final")
    assert summary.split == "test" and summary.questions == 1
    assert [(p.a, p.b) for p in summary.pairs] == [
        ("base", "1-opsd"),
        ("base", "2-sft"),
        ("1-opsd", "2-sft"),
    ]
    assert set(out["eval"]["reward"]) == set(names)
    assert _lines(run / "eval" / "answers.jsonl") == 3
    assert [
        r["step"]
        for r in map(json.loads, (run / "1-opsd" / "metrics.jsonl").open())
        if "eval/reward" in r
    ] == [2]

    # an eval killed before its summary: the same command finishes it, asking nothing twice
    (run / "eval" / "summary.json").unlink()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert _lines(run / "eval" / "answers.jsonl") == 3
    assert _lines(run / "eval" / "scores.jsonl") == 3
    assert json.loads(again.stdout)["eval"] == out["eval"]
    metrics = (run / "1-opsd" / "metrics.jsonl").read_text()
    assert CliRunner().invoke(app, args).exit_code == 0  # all done: nothing added anywhere
    assert (run / "1-opsd" / "metrics.jsonl").read_text() == metrics
    assert _lines(run / "eval" / "answers.jsonl") == 3

    # other eval settings: one line naming the difference, training untouched
    other = CliRunner().invoke(app, [*args, "eval.max_tokens=16"])
    assert other.exit_code == 2
    assert "max_tokens: 24 → 16" in other.stderr and "eval.final=false" in other.stderr
    assert [line for line in other.stderr.splitlines() if "error" in line] == [
        other.stderr.strip().splitlines()[-1]
    ]
    assert CliRunner().invoke(app, [*args, "eval.max_tokens=16", "eval.final=false"]).exit_code == 0
    assert (run / "1-opsd" / "metrics.jsonl").read_text() == metrics


def test_a_run_without_a_held_out_split_says_it_skips_the_eval(
    tmp_path: Path, build_dir: Path
) -> None:
    run = tmp_path / "run"
    args = ["train", "opsd", str(CONFIGS / "tiny-cpu.yaml"), "--data", str(build_dir)]
    args += ["-o", str(run), "--json", "opsd.steps=1", "opsd.batch_size=2"]
    args += ["opsd.micro_batch_size=2", "opsd.max_new_tokens=4", "opsd.save_every=1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (
        "eval: no held-out split (data.test_fraction=0.2 held out no paper of the 2 in the "
        "build): no evaluation during or after training"
    ) in result.stderr
    assert "eval" not in json.loads(result.stdout)
    assert not (run / "eval").exists()


def test_held_out_ares_rows_are_judged_as_documents_and_paper_rows_as_plans() -> None:
    # a TRL row has no source-kind column: the recipe decides which judge prompt applies
    from papergym.train.evaluation import held_out_instances

    rubric = train_instance("p", TOPICS[0]).rubric.model_dump_json()
    row = {"instance_id": "x", "question": "Q?", "reference": "R.", "rubric": rubric}
    paper, document = held_out_instances([{**row, "recipe": "papergym"}, {**row, "recipe": "ares"}])
    assert paper.source_kind == "paper"
    assert document.source_kind == "document"


def test_held_out_rows_keep_their_discipline_and_older_rows_read_without_one() -> None:
    from papergym.train.evaluation import held_out_instances

    rubric = train_instance("p", TOPICS[0]).rubric.model_dump_json()
    row = {"instance_id": "x", "question": "Q?", "reference": "R.", "rubric": rubric}
    mixed, older = held_out_instances([{**row, "domain": "physics"}, row])
    assert (mixed.domain, older.domain) == ("physics", "")
