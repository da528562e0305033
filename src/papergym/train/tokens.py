"""Prompts as token ids and where an answer ends: what the OPSD trainer, the evaluation during
training and the cycle's paper writing share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

Messages = list[dict[str, str]]


def encode_prompts(
    tokenizer: PreTrainedTokenizerBase, conversations: Sequence[Messages]
) -> list[list[int]]:
    """Token ids of each conversation under the chat template, ready for the answer to follow."""
    encoded = []
    for messages in conversations:
        text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        encoded.append(tokenizer(str(text), add_special_tokens=False)["input_ids"])
    return encoded


def stop_token_ids(model: Any, tokenizer: PreTrainedTokenizerBase) -> set[int]:
    """Every id that ends an answer: the generation config's end tokens and the tokenizer's EOS."""
    configured = getattr(model.generation_config, "eos_token_id", None)
    ids = set(configured if isinstance(configured, list) else [configured])
    ids.add(tokenizer.eos_token_id)
    return {i for i in ids if i is not None}


def completion_mask(completions: torch.Tensor, stops: set[int]) -> torch.Tensor:
    """1 for each answer token up to and including its first stop token, 0 after it."""
    is_stop = torch.zeros_like(completions, dtype=torch.bool)
    for stop in stops:
        is_stop |= completions == stop
    # a position is valid while no stop token came *before* it
    stops_before = torch.cumsum(is_stop.long(), dim=1) - is_stop.long()
    return (stops_before == 0).long()
