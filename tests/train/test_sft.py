"""The SFT baseline on TRL's SFTTrainer: reference answers as completions, on a tiny model."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer

from papergym.errors import BadInputError
from papergym.train.run import StageContext
from papergym.train.sft import run_sft, sft_trainer

ContextFactory = Callable[..., StageContext]
IGNORE = -100
TINY_SFT = {"steps": 2, "batch_size": 2, "max_length": 256, "save_every": 1}


def sft_context(make_context: ContextFactory, **sections: Any) -> StageContext:
    return make_context("sft", sft={**TINY_SFT, **sections.pop("sft", {})}, **sections)


def test_sft_trains_on_the_reference_answers(
    make_context: ContextFactory, tiny_model: Path
) -> None:
    ctx = sft_context(make_context)
    seen: list[int] = []

    summary = run_sft(ctx, on_step=lambda step, values: seen.append(step))

    records = ctx.metrics.read()
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert math.isfinite(record["loss"]) and record["loss"] > 0
        assert record["learning_rate"] > 0 and record["tokens_per_second"] > 0
    assert summary["steps"] == 2 and summary["last_loss"] == records[-1]["loss"]
    assert seen == [1, 2]
    assert (ctx.checkpoints_dir / "checkpoint-2" / "adapter_model.safetensors").is_file()
    final = AutoModelForCausalLM.from_pretrained(ctx.final_dir).state_dict()
    assert final.keys() == AutoModelForCausalLM.from_pretrained(tiny_model).state_dict().keys()
    assert AutoTokenizer.from_pretrained(ctx.final_dir).chat_template


def test_only_the_completion_is_learned(make_context: ContextFactory, tiny_model: Path) -> None:
    ctx = sft_context(make_context)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    trainer = sft_trainer(ctx)

    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(2)])

    for row, ids, labels, mask in zip(
        ctx.rows["train"], batch["input_ids"], batch["labels"], batch["attention_mask"], strict=True
    ):
        prompt = tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False
        )
        n_prompt, n_real = len(prompt), int(mask.sum())
        assert ids[:n_prompt].tolist() == list(prompt)
        assert (labels[:n_prompt] == IGNORE).all()  # the question is context, not a target
        assert torch.equal(labels[n_prompt:n_real], ids[n_prompt:n_real])
        assert (labels[n_real:] == IGNORE).all()  # padding
        learned = tokenizer.decode(ids[n_prompt:n_real])
        assert learned.startswith(row["reference"]) and "<|im_end|>" in learned


def test_sft_full_fine_tuning_resumes(make_context: ContextFactory, tiny_model: Path) -> None:
    full = {"lora": {"enabled": False}}
    run_sft(sft_context(make_context, sft={"steps": 1}, **full))
    ctx = sft_context(make_context, **full)
    first = ctx.metrics.read()

    summary = run_sft(ctx)

    assert summary["steps"] == 2 and summary["resumed_from"] == "checkpoint-1"
    assert [r["step"] for r in ctx.metrics.read()] == [1, 2]
    assert ctx.metrics.read()[0] == first[0]
    checkpoint = load_file(ctx.checkpoints_dir / "checkpoint-2" / "model.safetensors")
    initial = AutoModelForCausalLM.from_pretrained(tiny_model).state_dict()
    changed = [k for k, v in checkpoint.items() if not torch.equal(v, initial[k])]
    assert len(changed) > len(checkpoint) // 2  # every layer trains, not an adapter


def test_prompts_longer_than_max_length_fail_in_one_line(make_context: ContextFactory) -> None:
    ctx = sft_context(make_context, sft={"max_length": 4})
    with pytest.raises(BadInputError, match=r"sft\.max_length=4"):
        run_sft(ctx)
    assert not ctx.final_dir.exists()
