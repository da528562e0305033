"""OPSD: the teacher reads the rubric, the student does not; both score the same tokens; only
LoRA moves; padding is inert; a resumed run equals an uninterrupted one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from train_samples import sample_rows

from papergym.settings.train import LoraSettings, OPSDSettings
from papergym.train.models import load_model, load_tokenizer, with_lora
from papergym.train.opsd import (
    OPSDTrainer,
    completion_logits,
    completion_mask,
    encode_prompts,
    left_pad,
    teacher_messages,
)

LORA = LoraSettings(r=4, alpha=8)


@pytest.fixture
def model_dir(tiny_model: Path) -> Path:
    return tiny_model


def settings(**overrides: Any) -> OPSDSettings:
    base: dict[str, Any] = {
        "steps": 2,
        "batch_size": 4,
        "micro_batch_size": 2,
        "max_new_tokens": 12,
        "learning_rate": 5e-3,
        "save_every": 1,
    }
    return OPSDSettings(**{**base, **overrides})


def trainer_for(model_dir: Path, rows: list[dict[str, Any]], **kwargs: Any) -> OPSDTrainer:
    lora = kwargs.pop("lora", True)
    model = load_model(str(model_dir), "float32")
    if lora:
        model = with_lora(model, LORA)
    return OPSDTrainer(model, load_tokenizer(str(model_dir)), rows, kwargs.pop("opsd"), **kwargs)


def no_context(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**row, "privileged_context": "", "reference": ""} for row in rows]


def test_teacher_gets_the_rubric_in_the_user_turn_only() -> None:
    row = {
        **sample_rows(1)[0],
        "prompt": [
            {"role": "system", "content": "You plan research."},
            {"role": "user", "content": "Q?"},
        ],
    }
    messages = teacher_messages(row, settings())
    assert messages[0] == row["prompt"][0]
    assert messages[1]["role"] == "user"
    assert messages[1]["content"] == f"Q?\n\n{row['privileged_context']}"
    assert row["prompt"][1]["content"] == "Q?"  # the student's row is untouched
    reference = teacher_messages(row, settings(teacher_context="reference"))
    assert reference[1]["content"].endswith(row["reference"])
    assert teacher_messages(no_context([row])[0], settings()) == row["prompt"]


def test_completion_mask_keeps_the_stop_token_and_nothing_after() -> None:
    completions = torch.tensor([[5, 6, 9, 7, 7], [5, 9, 9, 1, 2], [5, 6, 7, 8, 1]])
    assert completion_mask(completions, {9}).tolist() == [
        [1, 1, 1, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 1, 1],
    ]


def test_batched_padded_logits_equal_each_answer_alone(model_dir: Path) -> None:
    """Left-padded prompts of different lengths, right-padded answers: every completion position
    gets exactly the logits an unpadded forward pass of that one sequence gives."""
    tokenizer = load_tokenizer(str(model_dir))
    model = load_model(str(model_dir), "float32")
    rows = sample_rows(3)
    rows[1]["prompt"][-1]["content"] += " A much longer question, to force left padding here."
    prompts = encode_prompts(tokenizer, [r["prompt"] for r in rows])
    completions = torch.tensor([[40, 41, 42, 43], [50, 51, 0, 0], [60, 61, 62, 0]])
    mask = (completions != 0).long()
    ids, prompt_mask = left_pad(prompts, tokenizer.pad_token_id)
    with torch.no_grad():
        batched = completion_logits(model, ids, prompt_mask, completions, mask)
        for i, prompt in enumerate(prompts):
            answer = completions[i][mask[i] == 1]
            alone = model(torch.tensor([prompt + answer.tolist()])).logits[0]
            expected = alone[len(prompt) - 1 : len(prompt) - 1 + len(answer)]
            assert torch.allclose(batched[i, : len(answer)], expected, atol=1e-5)


def test_empty_privileged_context_gives_zero_loss_even_for_a_live_trained_policy(
    model_dir: Path,
) -> None:
    trainer = trainer_for(model_dir, no_context(sample_rows(4)), opsd=settings(teacher="live"))
    with torch.no_grad():  # move the adapter away from zero so student ≠ base
        for name, param in trainer.model.named_parameters():
            if "lora_B" in name:
                param.normal_(0, 0.5)
    batch = trainer.sample(trainer.rows_for_step(0))
    assert batch.student_prompts == batch.teacher_prompts
    with torch.no_grad():
        assert float(trainer.loss(batch, slice(0, 4))) < 1e-6


def test_rubric_makes_the_teacher_differ_and_padding_contributes_nothing(model_dir: Path) -> None:
    trainer = trainer_for(model_dir, sample_rows(4), opsd=settings())
    batch = trainer.sample(trainer.rows_for_step(0))
    assert all(
        len(t) > len(s) for s, t in zip(batch.student_prompts, batch.teacher_prompts, strict=True)
    )
    with torch.no_grad():
        loss = float(trainer.loss(batch, slice(0, 4)))
        assert 0.0 < loss < 0.6932  # JSD at β = 0.5 is bounded by ln 2
        noisy = batch.completions.masked_fill(batch.mask == 0, 77)  # garbage after the stop
        noisy_batch = type(batch)(batch.student_prompts, batch.teacher_prompts, noisy, batch.mask)
        assert float(trainer.loss(noisy_batch, slice(0, 4))) == pytest.approx(loss, abs=1e-6)


def test_training_moves_only_lora_weights(model_dir: Path, tmp_path: Path) -> None:
    trainer = trainer_for(model_dir, sample_rows(4), opsd=settings(), checkpoints_dir=tmp_path)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    summary = trainer.train()
    assert summary["steps"] == 2 and summary["last_loss"] is not None
    changed = {n for n, p in trainer.model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all("lora_" in n for n in changed)
    assert any("lora_B" in n for n in changed)
    assert (tmp_path / "checkpoint-2" / "adapter_model.safetensors").is_file()


def test_without_lora_the_frozen_teacher_is_a_copy_of_the_start(model_dir: Path) -> None:
    trainer = trainer_for(model_dir, sample_rows(2), opsd=settings(batch_size=2), lora=False)
    start = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train(steps=1)
    with trainer.teacher() as teacher:
        assert all(torch.equal(p, start[n]) for n, p in teacher.named_parameters())
    assert any(not torch.equal(p, start[n]) for n, p in trainer.model.named_parameters())


def test_each_epoch_visits_every_question_once(model_dir: Path) -> None:
    rows = sample_rows(4)
    trainer = trainer_for(model_dir, rows, opsd=settings(batch_size=2, micro_batch_size=1))
    for epoch in range(2):
        seen = trainer.rows_for_step(2 * epoch) + trainer.rows_for_step(2 * epoch + 1)
        assert sorted(r["instance_id"] for r in seen) == sorted(r["instance_id"] for r in rows)


@pytest.fixture
def rows() -> Iterator[list[dict[str, Any]]]:
    yield sample_rows(4)


def test_resumed_run_equals_an_uninterrupted_one(
    model_dir: Path, tmp_path: Path, rows: list[dict[str, Any]]
) -> None:
    straight = trainer_for(model_dir, rows, opsd=settings(steps=3), checkpoints_dir=tmp_path / "a")
    straight.train()
    first = trainer_for(model_dir, rows, opsd=settings(steps=3), checkpoints_dir=tmp_path / "b")
    first.train(steps=2)
    resumed = trainer_for(model_dir, rows, opsd=settings(steps=3), checkpoints_dir=tmp_path / "b")
    resumed.load_checkpoint(tmp_path / "b" / "checkpoint-2")
    assert resumed.step == 2
    resumed.train()
    for (name, a), (_, b) in zip(
        straight.model.named_parameters(), resumed.model.named_parameters(), strict=True
    ):
        assert torch.allclose(a, b, atol=1e-6), name


def test_gradient_checkpointing_gives_the_same_loss_and_gradients(model_dir: Path) -> None:
    rows = sample_rows(2)
    results = []
    for checkpointing in (False, True):
        trainer = trainer_for(
            model_dir, rows, opsd=settings(batch_size=2, gradient_checkpointing=checkpointing)
        )
        batch = trainer.sample(trainer.rows_for_step(0))
        loss = trainer.loss(batch, slice(0, 2))
        loss.backward()  # type: ignore[no-untyped-call]
        grads = {
            n: p.grad.clone() for n, p in trainer.model.named_parameters() if p.grad is not None
        }
        assert not trainer.model.training  # back in eval mode after the student pass
        results.append((float(loss.detach()), grads))
    (plain_loss, plain), (ckpt_loss, ckpt) = results
    assert ckpt_loss == pytest.approx(plain_loss, abs=1e-6)
    assert plain.keys() == ckpt.keys() and plain
    assert all(torch.allclose(plain[n], ckpt[n], atol=1e-6) for n in plain)


@pytest.mark.slow  # ~12 s each on a shared 2-core machine: two models, one sampled batch
@pytest.mark.parametrize("reduction", ["token", "sequence"])
def test_micro_batches_give_the_whole_batch_loss_under_either_reduction(
    model_dir: Path, reduction: str
) -> None:
    rows = sample_rows(2)
    whole_pass = trainer_for(model_dir, rows, opsd=settings(batch_size=2, loss_reduction=reduction))
    one_each = trainer_for(
        model_dir, rows, opsd=settings(batch_size=2, micro_batch_size=1, loss_reduction=reduction)
    )
    batch = whole_pass.sample(whole_pass.rows_for_step(0))  # one batch for both
    whole = float(whole_pass.loss(batch, slice(0, 2)).detach())
    assert whole_pass.distill(batch)[0] == pytest.approx(whole, abs=1e-6)
    assert one_each.distill(batch)[0] == pytest.approx(whole, abs=1e-6)
