"""Tiny in-process models: a tokenizer that round-trips any text, ChatML, offline save/load, and
deterministic generation."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerFast,
)

from papergym.train.tiny import (
    CHAT_TEMPLATE,
    IM_END,
    SPECIAL_TOKENS,
    build_tiny_model,
    build_tiny_tokenizer,
    save_tiny_model,
)

CHAT = [
    {"role": "system", "content": "You write research plans."},
    {"role": "user", "content": "Plan a study of sparse attention."},
]


@pytest.fixture(autouse=True, scope="module")
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield


@cache
def tokenizer() -> PreTrainedTokenizerFast:
    return build_tiny_tokenizer()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "We study a small question.",
        '{"title": "Sparse attention", "score": 7}',
        r"\section{Method} $\sqrt{d}$ \cite{x}",
        "never-seen: Zürich, 東京, emoji 🙂, tab\tand\nnewline  double  spaces ",
    ],
)
def test_known_and_unseen_text_round_trips(text: str) -> None:
    ids = tokenizer()(text)["input_ids"]
    assert tokenizer().decode(ids) == text


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_any_text_round_trips(text: str) -> None:
    assert tokenizer().decode(tokenizer()(text)["input_ids"]) == text


def test_vocabulary_is_byte_level_bpe_with_special_tokens_first() -> None:
    tok = tokenizer()
    assert tok.convert_ids_to_tokens(list(range(len(SPECIAL_TOKENS)))) == list(SPECIAL_TOKENS)
    assert (tok.unk_token, tok.bos_token, tok.eos_token, tok.pad_token) == SPECIAL_TOKENS[:4]
    assert 256 < len(tok) <= 512  # every byte, plus merges learned from the built-in corpus
    assert len(tok("attention")["input_ids"]) < len("attention")  # merges were learned
    assert len(build_tiny_tokenizer(["aaaa bbbb"] * 3, vocab_size=300)) <= 300


def test_tokenizer_is_deterministic() -> None:
    again = build_tiny_tokenizer()
    assert again.get_vocab() == tokenizer().get_vocab()


def test_chat_template_renders_turns_and_generation_prompt() -> None:
    tok = tokenizer()
    plain = tok.apply_chat_template(CHAT, tokenize=False)
    prompt = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert plain == (
        "<|im_start|>system\nYou write research plans.<|im_end|>\n"
        "<|im_start|>user\nPlan a study of sparse attention.<|im_end|>\n"
    )
    assert prompt == plain + "<|im_start|>assistant\n"
    ids = tok(prompt, add_special_tokens=False)["input_ids"]
    assert ids.count(tok.convert_tokens_to_ids("<|im_start|>")) == 3  # markers stay one token
    assert tok.decode(ids, skip_special_tokens=True).startswith("system\nYou write")


def test_saved_folder_loads_offline_with_auto_classes(tmp_path: Path) -> None:
    started = time.perf_counter()
    folder = save_tiny_model(tmp_path / "tiny", hidden_size=32, seed=3)
    assert time.perf_counter() - started < 10  # ~0.1 s here; generous for loaded machines
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    assert tok.chat_template == CHAT_TEMPLATE
    assert tok.get_vocab() == tokenizer().get_vocab()
    assert model.config.vocab_size == len(tok)
    assert model.config.hidden_size == 32
    assert model.config.pad_token_id == tok.pad_token_id
    assert model.generation_config.eos_token_id == [tok.convert_tokens_to_ids(IM_END), 2]
    built = build_tiny_model(tokenizer(), hidden_size=32, seed=3)
    for (name, saved), fresh in zip(
        model.state_dict().items(), built.state_dict().values(), strict=True
    ):
        assert torch.equal(saved, fresh), name


def test_same_seed_same_weights_and_caller_rng_untouched() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    first = build_tiny_model(tokenizer(), seed=5)
    assert torch.equal(torch.rand(3), expected)  # building did not consume the caller's RNG
    same = build_tiny_model(tokenizer(), seed=5)
    other = build_tiny_model(tokenizer(), seed=6)
    weight = "model.embed_tokens.weight"
    assert torch.equal(first.state_dict()[weight], same.state_dict()[weight])
    assert not torch.equal(first.state_dict()[weight], other.state_dict()[weight])


def _greedy(model: PreTrainedModel, prompt: str, max_new_tokens: int) -> list[int]:
    tok = tokenizer()
    inputs = tok(prompt, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        output = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
    new: list[int] = output[0, inputs["input_ids"].shape[1] :].tolist()
    return new


def test_greedy_generation_is_deterministic_and_ends_its_turn() -> None:
    tok = tokenizer()
    prompt = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    model = build_tiny_model(tok)
    first = _greedy(model, prompt, 40)
    assert first == _greedy(model, prompt, 40)
    assert first == _greedy(build_tiny_model(tok), prompt, 40)
    # The end-of-turn boost from answer_tokens=8 ends the answer soon after 8 tokens.
    assert 8 < len(first) < 40
    assert first[-1] in model.generation_config.eos_token_id
    other = tok.apply_chat_template(
        [{"role": "user", "content": "Something else entirely."}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert _greedy(model, other, 40) != first  # answers depend on the prompt


def test_without_answer_limit_generation_runs_to_max_new_tokens() -> None:
    model = build_tiny_model(tokenizer(), answer_tokens=None)
    assert model.generation_config.exponential_decay_length_penalty is None
    prompt = tokenizer().apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    assert len(_greedy(model, prompt, 12)) == 12
