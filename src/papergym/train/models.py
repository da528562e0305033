"""Loading the policy: a hub name, a local folder, or the in-process tiny model; LoRA on top.

Every stage loads its starting weights through :func:`load_policy` and hands its result to the
next stage as a plain model folder (LoRA merged), so a pipeline's stages compose like any
``from_pretrained`` checkpoints and the last one is what users serve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from papergym.errors import BadInputError
from papergym.train.config import LoraSettings, ModelSettings
from papergym.train.tiny import save_tiny_model

TINY = "tiny"
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_model_path(settings: ModelSettings, run_dir: Path) -> str:
    """Where the starting weights load from; ``tiny`` is built once into ``run_dir/tiny-model``."""
    if settings.name_or_path != TINY:
        return settings.name_or_path
    target = run_dir / "tiny-model"
    if not (target / "config.json").is_file():
        tiny = settings.tiny
        save_tiny_model(
            target,
            vocab_size=tiny.vocab_size,
            hidden_size=tiny.hidden_size,
            layers=tiny.layers,
            heads=tiny.heads,
            seed=tiny.seed,
            answer_tokens=tiny.answer_tokens,
        )
    return str(target)


def torch_dtype(name: str) -> torch.dtype | str:
    """``auto`` is bfloat16 on a GPU that supports it and float32 elsewhere (CPU training)."""
    if name != "auto":
        return _DTYPES[name]
    if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def load_tokenizer(path: str) -> PreTrainedTokenizerBase:
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
    except OSError as error:
        raise BadInputError(path, f"cannot load the tokenizer ({_first_line(error)})") from None
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not getattr(tokenizer, "chat_template", None):
        raise BadInputError(path, "the tokenizer has no chat template; use a chat/instruct model")
    return tokenizer


def load_model(path: str, dtype: str = "auto") -> PreTrainedModel:
    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=torch_dtype(dtype))
    except OSError as error:
        raise BadInputError(path, f"cannot load the model ({_first_line(error)})") from None
    moved: PreTrainedModel = model.to(device())  # type: ignore[arg-type]
    return moved


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def lora_config(settings: LoraSettings) -> LoraConfig:
    return LoraConfig(
        r=settings.r,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=settings.target_modules,
        task_type="CAUSAL_LM",
    )


def with_lora(model: PreTrainedModel, settings: LoraSettings, seed: int = 0) -> Any:
    """The model wrapped with a fresh LoRA adapter (B = 0, so it starts equal to the base).

    A is drawn from ``seed`` without touching the caller's random stream, so the same config
    gives the same run.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return get_peft_model(model, lora_config(settings))


def save_merged(model: Any, tokenizer: PreTrainedTokenizerBase, target: Path) -> Path:
    """Save ``model`` as a plain checkpoint folder, merging a LoRA adapter into the weights."""
    plain = model.merge_and_unload() if isinstance(model, PeftModel) else model
    target.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
