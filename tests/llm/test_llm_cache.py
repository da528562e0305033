"""The response cache: keys, round trips, and sharing one file between threads and processes."""

from __future__ import annotations

import asyncio
import inspect
import json
import multiprocessing
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from papergym.llm.cache import ResponseCache, cache_key, default_cache_dir
from papergym.llm.config import BackendConfig
from papergym.llm.identity import backend_identity, normalise_endpoint
from papergym.llm.types import Completion, Message, SamplingParams, Usage

MESSAGES = (Message(role="system", content="Be brief."), Message(role="user", content="Hi?"))
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}


ENDPOINT = "http://127.0.0.1:8001/v1"


def _backend(**changes: Any) -> BackendConfig:
    return BackendConfig(**{"model": "qwen3-8b", "base_url": (ENDPOINT,)} | changes)


def _key(backend: BackendConfig | None = None, **changes: Any) -> str:
    arguments: dict[str, Any] = {
        "backend": backend_identity(backend or _backend()),
        "messages": MESSAGES,
        "schema": SCHEMA,
        "params": SamplingParams(),
        "sample_index": 0,
    }
    arguments.update(changes)
    return cache_key(**arguments)


def _completion(text: str = "hello", model: str = "qwen3-8b") -> Completion:
    return Completion(
        text=text,
        finish_reason="stop",
        usage=Usage(prompt_tokens=10, completion_tokens=2, reasoning_tokens=1),
        model=model,
    )


# --- keys ----------------------------------------------------------------------------------


def test_key_is_stable_and_hex() -> None:
    assert _key() == _key()
    assert len(_key()) == 64
    int(_key(), 16)
    assert _key(messages=list(MESSAGES)) == _key()  # any sequence of the same messages


@pytest.mark.parametrize(
    "change",
    [
        {"messages": MESSAGES[:1]},
        {"messages": (*MESSAGES[:1], Message(role="user", content="Hi!"))},
        {"messages": (MESSAGES[0], Message(role="assistant", content="Hi?"))},
        {"schema": None},
        {"schema": {"type": "object"}},
        {"sample_index": 1},
        {"params": SamplingParams(temperature=0.7)},
        {"params": SamplingParams(max_tokens=100)},
        {"params": SamplingParams(top_p=0.9)},
        {"params": SamplingParams(seed=1)},
        {"params": SamplingParams(n=2)},
        {"params": SamplingParams(stop=("\n",))},
    ],
)
def test_key_changes_with_everything_that_changes_the_answer(change: dict[str, Any]) -> None:
    assert _key(**change) != _key()


@pytest.mark.parametrize(
    "change",
    [
        {"model": "qwen3-14b"},
        {"backend": "hf"},
        # one model name behind another server can be another model (issue 20, item 1)
        {"base_url": "http://127.0.0.1:8002/v1"},
        {"base_url": "http://10.0.0.7:8001/v1"},
        {"base_url": "https://127.0.0.1:8001/v1"},
        {"base_url": "http://127.0.0.1:8001/v2"},
        {"base_url": ("http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1")},
        {"base_url": ()},  # the SDK's default endpoint
        {"structured_output": "guided_json"},
        {"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}},
    ],
)
def test_key_changes_with_the_model_and_where_it_is_served(change: dict[str, Any]) -> None:
    assert _key(_backend(**change)) != _key()


@pytest.mark.parametrize(
    "spelling",
    [
        "http://127.0.0.1:8001/v1/",
        "HTTP://127.0.0.1:8001/v1",
        "http://user:sk-secret-0123456789@127.0.0.1:8001/v1",
        "http://127.0.0.1:8001/v1?api-key=sk-secret-0123456789",
        "http://127.0.0.1:8001/v1?access_token=t0k3n-0123456789#frag",
    ],
)
def test_one_endpoint_spelled_otherwise_or_with_credentials_is_one_key(spelling: str) -> None:
    assert _key(_backend(base_url=spelling)) == _key()


@pytest.mark.parametrize(
    "change",
    [
        {"api_key_env": "OTHER_KEY"},
        {"timeout": 5.0},
        {"max_retries": 0},
        {"max_concurrency": 1},
        {"requests_per_minute": 60.0},
    ],
)
def test_key_ignores_what_decides_whether_an_answer_comes_not_what_it_says(
    change: dict[str, Any],
) -> None:
    assert _key(_backend(**change)) == _key()


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("HTTPS://Example.COM:443/v1/", "https://example.com/v1"),
        ("http://example.com:80/v1", "http://example.com/v1"),
        ("http://example.com:8443/v1", "http://example.com:8443/v1"),
        ("https://u:p@example.com/v1?b=2&a=1&key=k&sig=s&code=c", "https://example.com/v1?a=1&b=2"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("http://host/openai/deployments/X/", "http://host/openai/deployments/X"),
    ],
)
def test_normalise_endpoint(url: str, normalised: str) -> None:
    assert normalise_endpoint(url) == normalised


def test_default_endpoint_follows_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert backend_identity(_backend(base_url=()))["endpoints"] == ["https://api.openai.com/v1"]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gateway:9000/v1/")
    assert backend_identity(_backend(base_url=()))["endpoints"] == ["http://gateway:9000/v1"]


def test_a_local_model_is_known_by_its_folder_and_weights(tmp_path: Path) -> None:
    folder = tmp_path / "final"
    folder.mkdir()
    (folder / "config.json").write_text("{}", encoding="utf-8")
    weights = folder / "model.safetensors"
    weights.write_bytes(b"first training run!")
    os.utime(weights, ns=(1, 1))
    hf = BackendConfig(backend="hf", model=str(folder))
    first = _key(hf)
    assert _key(hf.model_copy(update={"model": str(tmp_path / "." / "final")})) == first
    assert _key(hf.model_copy(update={"dtype": "bfloat16"})) != first
    assert _key(hf.model_copy(update={"gguf_file": "model.Q4_1.gguf"})) != first
    assert _key(hf.model_copy(update={"device": "cuda:1"})) != first
    weights.write_bytes(b"second training run")  # retrained into the same folder, same size
    os.utime(weights, ns=(2, 2))
    assert _key(hf) != first
    hub = BackendConfig(backend="hf", model="HuggingFaceTB/SmolLM2-135M-Instruct")
    assert backend_identity(hub)["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct"


def test_key_never_holds_a_credential() -> None:
    secret = "sk-secret-0123456789"
    backend = _backend(base_url=f"http://user:{secret}@127.0.0.1:8001/v1?api_key={secret}")
    assert secret not in json.dumps(backend_identity(backend))
    assert "user" not in json.dumps(backend_identity(backend))
    parameters = set(inspect.signature(cache_key).parameters)
    assert parameters == {"backend", "messages", "schema", "params", "sample_index"}


def test_database_holds_no_secret(tmp_path: Path) -> None:
    secret = "sk-test-DO-NOT-STORE-0123456789"
    path = tmp_path / "cache.sqlite"
    with ResponseCache(path) as cache:
        cache.put(_key(), _completion())
    columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(responses)")}
    assert columns == {"key", "model", "created", "completion"}
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert secret.encode() not in stored
    assert b"api_key" not in stored and b"base_url" not in stored


# --- the cache -----------------------------------------------------------------------------


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "cache.sqlite"
    with ResponseCache(path) as cache:
        assert cache.get(_key()) is None
        assert len(cache) == 0
        cache.put(_key(), _completion())
        assert cache.get(_key()) == _completion()
        cache.put(_key(), _completion("replaced"))
        assert cache.get(_key()) == _completion("replaced")
        cache.put(_key(sample_index=1), _completion("other"))
        assert len(cache) == 2
    with ResponseCache(path) as reopened:  # it is on disk
        assert reopened.get(_key(sample_index=1)) == _completion("other")


def test_stores_what_it_is_given(tmp_path: Path) -> None:
    truncated = Completion(text="cut", finish_reason="length")
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cache.put("k", truncated)
        assert cache.get("k") == truncated


def test_wal_mode_and_schema(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    ResponseCache(path).close()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    connection.close()


def test_unreadable_row_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", _completion())
        connection = sqlite3.connect(path)
        connection.execute("UPDATE responses SET completion = '{\"old\": 1}'")
        connection.commit()
        connection.close()
        assert cache.get("k") is None


def test_closed_cache_refuses_and_closes_twice(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.close()
    cache.close()
    with pytest.raises(ValueError, match="closed"):
        cache.get("k")


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    monkeypatch.delenv("PAPERGYM_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / ".cache" / "papergym"


def test_concurrent_async_calls(tmp_path: Path) -> None:
    async def main(cache: ResponseCache) -> list[Completion | None]:
        await asyncio.gather(*(cache.aput(f"k{i}", _completion(f"t{i}")) for i in range(200)))
        return await asyncio.gather(*(cache.aget(f"k{i}") for i in range(200)))

    async def mixed(cache: ResponseCache) -> None:  # reads and writes interleaved
        async def one(i: int) -> None:
            await cache.aput(f"m{i}", _completion(f"m{i}"))
            assert await cache.aget(f"k{(i * 7) % 200}") == _completion(f"t{(i * 7) % 200}")

        await asyncio.gather(*(one(i) for i in range(200)))

    with ResponseCache(tmp_path / "c.sqlite") as cache:
        results = asyncio.run(main(cache))
        assert results == [_completion(f"t{i}") for i in range(200)]
        asyncio.run(mixed(cache))
        assert len(cache) == 400


# --- several processes ---------------------------------------------------------------------

WORKERS = 4
PER_WORKER = 200


def _worker(path: str, worker: int, start: Any, errors: Any) -> None:
    """Put this worker's entries while reading the others'; report any error by text."""
    try:
        cache = ResponseCache(Path(path))
        start.wait(timeout=60)
        seen = 0
        for i in range(PER_WORKER):
            cache.put(f"w{worker}-{i}", _completion(f"w{worker}-{i}", model=f"m{worker}"))
            other = (worker + 1 + i % (WORKERS - 1)) % WORKERS
            hit = cache.get(f"w{other}-{i // 2}")
            if hit is not None:
                assert hit.text == f"w{other}-{i // 2}"
                seen += 1
        cache.close()
    except BaseException as error:
        errors.put(f"worker {worker}: {type(error).__name__}: {error}")
        raise


def test_many_processes_share_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(WORKERS)
    errors = context.Queue()
    processes = [
        context.Process(target=_worker, args=(str(path), worker, start, errors))
        for worker in range(WORKERS)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    reported = []
    while not errors.empty():
        reported.append(errors.get())
    assert reported == []
    assert [process.exitcode for process in processes] == [0] * WORKERS
    with ResponseCache(path) as cache:
        assert len(cache) == WORKERS * PER_WORKER
        for worker in range(WORKERS):
            for i in range(PER_WORKER):
                hit = cache.get(f"w{worker}-{i}")
                assert hit is not None and hit.text == f"w{worker}-{i}"
                assert hit.model == f"m{worker}"


def test_queued_writes_are_visible_at_once_and_durable_after_close(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    answers = {f"k{i}": Completion(text=f"answer {i}") for i in range(300)}

    async def write_then_read() -> None:
        for key, completion in answers.items():
            await cache.aput(key, completion)
        # read back immediately, whether or not the writer thread has committed yet
        assert [await cache.aget(k) for k in answers] == list(answers.values())

    asyncio.run(write_then_read())
    cache.close()
    with ResponseCache(path) as reopened:  # as a later run or another process would see it
        assert len(reopened) == 300
        assert reopened.get("k299") == answers["k299"]


def test_a_failed_cache_write_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    holder = sqlite3.connect(tmp_path / "c.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock past the timeout
    import papergym.llm.cache as cache_module

    original = cache_module.BUSY_TIMEOUT_S
    cache_module.BUSY_TIMEOUT_S = 0.2
    try:
        asyncio.run(cache.aput("k", Completion(text="t")))
        cache.flush()
    finally:
        cache_module.BUSY_TIMEOUT_S = original
        holder.execute("ROLLBACK")
        holder.close()
    assert "not written" in caplog.text
    assert cache.get("k") is None  # lost: the next run asks again, nothing is corrupted
    cache.close()
