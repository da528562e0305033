"""The policy writes papers: ``cycle.samples`` per input, sampled at ``cycle.temperature``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from papergym.train.cycle.records import CycleInput
from papergym.train.progress import PhaseHook
from papergym.train.settings import CycleSettings


def messages_of(item: CycleInput, system_prompt: str | None = None) -> list[dict[str, str]]:
    """The input as chat messages: its own system message, else ``data.system_prompt``."""
    system = item.system or system_prompt
    head = [{"role": "system", "content": system}] if system else []
    return [*head, {"role": "user", "content": item.prompt}]


def generate_papers(
    model_path: str,
    inputs: Sequence[CycleInput],
    settings: CycleSettings,
    *,
    seed: int,
    dtype: str = "auto",
    system_prompt: str | None = None,
    samples: int | None = None,
    on_batch: PhaseHook | None = None,
) -> list[list[tuple[str, int]]]:
    """``samples`` papers (default ``cycle.samples``) per input from the policy at
    ``model_path``, as ``(text, tokens)``, batched ``generation_batch_size`` inputs a call;
    ``on_batch`` is told the papers written so far after each call."""
    from papergym.llm.hf_backend import left_pad
    from papergym.train.models import load_model, load_tokenizer
    from papergym.train.tokens import encode_prompts, stop_token_ids

    count = samples or settings.samples
    tokenizer = load_tokenizer(model_path)
    model = load_model(model_path, dtype)
    model.train(False)
    stops = stop_token_ids(model, tokenizer)
    papers: list[list[tuple[str, int]]] = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for start in range(0, len(inputs), settings.generation_batch_size):
            batch = inputs[start : start + settings.generation_batch_size]
            encoded = encode_prompts(tokenizer, [messages_of(i, system_prompt) for i in batch])
            ids, mask = left_pad(encoded, tokenizer.pad_token_id)
            with torch.no_grad():
                out = model.generate(  # type: ignore[operator]
                    input_ids=ids.to(model.device),
                    attention_mask=mask.to(model.device),
                    do_sample=True,
                    temperature=settings.temperature,
                    top_p=settings.top_p,
                    top_k=0,
                    max_new_tokens=settings.max_new_tokens,
                    num_return_sequences=count,
                    pad_token_id=tokenizer.pad_token_id,
                )
            completions = out[:, ids.shape[1] :].tolist()
            for row in range(len(batch)):
                group = completions[row * count : (row + 1) * count]
                papers.append([_decoded(tokenizer, c, stops) for c in group])
            if on_batch is not None:
                on_batch(len(papers) * count, {})
    return papers


def clip_prompts(
    model_path: str, inputs: Sequence[CycleInput], max_tokens: int | None
) -> list[CycleInput]:
    """The inputs with each prompt cut to ``max_tokens`` tokens at its end (None: as given)."""
    if max_tokens is None:
        return list(inputs)
    from papergym.train.models import load_tokenizer

    tokenizer = load_tokenizer(model_path)
    clipped = []
    for item in inputs:
        ids = tokenizer(item.prompt, add_special_tokens=False)["input_ids"]
        if len(ids) > max_tokens:
            item = item.model_copy(update={"prompt": str(tokenizer.decode(ids[:max_tokens]))})
        clipped.append(item)
    return clipped


def _decoded(tokenizer: Any, tokens: list[int], stops: set[int]) -> tuple[str, int]:
    """The text up to the first end token, and how many tokens it took (the end included)."""
    end = next((i for i, t in enumerate(tokens) if t in stops), None)
    kept = tokens if end is None else tokens[:end]
    text = tokenizer.decode(kept, skip_special_tokens=True)
    return str(text).strip(), len(kept) + (0 if end is None else 1)
