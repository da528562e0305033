"""The SFT baseline of SPEC §4: supervised fine-tuning on the reference answers, with TRL.

Each training row becomes a prompt-completion pair: the chat prompt the policy sees (the
question alone) and the reference answer as the assistant's turn. TRL's ``SFTTrainer`` then
computes the loss on the completion tokens only, so the model learns to write answers, not to
reproduce questions. The paper reports this baseline below the base model (SPEC §4), which is
why it is a comparison, not a stage of the default pipeline.

``metrics.jsonl`` records keep TRL's names (``loss``, ``learning_rate``...), as OPSD's do, plus
``tokens_per_second``: non-padding tokens (prompt and completion) forwarded per wall second.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from datasets import Dataset
from transformers import TrainerCallback
from trl.trainer.sft_config import SFTConfig
from trl.trainer.sft_trainer import SFTTrainer

from papergym.errors import BadInputError
from papergym.train.callbacks import MetricsCallback
from papergym.train.run import StageContext, StepHook
from papergym.train.trl_stage import (
    eval_callbacks,
    resume_point,
    stage_summary,
    train_and_save,
    trainer_args,
    trainer_inputs,
    without_console_logs,
)


def run_sft(ctx: StageContext, on_step: StepHook | None = None) -> dict[str, Any]:
    """Fine-tune ``ctx.init_model`` on the reference answers; save merged to ``ctx.final_dir``."""
    callback = MetricsCallback(ctx.metrics, on_step=on_step)
    resume = resume_point(ctx)
    trainer = sft_trainer(ctx, callbacks=[callback, *eval_callbacks(ctx)])
    if trainer.train_dataset is None or len(trainer.train_dataset) == 0:  # type: ignore[arg-type]
        raise BadInputError(
            ctx.config.data.build_dir,
            f"no SFT example keeps a reference-answer token within sft.max_length="
            f"{ctx.config.sft.max_length} tokens (the prompts alone are longer); raise it",
        )
    return stage_summary(ctx, train_and_save(trainer, ctx, resume), resume)


def sft_example(row: dict[str, Any]) -> dict[str, Any]:
    """A TRL row as a conversational prompt-completion example: the reference is the answer."""
    return {
        "prompt": row["prompt"],
        "completion": [{"role": "assistant", "content": row["reference"]}],
    }


def sft_trainer(ctx: StageContext, callbacks: Sequence[TrainerCallback] = ()) -> SFTTrainer:
    """The ``SFTTrainer`` for this stage: model, tokenizer, prompt-completion data, LoRA."""
    trainer = SFTTrainer(
        **trainer_inputs(ctx, callbacks),
        args=sft_config(ctx),
        train_dataset=Dataset.from_list([sft_example(row) for row in ctx.rows["train"]]),
    )
    return without_console_logs(trainer)


def sft_config(ctx: StageContext) -> SFTConfig:
    """Every setting that matters spelled out, so a TRL default change cannot move a run."""
    settings = ctx.config.sft
    return SFTConfig(
        **trainer_args(ctx, settings),
        per_device_train_batch_size=settings.batch_size,
        max_length=settings.max_length,
        completion_only_loss=True,
        packing=False,
    )
