"""Constrained decoding in the ``hf`` backend (:mod:`papergym.llm.grammar`): a random tiny model's
structured answer is valid JSON of the schema only under the grammar; each row of a batch
follows its own grammar (or none); the cache identity names the constrained case only; and
without xgrammar the backend behaves as before and ``llm-check`` says how to turn it on."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from papergym.cli import app
from papergym.llm import grammar
from papergym.llm.config import BackendConfig
from papergym.llm.hf_backend import HFBackend
from papergym.llm.identity import backend_identity, identity_text
from papergym.llm.structured import StructuredOutputError, parse_structured
from papergym.llm.types import Completion, Message, SamplingParams
from papergym.train.tiny import save_tiny_model

needs_xgrammar = pytest.mark.skipif(
    not grammar.grammar_library_installed(), reason=f"needs {grammar.HOW_TO_TURN_ON}"
)

ASK = [Message(role="user", content="Plan a study of sparse attention on long documents.")]
LONG = SamplingParams(max_tokens=256)


class Step(BaseModel):
    name: str = Field(max_length=8)
    hours: int = Field(ge=1, le=8)
    kind: Literal["data", "train", "eval"]


class Plan(BaseModel):
    ok: bool
    title: str = Field(max_length=12)
    steps: list[Step] = Field(min_length=1, max_length=2)


class Verdict(BaseModel):
    """No free text: a random model's bytes can break UTF-8 inside a string (xgrammar does not
    check that), and the replacement characters then count towards a string's maxLength."""

    score: int = Field(ge=0, le=10)
    verdict: Literal["accept", "reject"]
    flags: list[Literal["novel", "sound", "clear"]] = Field(max_length=3)


class Flag(BaseModel):
    ok: bool
    kind: Literal["data", "train", "eval"]


SHORT = SamplingParams(max_tokens=64)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        # No end-of-turn boost: it grows without bound while a grammar holds the turn open, and
        # an infinite logit makes sampling fail. Bounded strings keep the answers short instead.
        yield save_tiny_model(tmp_path_factory.mktemp("grammar") / "tiny", answer_tokens=None)


def backend_for(model_dir: Path, **options: Any) -> HFBackend:
    return HFBackend(BackendConfig(backend="hf", model=str(model_dir), **options))


def answer(backend: HFBackend, params: SamplingParams = LONG) -> list[Completion]:
    return asyncio.run(backend.complete(ASK, params, Plan))


@needs_xgrammar
def test_a_random_models_answer_is_valid_only_under_the_grammar(model_dir: Path) -> None:
    constrained = backend_for(model_dir)  # structured_output: auto
    assert constrained.constrained
    [valid] = answer(constrained)
    plan = parse_structured(valid.text, Plan)
    assert 1 <= len(plan.steps) <= 2 and all(1 <= s.hours <= 8 for s in plan.steps)
    assert valid.finish_reason == "stop"
    assert valid.text.startswith("{") and valid.text.endswith("}")  # nothing around the JSON

    prompted = backend_for(model_dir, structured_output="none")
    assert not prompted.constrained
    [free] = answer(prompted)
    with pytest.raises(StructuredOutputError):
        parse_structured(free.text, Plan)


@needs_xgrammar
def test_each_row_of_a_batch_follows_its_own_grammar_or_none(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alone = backend_for(model_dir)
    plain_alone = asyncio.run(alone.complete(ASK, SHORT, None))
    flag_alone = asyncio.run(alone.complete(ASK, SHORT, Flag))

    backend = backend_for(model_dir, batch_wait_ms=500)  # wide: timing cannot split the batch
    model = asyncio.run(backend.load()).model
    batch_sizes: list[int] = []
    generate = model.generate

    def counting(*args: Any, **kwargs: Any) -> Any:
        batch_sizes.append(kwargs["input_ids"].shape[0])
        return generate(*args, **kwargs)

    monkeypatch.setattr(model, "generate", counting)

    async def together() -> list[list[Completion]]:
        return await asyncio.gather(
            backend.complete(ASK, SHORT, Flag),
            backend.complete(ASK, SHORT, None),
            backend.complete(ASK, SHORT, Verdict),
        )

    flag, plain, verdict = asyncio.run(together())
    assert batch_sizes == [3]
    assert plain == plain_alone  # the unconstrained row is not touched by the others' grammars
    assert flag == flag_alone
    parse_structured(flag[0].text, Flag)
    parse_structured(verdict[0].text, Verdict)


@needs_xgrammar
def test_an_infinite_logit_from_an_earlier_processor_stays_finite_and_masked(
    model_dir: Path,
) -> None:
    import torch

    backend = backend_for(model_dir)
    loaded = asyncio.run(backend.load())
    vocab = loaded.model.config.vocab_size
    grammars = grammar.SchemaGrammars(loaded.tokenizer, vocab, [loaded.tokenizer.eos_token_id])
    rows = grammar.RowGrammars([grammars.compiled(Flag)], grammars.vocab_size)
    scores = torch.full((1, vocab), float("inf"))
    out = rows(torch.zeros((1, 1), dtype=torch.long), scores)
    assert not torch.isinf(out).logical_and(out > 0).any()  # no +inf left to sample from
    allowed = torch.isfinite(out[0])
    assert 0 < int(allowed.sum()) < vocab  # the grammar still masks: only "{" may start
    assert torch.softmax(out[0], dim=-1).isfinite().all()


@needs_xgrammar
def test_sampled_rows_repeated_for_n_each_follow_the_grammar(model_dir: Path) -> None:
    params = SamplingParams(temperature=1.0, max_tokens=64, n=3, seed=3)
    completions = asyncio.run(backend_for(model_dir).complete(ASK, params, Verdict))
    assert len(completions) == 3 and len({c.text for c in completions}) > 1
    for completion in completions:
        parse_structured(completion.text, Verdict)


def test_only_a_constrained_hf_backend_has_the_mode_in_its_identity(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hf = BackendConfig(backend="hf", model=str(model_dir))
    prompted = hf.model_copy(update={"structured_output": "none"})
    served = BackendConfig(model="m", base_url="http://127.0.0.1:8000/v1")
    old_hf_keys = {"backend", "model", "gguf_file", "dtype", "device"}
    assert set(backend_identity(prompted)) == old_hf_keys
    assert "structured_output=" not in identity_text(prompted)
    assert backend_identity(served)["structured_output"] == "response_format"  # as before

    monkeypatch.setattr(grammar, "grammar_library_installed", lambda: True)
    assert backend_identity(hf) == backend_identity(prompted) | {"structured_output": "constrained"}
    # records that name the model (build and eval folders) stay as they were: resumable
    assert identity_text(hf) == identity_text(prompted)
    assert backend_identity(served)["structured_output"] == "response_format"

    monkeypatch.setattr(grammar, "grammar_library_installed", lambda: False)
    assert backend_identity(hf) == backend_identity(prompted)  # no xgrammar: as before


def test_without_xgrammar_the_backend_prompts_and_llm_check_says_how_to_turn_it_on(
    model_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(grammar, "grammar_library_installed", lambda: False)
    backend = backend_for(model_dir)
    assert not backend.constrained
    [free] = answer(backend, SamplingParams(max_tokens=40))
    with pytest.raises(StructuredOutputError):
        parse_structured(free.text, Plan)

    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))
    result = CliRunner().invoke(
        app,
        [
            "llm-check",
            "llm.default.backend=hf",
            f"llm.default.model={model_dir}",
            "llm.default.repair_attempts=0",
            "--max-tokens",
            "16",
        ],
    )
    # A random model fails the structured call: exit 2, with the table and the note.
    assert result.exit_code == 2, result.output
    assert "constrained decoding is off (xgrammar is not installed)" in result.output
    assert grammar.HOW_TO_TURN_ON in result.output
    assert grammar.off_reason(BackendConfig(model="m")) is None  # not said of HTTP backends
