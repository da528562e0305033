"""GGUF files as local models: the header reader, the checks before any loading (missing file,
not GGUF, too big for memory: one line, exit 2), the path split and the model's identity."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.llm.config import BackendConfig
from papergym.llm.gguf import gguf_source, read_header, refuse_if_too_big
from papergym.llm.hf_backend import HFBackend, load_model
from papergym.llm.identity import backend_identity
from support.gguf_files import header_only_gguf
from support.smollm2 import SMOLLM2_CONTEXT, needs_smollm2, smollm2_path

runner = CliRunner()


def test_the_header_gives_context_and_parameters(tmp_path: Path) -> None:
    header = read_header(header_only_gguf(tmp_path / "m.gguf", (64, 1000), context=2048))
    assert header.architecture == "llama" and header.context_length == 2048
    assert header.parameters == 64_000


@needs_smollm2
def test_smollm2s_header_is_read_fast_and_says_8k() -> None:
    path = smollm2_path()
    assert path is not None
    started = time.perf_counter()
    header = read_header(path)
    assert time.perf_counter() - started < 5  # gguf.GGUFReader took 15 s here
    assert header.context_length == SMOLLM2_CONTEXT
    assert 130e6 < header.parameters < 140e6  # "135M"


def test_a_gguf_path_is_its_folder_and_file() -> None:
    assert gguf_source("/models/x/SmolLM2.Q4_1.gguf", None) == ("/models/x", "SmolLM2.Q4_1.gguf")
    assert gguf_source("org/repo", "f.gguf") == ("org/repo", "f.gguf")  # the old way still works
    assert gguf_source("org/repo", None) == ("org/repo", None)


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "no such GGUF file"), (b"PK\x03\x04 a zip", "not a GGUF file")],
)
def test_a_bad_gguf_path_is_one_line_and_exit_2_before_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes | None, reason: str
) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)

    def no_loading(*args: object, **kwargs: object) -> None:
        raise AssertionError("transformers was asked to load")

    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", no_loading)
    args = ["llm-check", "llm.default.backend=hf", f"llm.default.model={path}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert str(path) in line and reason in line


def test_weights_too_big_for_memory_are_refused_before_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = header_only_gguf(tmp_path / "huge.gguf", (1 << 20, 1 << 20))  # 2^40 parameters

    def no_loading(*args: object, **kwargs: object) -> None:
        raise AssertionError("transformers was asked to load")

    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", no_loading)
    with pytest.raises(BadInputError, match=r"too big for memory: its weights need 4096\.0 GiB"):
        load_model(BackendConfig(backend="hf", model=str(huge), device="cpu"))
    # bfloat16 halves it; the rule is parameters x bytes per parameter of the dtype
    with pytest.raises(BadInputError, match=r"need 2048\.0 GiB"):
        load_model(BackendConfig(backend="hf", model=str(huge), device="cpu", dtype="bfloat16"))
    refuse_if_too_big(huge, 10, 11, "cpu")  # fits: no error


def test_the_context_of_a_gguf_model_is_read_without_loading(tmp_path: Path) -> None:
    path = header_only_gguf(tmp_path / "m.gguf", (4, 4), context=3072)
    backend = HFBackend(BackendConfig(backend="hf", model=str(path)))
    assert asyncio.run(backend.context_limit()) == 3072
    assert backend._loaded is None
    configured = HFBackend(BackendConfig(backend="hf", model=str(path), context_tokens=1000))
    assert asyncio.run(configured.context_limit()) == 1000


def test_a_gguf_files_identity_follows_its_content(tmp_path: Path) -> None:
    path = header_only_gguf(tmp_path / "m.gguf", (4, 4))
    config = BackendConfig(backend="hf", model=str(path))
    before = backend_identity(config)
    header_only_gguf(path, (4, 8))
    assert backend_identity(config) != before
    assert "context_tokens" not in before  # unset: identities of existing configs unchanged
    assert (
        backend_identity(config.model_copy(update={"context_tokens": 512}))["context_tokens"] == 512
    )


def test_a_local_model_keeps_its_max_tokens_so_batches_stay_whole(tmp_path: Path) -> None:
    # Lowering max_tokens to what each prompt leaves would give every prompt length its own
    # generate settings (no batching); only a server must be spared a request past its context.
    from papergym.llm.client import fit_for
    from papergym.llm.types import Message, SamplingParams

    path = header_only_gguf(tmp_path / "m.gguf", (4, 4), context=4096)
    backend = HFBackend(BackendConfig(backend="hf", model=str(path)))

    async def count(messages: object, schema: object) -> int:
        return 1500

    backend.count_prompt = count  # type: ignore[method-assign]
    params = SamplingParams(max_tokens=3000)  # a server would get 4096 - 1500 = 2596
    fitted = asyncio.run(fit_for(backend, [Message(role="user", content="x")], params, None))
    assert fitted.cut is None and fitted.max_tokens == 3000
