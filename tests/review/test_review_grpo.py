"""The review reward inside a real TRL GRPOTrainer, for two steps on a tiny in-process model,
with the offline baseline as the reviewer (each completion is reviewed as a paper)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from papergym.review.offline import OfflineReviewer
from papergym.review.reward import ReviewReward
from papergym.review.runtime import set_shared_review_reward
from papergym.train.tiny import save_tiny_model


@pytest.mark.slow  # importing TRL and training take ~25 s on two cores
def test_review_grpo_steps_call_the_review_reward(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from papergym.review.trl import review_reward

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    dataset = datasets.Dataset.from_list([{"prompt": "Write a paper about attention."}] * 4)
    seen: list[list[float | None]] = []

    def counted(*args: object, **kwargs: object) -> list[float | None]:
        values = review_reward(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(values)
        return values

    counted.__name__ = "review_reward"
    set_shared_review_reward(ReviewReward(OfflineReviewer()))
    model_dir = save_tiny_model(tmp_path / "tiny")
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
            model=AutoModelForCausalLM.from_pretrained(model_dir),
            processing_class=AutoTokenizer.from_pretrained(model_dir),
            reward_funcs=[counted],
            args=config,
            train_dataset=dataset,
        )
        trainer.train()
    finally:
        set_shared_review_reward(None)
    assert seen and all(len(batch) >= 2 for batch in seen)
    # a tiny model's completion is scored (the baseline predicts) or empty (0.0), never None
    assert all(v is not None and 0.0 <= v <= 1.0 for batch in seen for v in batch)
    logged = {key for entry in trainer.state.log_history for key in entry}
    assert "review/unscored" in logged
    assert any(key.startswith("rewards/review_reward") for key in logged)
    assert trainer.state.global_step == 2
