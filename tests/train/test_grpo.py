"""The GRPO stage on TRL's GRPOTrainer: a tiny model, the rubric reward, a couple of steps each."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from peft import PeftModel
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible_judge import first_span
from papergym.jsonl import append_jsonl, read_jsonl
from papergym.records import Instance, Verdict
from papergym.reward.judge import RubricJudge
from papergym.reward.reward import RubricReward
from papergym.settings.train import RewardSettings, TrainConfig
from papergym.train.grpo import build_reward, grpo_config, run_grpo
from papergym.train.rollouts import ROLLOUTS_FILE, RolloutGroup, RolloutLog
from papergym.train.run import StageContext

ContextFactory = Callable[..., StageContext]

TINY_GRPO = {
    "steps": 2,
    "num_generations": 2,
    "max_completion_length": 12,
    "save_every": 1,
}


class HashJudge:
    """Passes each criterion on a bit of the answer's hash: rewards vary, so gradients flow."""

    name = "hash"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        digest = hashlib.sha256(answer.encode()).digest()
        return [
            Verdict(criterion_id=c.id, passed=bool(digest[n] & 1))
            for n, c in enumerate(instance.rubric.specific)
        ], []


class UnscoredJudge:
    """Never manages to score an answer (as when the judge's replies cannot be parsed)."""

    name = "unscored"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        return [Verdict(criterion_id=c.id, passed=None) for c in instance.rubric.specific], []


def grpo_context(make_context: ContextFactory, **grpo: Any) -> StageContext:
    return make_context("grpo", grpo={**TINY_GRPO, **grpo})


def test_grpo_trains_with_the_offline_rubric_reward(
    make_context: ContextFactory, tiny_model: Path
) -> None:
    ctx = grpo_context(make_context)

    summary = run_grpo(ctx)

    records = ctx.metrics.read()
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert 0.0 <= record["reward"] <= 1.0
        assert 0.0 <= record["reward_specific"] <= 1.0  # the offline judge grades no general pass
        assert record["unscored"] == 0
        assert record["completion_length"] > 0
        assert record["tokens_per_second"] > 0
        assert {"kl", "loss", "learning_rate", "step_seconds"} <= set(record)
    assert summary["steps"] == 2 and summary["resumed_from"] is None
    assert summary["unscored"] == 0
    assert summary["mean_reward"] == sum(r["reward"] for r in records) / 2
    assert summary["mean_completion_length"] > 0
    # the tiny model writes byte soup: no answer meets a criterion, every group ties at 0
    assert [r["tied_groups"] for r in records] == [1.0, 1.0]
    assert (summary["tied_share"], summary["tied_steps"]) == (1.0, 2)
    assert summary["constant_reward"] == 0.0
    assert (ctx.checkpoints_dir / "checkpoint-2" / "adapter_model.safetensors").is_file()
    # A plain model folder, LoRA merged: the same weights by name as the starting model.
    final = AutoModelForCausalLM.from_pretrained(ctx.final_dir).state_dict()
    assert final.keys() == AutoModelForCausalLM.from_pretrained(tiny_model).state_dict().keys()


def test_grpo_trains_the_adapter_and_leaves_the_base_weights(
    make_context: ContextFactory, tiny_model: Path
) -> None:
    ctx = grpo_context(make_context, learning_rate=1e-2, num_generations=4)

    summary = run_grpo(ctx, reward=RubricReward(HashJudge()))

    # rewards that vary within a group: a learning signal, and the summary says so
    assert summary["tied_share"] < 0.5 and summary["constant_reward"] is None
    adapter_dir = ctx.checkpoints_dir / "checkpoint-2"
    adapter = load_file(adapter_dir / "adapter_model.safetensors")
    lora_b = [t for name, t in adapter.items() if "lora_B" in name]
    assert lora_b and any(t.abs().sum() > 0 for t in lora_b)  # B starts at 0: it was trained
    # The final model is exactly the untouched base plus the trained adapter.
    base = AutoModelForCausalLM.from_pretrained(tiny_model)
    rebuilt = PeftModel.from_pretrained(base, adapter_dir).merge_and_unload().state_dict()
    final = AutoModelForCausalLM.from_pretrained(ctx.final_dir).state_dict()
    initial = AutoModelForCausalLM.from_pretrained(tiny_model).state_dict()
    assert all(torch.allclose(final[k], rebuilt[k], atol=1e-6) for k in final)
    assert any(not torch.equal(final[k], initial[k]) for k in final)


def test_grpo_resumes_from_its_last_checkpoint(make_context: ContextFactory) -> None:
    reward = RubricReward(HashJudge())
    run_grpo(grpo_context(make_context, steps=1), reward=reward)
    ctx = grpo_context(make_context, steps=2)
    first = ctx.metrics.read()
    # A crash after logging step 2 but before saving it: the resumed run logs step 2 again.
    ctx.metrics.write(2, reward=-1.0)
    rollouts = RolloutLog(ctx.stage_dir / ROLLOUTS_FILE)
    crashed = read_jsonl(rollouts.path, RolloutGroup)[0].model_copy(update={"step": 1})
    append_jsonl(rollouts.path, crashed)  # the crashed attempt's group of step 2 (0-based 1)

    summary = run_grpo(ctx, reward=reward)

    records = ctx.metrics.read()
    assert summary["steps"] == 2 and summary["resumed_from"] == "checkpoint-1"
    assert [r["step"] for r in records] == [1, 2]
    assert records[0] == first[0]  # step 1 was logged by the first run only
    assert records[1]["reward"] != -1.0
    groups = read_jsonl(rollouts.path, RolloutGroup)
    assert [g.step for g in groups] == [0, 1]  # each group once, the crashed one replaced
    for group in groups:
        assert len(group.verdicts) == TINY_GRPO["num_generations"]
        assert all(set(row) <= {"0", "1"} for row in group.verdicts)
        assert len(group.criteria) == len(group.weights) == len(group.verdicts[0]) > 0
    state = json.loads((ctx.checkpoints_dir / "checkpoint-2" / "trainer_state.json").read_text())
    assert state["global_step"] == 2


def test_unscored_answers_count_as_unscored_not_zero(make_context: ContextFactory) -> None:
    ctx = grpo_context(make_context)

    summary = run_grpo(ctx, reward=RubricReward(UnscoredJudge()))

    records = ctx.metrics.read()
    completions_per_step = TINY_GRPO["num_generations"]  # one prompt per step
    assert [r["unscored"] for r in records] == [completions_per_step] * 2
    assert all(r["reward"] is None for r in records)  # no mean of nothing, and never 0
    assert all(r["loss"] == 0.0 for r in records)  # zero advantage: no policy-gradient push
    assert [r["tied_groups"] for r in records] == [1.0, 1.0]  # no scored answer: no signal
    assert summary["tied_share"] == 1.0 and summary["constant_reward"] is None
    assert summary["unscored"] == 2 * completions_per_step
    assert summary["mean_reward"] is None and summary["last_reward"] is None
    groups = read_jsonl(ctx.stage_dir / ROLLOUTS_FILE, RolloutGroup)
    assert groups and all(set("".join(g.verdicts)) == {"-"} for g in groups)  # never "0"
    assert all(r is None for g in groups for r in g.rewards)


def test_grpo_batch_counts_completions(make_context: ContextFactory) -> None:
    ctx = grpo_context(
        make_context, num_generations=4, prompts_per_step=2, gradient_accumulation_steps=3
    )

    config = grpo_config(ctx)

    assert config.per_device_train_batch_size == 8  # 2 prompts × 4 answers per micro-batch
    assert config.steps_per_generation == 3  # one generation (and judging) per optimiser step
    assert config.generation_batch_size == 24
    assert config.epsilon_high == config.epsilon == 0.2
    assert (config.beta, config.loss_type, config.scale_rewards) == (0.01, "dapo", "group")
    assert config.importance_sampling_level == "token"  # GRPO's per-token ratio by default
    assert not config.bf16
    assert math.isclose(config.learning_rate, 1e-5)


@pytest.mark.parametrize("level", ["token", "sequence"])
def test_the_importance_ratio_level_reaches_trl(make_context: ContextFactory, level: str) -> None:
    config = grpo_config(grpo_context(make_context, importance_sampling_level=level))
    assert config.importance_sampling_level == level


def test_the_llm_judge_reads_the_configured_llm_file(tmp_path: Path) -> None:
    path = tmp_path / "llm.yaml"
    path.write_text(
        "default: {backend: openai, base_url: 'http://127.0.0.1:9/v1', model: judge-model}\n"
        "cache: false\n"
    )

    environ = dict(os.environ)
    config = TrainConfig(reward=RewardSettings(judge="llm", alpha=0.5, llm_config=path))
    reward = build_reward(config)

    assert isinstance(reward.judge, RubricJudge)
    assert reward.judge.name.startswith("llm:judge-model")
    assert reward.alpha == 0.5
    assert dict(os.environ) == environ  # the config is passed, the environment never written


@pytest.fixture(autouse=True)
def _no_shared_reward_left() -> Iterator[None]:
    """Each run sets the process's reward; it must not outlive the run."""
    from papergym.reward import runtime

    yield
    assert runtime._reward is None


def every_criterion_met(request: dict[str, Any]) -> dict[str, Any]:
    """A judge that passes every criterion it is shown (ids read from its numbered list)."""
    listed = str(request["messages"][0]["content"]).split("Criteria (", 1)[1]
    ids = re.findall(r"^(\d+)\. ", listed.split("Plan to grade:", 1)[0], re.MULTILINE)
    quote = first_span(request)
    return {
        "verdicts": [
            {"criterion_id": int(n), "reason": "met", "quote": quote, "verdict": 1} for n in ids
        ]
    }


def test_grpo_with_the_llm_judge_over_http(make_context: ContextFactory, tmp_path: Path) -> None:
    """The whole path a user runs: config.reward.judge=llm → RubricJudge → HTTP server."""
    with FakeOpenAIServer(responder=every_criterion_met) as server:
        path = tmp_path / "llm.yaml"
        path.write_text(
            f"default: {{backend: openai, base_url: '{server.base_url}', model: judge-model}}\n"
            "cache: false\n"
        )
        ctx = make_context(
            "grpo",
            grpo={**TINY_GRPO, "steps": 1},
            reward={"judge": "llm", "alpha": 0.7, "llm_config": str(path)},
        )
        summary = run_grpo(ctx)
        judged = len(server.requests)
    [record] = ctx.metrics.read()
    assert judged >= TINY_GRPO["num_generations"]  # every answer went through HTTP
    assert record["unscored"] == 0
    assert record["unbacked_rate"] == 0.0  # every "met" quoted the answer it judged
    assert record["reward"] == record["reward_specific"] == record["reward_general"] == 1.0
    assert summary["steps"] == 1 and summary["mean_reward"] == 1.0
