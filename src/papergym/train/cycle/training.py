"""A round's training on its pairs: SimPO + α·NLL (TRL's CPO trainer) or plain SFT on the chosen
papers; the merged weights are the next round's policy."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from papergym.train.config import TrainConfig
from papergym.train.cycle.generate import messages_of
from papergym.train.cycle.records import CycleInput, Pair
from papergym.train.progress import PhaseHook


def train_round(
    config: TrainConfig,
    init_model: str,
    pairs: Sequence[Pair],
    round_dir: Path,
    seed: int,
    phase: Callable[[int], PhaseHook] | None = None,
) -> dict[str, Any]:
    """Train one round on ``pairs`` from ``init_model``; save merged weights to round/final.

    ``phase`` is given the number of optimiser steps when training starts and returns the
    hook each step's logged values (loss...) go to."""
    from papergym.train.callbacks import StepHookCallback
    from papergym.train.models import load_model, load_tokenizer, lora_config, save_merged

    checkpoints = round_dir / "checkpoints"
    shutil.rmtree(checkpoints, ignore_errors=True)  # a killed round trains again from its start
    common = _trainer_args(config, checkpoints, seed)
    tokenizer = load_tokenizer(init_model)
    inputs: dict[str, Any] = {
        "model": load_model(init_model, config.model.dtype),
        "processing_class": tokenizer,
        "peft_config": lora_config(config.lora) if config.lora.enabled else None,
        "callbacks": [StepHookCallback(phase)] if phase is not None else [],
    }
    trainer = _trainer(config, inputs, common, pairs)
    from papergym.train.trl_stage import without_console_logs

    without_console_logs(trainer)
    result = trainer.train()
    save_merged(trainer.accelerator.unwrap_model(trainer.model), tokenizer, round_dir / "final")
    shutil.rmtree(checkpoints, ignore_errors=True)
    logged = [r for r in trainer.state.log_history if "loss" in r]
    return {
        "steps": trainer.state.global_step,
        "train_loss": result.training_loss,
        "last_loss": logged[-1]["loss"] if logged else None,
        "nll_loss": logged[-1].get("nll_loss") if logged else None,
    }


def _trainer(
    config: TrainConfig, inputs: dict[str, Any], common: dict[str, Any], pairs: Sequence[Pair]
) -> Any:
    """The round's TRL trainer: SFT on the chosen papers, or SimPO + α·NLL on the pairs."""
    from datasets import Dataset

    settings = config.cycle
    system = config.data.system_prompt
    if settings.loss == "sft":
        from trl.trainer.sft_config import SFTConfig
        from trl.trainer.sft_trainer import SFTTrainer

        rows = [
            {
                "prompt": _pair_messages(p, system),
                "completion": [{"role": "assistant", "content": p.chosen}],
            }
            for p in pairs
        ]
        args = SFTConfig(
            **common, max_length=settings.max_length, completion_only_loss=True, packing=False
        )
        return SFTTrainer(**inputs, args=args, train_dataset=Dataset.from_list(rows))
    from papergym.train.cpo_import import cpo_classes

    trainer_class, config_class = cpo_classes()
    rows = [
        {
            "prompt": _pair_messages(p, system),
            "chosen": [{"role": "assistant", "content": p.chosen}],
            "rejected": [{"role": "assistant", "content": p.rejected}],
        }
        for p in pairs
    ]
    args = config_class(
        **common,
        loss_type="simpo",
        beta=settings.beta,
        simpo_gamma=settings.gamma,
        cpo_alpha=settings.nll_weight,
        max_length=settings.max_length,
        remove_unused_columns=False,  # the pair collator needs every column
    )
    return trainer_class(**inputs, args=args, train_dataset=Dataset.from_list(rows))


def _pair_messages(pair: Pair, system_prompt: str | None) -> list[dict[str, str]]:
    item = CycleInput(id=pair.input_id, prompt=pair.prompt, system=pair.system)
    return messages_of(item, system_prompt)


def _trainer_args(config: TrainConfig, output: Path, seed: int) -> dict[str, Any]:
    """Every TrainingArguments setting that matters, so a TRL default change cannot move a run."""
    from papergym.train.models import torch_dtype

    settings = config.cycle
    on_gpu = torch.cuda.is_available()
    return {
        "output_dir": str(output),
        "max_steps": settings.steps or -1,
        "num_train_epochs": settings.epochs,
        "learning_rate": settings.learning_rate,
        "lr_scheduler_type": "constant_with_warmup",
        "warmup_steps": settings.warmup_ratio,
        "per_device_train_batch_size": settings.batch_size,
        "gradient_accumulation_steps": settings.gradient_accumulation_steps,
        "gradient_checkpointing": settings.gradient_checkpointing,
        "save_strategy": "no",  # rounds are the unit of resumption
        "logging_steps": 1,
        "report_to": "none",
        "disable_tqdm": True,
        "seed": seed,
        "use_cpu": not on_gpu,
        "bf16": on_gpu and torch_dtype(config.model.dtype) == torch.bfloat16,
        "fp16": False,
    }
