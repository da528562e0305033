"""The fake OpenAI server, exercised through the official ``openai`` SDK over real HTTP.

The LLM layer's tests trust this server to behave like vLLM/SGLang/Ollama (and to misbehave on
request), so its own contract is pinned here: schema-true answers, ``n`` choices, status faults,
content faults, non-blocking latency, hangs, observability and clean shutdown.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, TypeVar

import openai
import pytest
from openai import AsyncOpenAI
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import (
    Behaviour,
    FakeOpenAIServer,
    RawResponse,
    build_completion,
    sample_from_schema,
)

T = TypeVar("T")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "papers"


class Priority(StrEnum):
    LOW = "low"
    HIGH = "high"


class Step(BaseModel):
    name: str = Field(min_length=3, max_length=12)
    hours: int = Field(ge=1, le=8)
    confidence: float = Field(gt=0, lt=1)


class Plan(BaseModel):
    title: str
    steps: list[Step] = Field(min_length=2, max_length=4)
    priority: Priority
    reviewer: str | None = None
    status: Literal["draft", "final"]
    budget: dict[str, int]
    parent: Plan | None = None


SCHEMA_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "Plan", "schema": Plan.model_json_schema()},
}
MESSAGES: list[Any] = [
    {"role": "system", "content": "You write research plans."},
    {"role": "user", "content": "Plan a study of sparse attention on long documents."},
]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(model="fake-model") as running:
        yield running


def with_client(
    server: FakeOpenAIServer,
    use: Callable[[AsyncOpenAI], Awaitable[T]],
    **options: Any,
) -> T:
    """Run ``use(client)`` on a fresh event loop with an SDK client that does not retry."""

    async def main() -> T:
        options.setdefault("max_retries", 0)
        async with AsyncOpenAI(base_url=server.base_url, api_key="sk-test", **options) as client:
            return await use(client)

    return asyncio.run(main())


def ask(server: FakeOpenAIServer, **extra: Any) -> Any:
    """One chat completion with ``MESSAGES`` (``extra`` goes into the request)."""
    return with_client(
        server,
        lambda client: client.chat.completions.create(
            model="req-model", messages=MESSAGES, **extra
        ),
    )


def http_get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:  # closes the socket it holds
            return error.code, json.loads(error.read())


# -- answers ------------------------------------------------------------------------------------


def test_schema_answer_validates_against_a_nested_pydantic_model(server: FakeOpenAIServer) -> None:
    completion = ask(server, response_format=SCHEMA_FORMAT)
    content = completion.choices[0].message.content
    plan = Plan.model_validate_json(content)
    assert 2 <= len(plan.steps) <= 4
    assert plan.reviewer is not None  # Optional fields get their non-null branch
    assert ask(server, response_format=SCHEMA_FORMAT).choices[0].message.content == content
    assert completion.model == "req-model"
    assert completion.object == "chat.completion"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.choices[0].message.role == "assistant"


def test_sdk_parse_with_strict_schema_and_vllm_guided_json(server: FakeOpenAIServer) -> None:
    parsed = with_client(
        server,
        lambda client: client.chat.completions.parse(
            model="m", messages=MESSAGES, response_format=Plan
        ),
    )
    assert isinstance(parsed.choices[0].message.parsed, Plan)
    guided = ask(server, extra_body={"guided_json": Plan.model_json_schema()})
    Plan.model_validate_json(guided.choices[0].message.content)
    assert server.requests[-1]["guided_json"] == Plan.model_json_schema()


def test_text_answer_n_choices_and_usage(server: FakeOpenAIServer) -> None:
    completion = ask(server, n=3)
    assert [choice.index for choice in completion.choices] == [0, 1, 2]
    assert all(
        choice.message.content.startswith("ok: Plan a study") for choice in completion.choices
    )
    usage = completion.usage
    assert usage.prompt_tokens == 13  # words of both messages
    assert usage.completion_tokens == 3 * len(completion.choices[0].message.content.split())
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_responder_scripts_exact_content(server: FakeOpenAIServer) -> None:
    server.responder = lambda request: {"echo": request["model"]}
    assert ask(server).choices[0].message.content == '{"echo": "req-model"}'
    server.script(
        Behaviour.respond(lambda _: "scripted"),
        Behaviour.respond(lambda _: RawResponse(418, {"x": 1})),
    )
    assert ask(server).choices[0].message.content == "scripted"
    with pytest.raises(openai.APIStatusError) as caught:
        ask(server)
    assert caught.value.status_code == 418
    server.responder = lambda request: request["missing"]
    with pytest.raises(openai.InternalServerError, match="responder failed"):
        ask(server)


# -- status faults ------------------------------------------------------------------------------


def test_rate_limit_then_success(server: FakeOpenAIServer) -> None:
    server.fail(429, retry_after=2)
    with pytest.raises(openai.RateLimitError) as caught:
        ask(server)
    assert caught.value.response.headers["retry-after"] == "2"
    assert ask(server).choices[0].message.content.startswith("ok:")
    assert server.request_count == 2


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_for_the_next_k_requests(server: FakeOpenAIServer, status: int) -> None:
    server.fail(status, times=2)
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            ask(server)
    assert server.pending == 0
    ask(server)


def test_sdk_retries_through_a_scripted_queue(server: FakeOpenAIServer) -> None:
    # retry-after-ms keeps the SDK's back-off short (without it, it sleeps 0.5 s, then 1 s)
    server.script(Behaviour.rate_limited(0.05), Behaviour.error(503, retry_after=0.05), "ok")
    completion = with_client(
        server,
        lambda client: client.chat.completions.create(model="m", messages=MESSAGES),
        max_retries=2,
    )
    assert completion.choices[0].finish_reason == "stop"
    assert server.request_count == 3


# -- content faults -----------------------------------------------------------------------------


def test_content_faults_shape_the_schema_answer(server: FakeOpenAIServer) -> None:
    clean = ask(server, response_format=SCHEMA_FORMAT).choices[0].message.content
    contents: dict[str, str] = {}
    for mode in ("malformed", "think", "fence", "prose", "truncated"):
        server.script(mode)
        choice = ask(server, response_format=SCHEMA_FORMAT).choices[0]
        contents[mode] = choice.message.content
        assert choice.finish_reason == ("length" if mode == "truncated" else "stop")
    with pytest.raises(json.JSONDecodeError):
        json.loads(contents["malformed"])
    assert contents["malformed"].endswith(",")
    assert contents["think"].startswith("<think>")
    assert contents["think"].split("</think>", 1)[1].strip() == clean
    assert contents["fence"] == f"```json\n{clean}\n```"
    assert contents["prose"].endswith(clean) and not contents["prose"].startswith("{")
    assert clean.startswith(contents["truncated"]) and len(contents["truncated"]) < len(clean)


def test_stream_and_bad_requests_are_answered_400(server: FakeOpenAIServer) -> None:
    with pytest.raises(openai.BadRequestError):
        ask(server, stream=True)
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=b"{not json", method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    with caught.value as error:
        assert error.code == 400
    assert server.request_count == 2
    assert server.pending == 0  # rejected requests do not consume scripted behaviours


# -- latency, concurrency, hangs ----------------------------------------------------------------


def test_latency_does_not_serialise_concurrent_requests() -> None:
    async def burst(client: AsyncOpenAI) -> float:
        start = time.perf_counter()
        await asyncio.gather(
            *(
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"q{i}"}]
                )
                for i in range(50)
            )
        )
        return time.perf_counter() - start

    with FakeOpenAIServer(latency=0.2) as server:
        elapsed = with_client(server, burst)
        assert elapsed < 3.0  # serialised it would take 10 s
        assert 40 <= server.max_in_flight <= 50
        assert server.request_count == 50
        assert server.in_flight == 0


def test_max_in_flight_reveals_a_client_concurrency_bound(server: FakeOpenAIServer) -> None:
    server.latency = 0.05
    limit = asyncio.Semaphore(4)

    async def bounded(client: AsyncOpenAI) -> None:
        async def one(i: int) -> None:
            async with limit:
                await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": str(i)}]
                )

        await asyncio.gather(*(one(i) for i in range(16)))

    with_client(server, bounded)
    assert server.max_in_flight == 4


def test_hang_makes_the_client_time_out_and_is_then_released(server: FakeOpenAIServer) -> None:
    server.hang()
    start = time.perf_counter()
    with pytest.raises(openai.APITimeoutError):
        with_client(
            server,
            lambda client: client.chat.completions.create(model="m", messages=MESSAGES),
            timeout=0.5,
        )
    assert time.perf_counter() - start < 3
    deadline = time.monotonic() + 3
    while server.in_flight and time.monotonic() < deadline:  # the server notices the hang-up
        time.sleep(0.02)
    assert server.in_flight == 0
    assert ask(server).choices[0].finish_reason == "stop"


# -- observability and endpoints ----------------------------------------------------------------


def test_requests_headers_and_reset(server: FakeOpenAIServer) -> None:
    ask(server, temperature=0.3)
    assert server.requests[0]["temperature"] == 0.3
    assert server.requests[0]["messages"] == MESSAGES
    assert server.headers_seen[-1]["authorization"] == "Bearer sk-test"
    server.reset_stats()
    assert (server.requests, server.request_count, server.headers_seen) == ([], 0, [])
    assert server.max_in_flight == 0


def test_models_health_and_unknown_routes(server: FakeOpenAIServer) -> None:
    models = with_client(server, lambda client: client.models.list())
    assert [model.id for model in models.data] == ["fake-model"]
    assert http_get(f"{server.url}/health") == (200, {"status": "ok"})
    status, body = http_get(f"{server.url}/nowhere")
    assert status == 404 and "error" in body
    assert http_get(f"{server.base_url}/chat/completions")[0] == 405


# -- lifecycle ----------------------------------------------------------------------------------


def test_stop_closes_hung_connections_and_the_port() -> None:
    server = FakeOpenAIServer().start()
    port = server.port
    server.hang(times=3)
    body = json.dumps({"model": "m", "messages": MESSAGES}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    for sock in sockets:
        sock.sendall(head.encode() + body)
    deadline = time.monotonic() + 3
    while server.in_flight < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.in_flight == 3
    start = time.perf_counter()
    server.stop()
    assert time.perf_counter() - start < 2
    assert not server.running
    for sock in sockets:
        assert sock.recv(1) == b""  # closed by the server, never answered
        sock.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1)


def test_cli_serves_until_interrupted() -> None:
    command = [sys.executable, "-m", "papergym.cli", "fake-llm", "--port", "0"]
    command += ["--latency", "0.01", "--script", "503", "--log"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("papergym fake-llm listening on http://127.0.0.1:"), line
        base_url = line.split()[4]
        assert base_url.endswith("/v1")
        assert http_get(base_url.removesuffix("/v1") + "/health")[0] == 200
        request = urllib.request.Request(
            f"{base_url}/chat/completions",
            data=json.dumps({"model": "m", "messages": MESSAGES}).encode(),
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=5)  # the scripted 503
        with caught.value as error:
            assert error.code == 503
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert "served 1 chat requests, max in flight 1" in out
    assert "POST /v1/chat/completions 503 error" in err  # --log: one line per request
    assert "GET /health 200" in err
    assert "Warning" not in err and "Traceback" not in err


def test_cli_taken_port_and_bad_behaviour_are_one_line(server: FakeOpenAIServer) -> None:
    runner = CliRunner()
    taken = runner.invoke(app, ["fake-llm", "--port", str(server.port)])
    assert taken.exit_code == 2
    assert taken.output.strip() == (
        f"error: port {server.port} on 127.0.0.1 is in use (another server?); "
        "choose one with --port"
    )
    bad = runner.invoke(app, ["fake-llm", "--port", "0", "--fail-mode", "sometimes"])
    assert bad.exit_code == 2
    lines = bad.output.strip().splitlines()
    assert len(lines) == 1 and "--fail-mode: unknown behaviour 'sometimes'" in lines[0]


def test_help_documents_every_option() -> None:
    output = CliRunner().invoke(app, ["fake-llm", "--help"], env={"COLUMNS": "200"}).output
    for option in ("--host", "--port", "--latency", "--fail-rate", "--fail-mode", "--mode"):
        assert option in output
    for option in ("--script", "--answers", "--seed", "--hang-seconds", "--log", "--model"):
        assert option in output
    assert "drop (the connection is closed without an answer)" in " ".join(output.split())


def test_fail_rate_injects_the_fail_mode_reproducibly() -> None:
    def outcomes(seed: int) -> list[int]:
        with FakeOpenAIServer(fail_rate=0.5, fail_behaviour="503", seed=seed) as server:
            return [post_raw(server.port, chat_body())[0] for _ in range(20)]

    first = outcomes(seed=7)
    assert set(first) == {200, 503}  # some of each, not all or nothing
    assert outcomes(seed=7) == first


# -- socket-level behaviour ---------------------------------------------------------------------


def chat_body() -> bytes:
    return json.dumps({"model": "m", "messages": MESSAGES}).encode()


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """Status and body of one HTTP response read from ``sock`` (Content-Length framed)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {data!r}")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(v for k, v in _header_lines(head) if k == "content-length"))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), body


def _header_lines(head: bytes) -> list[tuple[str, str]]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return [(k.strip().lower(), v.strip()) for k, _, v in (line.partition(":") for line in lines)]


def post_raw(port: int, body: bytes) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        sock.sendall(head.encode() + b"\r\n" + body)
        return read_response(sock)


def test_chunked_body_after_expect_100_continue(server: FakeOpenAIServer) -> None:
    body = chat_body()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        assert sock.recv(64).startswith(b"HTTP/1.1 100 Continue\r\n")
        for part in (body[:10], body[10:]):
            sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        sock.sendall(b"0\r\n\r\n")
        status, answer = read_response(sock)
    assert status == 200
    assert json.loads(answer)["choices"][0]["message"]["content"].startswith("ok: Plan a study")
    assert server.requests[-1]["messages"] == MESSAGES


def test_drop_closes_the_connection_without_an_answer(
    server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.script("drop", Behaviour.drop())
    with pytest.raises(ConnectionError, match="closed after b''"):
        post_raw(server.port, chat_body())
    with pytest.raises(openai.APIConnectionError):
        ask(server)
    assert ask(server).choices[0].finish_reason == "stop"  # the next request is answered
    assert server.request_count == 3 and server.in_flight == 0
    assert "ASGI" not in caplog.text  # uvicorn saw a close, not an app that forgot to answer


def test_cut_off_body_stalls_until_the_client_leaves(server: FakeOpenAIServer) -> None:
    server.script(
        Behaviour.respond(lambda _: RawResponse(200, b'{"choi', {"Content-Length": "99"}))
    )
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(chat_body())}\r\n"
        sock.sendall(head.encode() + b"\r\n" + chat_body())
        received = b""
        while not received.endswith(b'{"choi'):
            received += sock.recv(1024)
        assert b"content-length: 99" in received.lower()
        sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            sock.recv(1024)  # the rest never comes
        assert server.in_flight == 1
    deadline = time.monotonic() + 3
    while server.in_flight and time.monotonic() < deadline:  # the server notices the hang-up
        time.sleep(0.02)
    assert server.in_flight == 0


# -- the LLM recipe against the command ---------------------------------------------------------


@pytest.mark.slow
def test_build_against_the_fake_llm_command_yields_instances(tmp_path: Path) -> None:
    """What the README's dry run promises: a subprocess server, a real build, instances."""
    command = [sys.executable, "-m", "papergym.cli", "fake-llm", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().split()[4]
        build = [sys.executable, "-m", "papergym.cli", "build", str(EXAMPLES), "-o"]
        build += [str(tmp_path / "out"), "--base-url", base_url, "--model", "fake"]
        build += ["--cache-dir", str(tmp_path / "cache"), "--json"]
        result = subprocess.run(build, capture_output=True, text=True, timeout=600)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=10)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["instances"] >= 1
    [line] = (tmp_path / "out" / "instances.jsonl").read_text().splitlines()
    instance = json.loads(line)
    assert len(instance["rubric"]["specific"]) == 10
    assert "?" in instance["question"] and not any(c.isdigit() for c in instance["question"])


# -- the pure pieces ----------------------------------------------------------------------------


def test_sample_from_schema_honours_constraints() -> None:
    schema = {
        "$defs": {"Leaf": {"type": "object", "properties": {"v": {"const": 7}}}},
        "type": "object",
        "required": ["tag"],
        "properties": {
            "short": {"type": "string", "maxLength": 2},
            "long": {"type": "string", "minLength": 40},
            "odd": {"type": "integer", "exclusiveMinimum": 10, "exclusiveMaximum": 12},
            "step": {"type": "integer", "minimum": 1, "maximum": 30, "multipleOf": 7},
            "ratio": {"type": "number", "minimum": 0.5, "maximum": 0.5},
            "either": {"type": ["null", "boolean"]},
            "first": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Leaf"}, {"type": "string"}]},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            "many": {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 3},
            "none": {"type": "array", "maxItems": 0},
            "merged": {"allOf": [{"properties": {"x": {"type": "integer"}}}, {"required": ["y"]}]},
            "uuid": {"type": "string", "format": "uuid"},
        },
    }
    value = sample_from_schema(schema, seed=3)
    assert value == sample_from_schema(schema, seed=3)
    assert len(value["short"]) <= 2 and len(value["long"]) >= 40
    assert value["odd"] == 11 and value["step"] in (7, 14, 21, 28) and value["ratio"] == 0.5
    assert isinstance(value["either"], bool)
    assert value["first"] == {"v": 7}
    assert isinstance(value["pair"][0], int) and isinstance(value["pair"][1], str)
    assert len(value["many"]) == 3 and set(value["many"]) <= {"a", "b"}
    assert value["none"] == []
    assert set(value["merged"]) == {"x", "y"} and isinstance(value["tag"], str)
    assert len(value["uuid"]) == 36


def test_recursive_schemas_terminate() -> None:
    tree = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "$ref": "#/$defs/Node",
    }
    depth, node = 0, sample_from_schema(tree, seed=1)
    while node.get("children"):
        depth, node = depth + 1, node["children"][0]
    assert 1 <= depth <= 10
    Plan.model_validate(sample_from_schema(Plan.model_json_schema(), seed=5))


def test_build_completion_is_deterministic_per_messages() -> None:
    request = {"model": "m", "messages": MESSAGES, "response_format": SCHEMA_FORMAT, "n": 2}
    first, again = build_completion(request), build_completion(request)
    contents = [c["message"]["content"] for c in first.body["choices"]]
    assert contents == [c["message"]["content"] for c in again.body["choices"]]
    other = build_completion({**request, "messages": [{"role": "user", "content": "else"}]})
    assert other.body["choices"][0]["message"]["content"] != contents[0]
