"""The TRL adapter inside a real GRPOTrainer, for a few steps on a tiny in-process model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.export.trl import trl_row
from papergym.jsonl import read_jsonl
from papergym.records import Instance
from papergym.reward import runtime
from papergym.reward.offline import OfflineJudge
from papergym.reward.reward import RubricReward
from papergym.train.tiny import save_tiny_model

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers"


def test_grpo_steps_call_the_rubric_reward_with_dataset_columns(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from papergym.reward.trl import rubric_reward

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    assert (
        CliRunner().invoke(app, ["build", str(EXAMPLE), "-o", str(tmp_path / "env")]).exit_code == 0
    )
    [instance] = read_jsonl(tmp_path / "env" / "instances.jsonl", Instance)
    rows = [trl_row(instance)] * 4
    dataset = datasets.Dataset.from_list(rows)

    seen: list[int] = []
    reward = RubricReward(OfflineJudge())
    runtime.set_shared_reward(reward)

    def counted(*args: object, **kwargs: object) -> list[float | None]:
        seen.append(len(kwargs["completions"]))  # type: ignore[arg-type]
        assert {"question", "reference", "rubric"} <= set(kwargs)
        return rubric_reward(*args, **kwargs)  # type: ignore[arg-type]

    counted.__name__ = "rubric_reward"
    model_dir = save_tiny_model(tmp_path / "tiny")
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "run"),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=2,
        learning_rate=1e-5,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=False,
        save_strategy="no",
        beta=0.01,
    )
    try:
        trainer = trl.GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            reward_funcs=[counted],
            args=config,
            train_dataset=dataset,
        )
        trainer.train()
    finally:
        runtime.set_shared_reward(None)
    assert seen and all(n >= 2 for n in seen)
    logged = {key for entry in trainer.state.log_history for key in entry}
    assert "rubric/specific_mean" in logged
    assert any(key.startswith("rewards/rubric_reward") for key in logged)
    assert trainer.state.global_step == 2
