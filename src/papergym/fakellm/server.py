"""A fake OpenAI-compatible chat-completions server on uvicorn, with fault injection.

PaperGym's LLM layer talks to OpenAI-compatible servers (vLLM, SGLang, Ollama). Mocking the HTTP
client would hide the bugs that matter most there (connection pooling, timeouts, retries,
concurrency bounds, parsing of half-broken model output), so tests, benchmarks and users' dry
runs talk to this real HTTP server instead. It is a small ASGI app served by uvicorn, the stack
``papergym serve-reward`` already uses: uvicorn parses HTTP (keep-alive, chunked request bodies,
``Expect: 100-continue``), and the app only decides what to answer.

Faults below the HTTP status line are ASGI too: a hang waits for the client's disconnect, a body
cut off mid-transfer is a response started and never finished, and a dropped connection aborts
the request's transport (found among uvicorn's connections by the client's address, since ASGI
itself cannot close a connection without answering).

The server runs on its own event loop in a background thread, so a test (or the ``papergym
fake-llm`` command) keeps its own thread free; latency is an ``asyncio`` wait that never blocks
other requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from types import TracebackType
from typing import Any

import uvicorn

from papergym.fakellm.completions import (
    Behaviour,
    JSONDict,
    RawResponse,
    Responder,
    build_completion,
    error_response,
)
from papergym.netutil import bind

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_BODY_BYTES = 64 << 20
"""Largest request body read; a larger one is answered 413."""

STOP_GRACE_S = 5.0
"""How long :meth:`FakeOpenAIServer.stop` waits for in-flight requests to end once woken."""

CHAT_PATH = "/v1/chat/completions"
_ROUTES = {CHAT_PATH: "POST", "/v1/models": "GET", "/models": "GET", "/health": "GET"}


class FakeOpenAIServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1, in a background thread.

    Use it as a context manager (or :meth:`start`/:meth:`stop`)::

        with FakeOpenAIServer(latency=0.1) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
            server.fail(429, times=2)  # the next two requests are rate limited
            ...
            assert server.max_in_flight <= 8

    Endpoints: ``POST /v1/chat/completions`` (``stream: true`` is answered 400),
    ``GET /v1/models`` and ``GET /health``.

    Each chat request consumes the next behaviour of the script queue (:meth:`script`,
    :meth:`fail`, :meth:`hang`); when the queue is empty it fails with ``fail_behaviour`` with
    probability ``fail_rate``, and otherwise uses :attr:`default`. ``latency``, ``default``,
    ``responder``, ``fail_rate`` and ``log`` are plain attributes read on every request, so they
    can change while the server runs; the queue and statistics are safe to use from any thread.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "papergym-fake",
        latency: float = 0.0,
        default: Behaviour | str = "ok",
        script: Iterable[Behaviour | str] = (),
        responder: Responder | None = None,
        hang_seconds: float = 3600.0,
        fail_rate: float = 0.0,
        fail_behaviour: Behaviour | str = "500",
        seed: int = 0,
        log: Callable[[str], None] | None = None,
        backlog: int = 4096,
    ) -> None:
        """Configure the server; nothing listens until :meth:`start` (or ``with``).

        ``port=0`` picks a free port. ``hang_seconds`` is how long a hung request waits for its
        client to give up before being answered normally. ``seed`` makes the ``fail_rate`` draws
        repeatable. ``log`` receives one line per HTTP request.
        """
        self.host = host
        self.model = model
        self.latency = latency
        self.default = Behaviour.parse(default)
        self.responder = responder
        self.hang_seconds = hang_seconds
        self.fail_rate = fail_rate
        self.fail_behaviour = Behaviour.parse(fail_behaviour)
        self.log = log
        self._requested_port = port
        self._backlog = backlog
        self._port: int | None = None
        self._lock = threading.Lock()
        self._random = random.Random(seed)
        self._queue: deque[Behaviour] = deque(Behaviour.parse(b) for b in script)
        self._requests: list[JSONDict] = []
        self._headers: list[dict[str, str]] = []
        self._request_count = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._closing: asyncio.Event | None = None
        self._uvicorn: uvicorn.Server | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> FakeOpenAIServer:
        """Bind the port and serve in a daemon thread; returns once requests are being served.

        A taken port raises :class:`~papergym.errors.BadInputError` (one line).
        """
        if self._thread is not None:
            raise RuntimeError("FakeOpenAIServer is already running")
        sock = bind(self.host, self._requested_port, self._backlog)
        self._port = int(sock.getsockname()[1])
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(
            target=self._run_loop, args=(sock,), name="FakeOpenAIServer", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise RuntimeError("FakeOpenAIServer did not start in time")
        if self._startup_error is not None:
            error = self._startup_error
            self.stop()
            raise RuntimeError(f"FakeOpenAIServer could not start: {error}") from error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close the listener and every open connection (hung ones unanswered), then join."""
        thread, loop, stop = self._thread, self._loop, self._stop
        if thread is None:
            return
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop.set)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError("FakeOpenAIServer thread did not stop in time")
        self._thread = self._loop = self._stop = self._closing = self._uvicorn = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return self._port

    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:PORT`` (``/health`` lives there)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What OpenAI clients take as ``base_url``: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    # -- fault injection -----------------------------------------------------------------------

    def script(self, *behaviours: Behaviour | str, times: int = 1) -> FakeOpenAIServer:
        """Queue behaviours for the next requests, in order, each repeated ``times`` times.

        Strings are parsed by :meth:`Behaviour.parse`: ``server.script("429", "hang", "ok")``.
        """
        parsed = [Behaviour.parse(b) for b in behaviours]
        with self._lock:
            for behaviour in parsed:
                self._queue.extend([behaviour] * times)
        return self

    def fail(
        self, status: int = 500, *, times: int = 1, retry_after: float | None = None
    ) -> FakeOpenAIServer:
        """Answer ``status`` to the next ``times`` requests (429 always has ``Retry-After``)."""
        if status == 429 and retry_after is None:
            retry_after = 0.0
        return self.script(Behaviour.error(status, retry_after=retry_after), times=times)

    def hang(self, *, times: int = 1) -> FakeOpenAIServer:
        """Never answer the next ``times`` requests: their clients must time out."""
        return self.script(Behaviour.hang(), times=times)

    def clear_script(self) -> None:
        """Drop the queued behaviours: the following requests use :attr:`default`."""
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        """How many queued behaviours are left."""
        with self._lock:
            return len(self._queue)

    def _next_behaviour(self) -> Behaviour:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            if self.fail_rate > 0 and self._random.random() < self.fail_rate:
                return self.fail_behaviour
            return self.default

    # -- observability -------------------------------------------------------------------------

    @property
    def requests(self) -> list[JSONDict]:
        """A copy of the chat-completion request bodies received, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """Chat-completion requests received (invalid ones included)."""
        with self._lock:
            return self._request_count

    @property
    def headers_seen(self) -> list[dict[str, str]]:
        """The headers (lower-cased names) of every HTTP request received, any path."""
        with self._lock:
            return list(self._headers)

    @property
    def in_flight(self) -> int:
        """Chat-completion requests received and not yet answered (or abandoned)."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most chat-completion requests ever processed at once: a client's real concurrency."""
        with self._lock:
            return self._max_in_flight

    def reset_stats(self) -> None:
        """Forget recorded requests and counters (the in-flight count itself stays exact)."""
        with self._lock:
            self._requests.clear()
            self._headers.clear()
            self._request_count = 0
            self._max_in_flight = self._in_flight

    def _enter_flight(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave_flight(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _record_headers(self, headers: dict[str, str]) -> None:
        with self._lock:
            self._headers.append(headers)

    def _record_chat(self, body: JSONDict | None) -> None:
        with self._lock:
            self._request_count += 1
            if body is not None:
                self._requests.append(body)

    # -- the loop thread -----------------------------------------------------------------------

    def _run_loop(self, sock: socket.socket) -> None:
        try:
            asyncio.run(self._serve(sock))
        except BaseException as exc:  # reported to start(); the thread must not die silently
            self._startup_error = exc
        finally:
            sock.close()
            self._ready.set()

    async def _serve(self, sock: socket.socket) -> None:
        """uvicorn's startup and connection handling, with a shutdown of our own.

        ``Server.serve`` polls for exit every 0.1 s and then waits 0.1 s more; tests start and
        stop a server per test, so the stop here is immediate: abort every connection (a hung
        client sees a close, never an answer), then wake the requests still waiting (on latency,
        a hang or a cut-off body), which end without answering their gone clients.
        """
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._closing = asyncio.Event()
        config = uvicorn.Config(
            self._app,
            interface="asgi3",  # a bound method is not recognised as ASGI 3 by inspection
            proxy_headers=False,
            lifespan="off",
            log_level="warning",
            log_config=None,  # leave the process's logging alone (tests capture it)
            access_log=False,
            timeout_keep_alive=30,
        )
        config.load()
        server = uvicorn.Server(config)
        server.lifespan = config.lifespan_class(config)  # what Server.serve sets before startup
        await server.startup(sockets=[sock])
        self._uvicorn = server
        self._ready.set()
        await self._stop.wait()
        for listener in server.servers:
            listener.close()
        for connection in list(server.server_state.connections):
            connection.transport.abort()
        await asyncio.sleep(
            0
        )  # the aborts' connection_lost run first: requests see their client gone
        self._closing.set()
        tasks = list(server.server_state.tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=STOP_GRACE_S)

    # -- the ASGI app --------------------------------------------------------------------------

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        start = time.perf_counter()
        headers = {
            name.decode("latin-1").lower(): value.decode("latin-1")
            for name, value in scope["headers"]
        }
        self._record_headers(headers)
        path = scope["path"].rstrip("/") or "/"
        method = scope["method"]
        label = "-"
        if path == CHAT_PATH and method == "POST":
            self._enter_flight()
            try:
                status, label = await self._chat(scope, receive, send)
            finally:
                self._leave_flight()
        else:
            response = self._route(path, method)
            status = response.status
            await _send(send, response)
        log = self.log
        if log is not None:
            client = scope.get("client") or ("-", 0)
            elapsed = time.perf_counter() - start
            log(f"{client[0]}:{client[1]} {method} {path} {status} {label} {elapsed:.3f}s")

    def _route(self, path: str, method: str) -> RawResponse:
        allowed = _ROUTES.get(path)
        if allowed is None:
            return error_response(404, f"no route {path}")
        if method != allowed:
            return error_response(405, f"{method} is not allowed on {path}")
        if path == "/health":
            return RawResponse(200, {"status": "ok"})
        entry = {"id": self.model, "object": "model", "created": 0, "owned_by": "papergym"}
        return RawResponse(200, {"object": "list", "data": [entry]})

    async def _chat(self, scope: Scope, receive: Receive, send: Send) -> tuple[int | str, str]:
        """Answer one chat completion; ``(status or what happened, behaviour)`` for the log."""
        raw = await _read_body(receive)
        if raw is None:
            return "gone", "-"
        if len(raw) > MAX_BODY_BYTES:
            self._record_chat(None)
            await _send(send, error_response(413, "request body too large"))
            return 413, "-"
        body, problem = _parse_chat_body(raw)
        self._record_chat(body)
        if body is None:
            await _send(send, error_response(400, problem))
            return 400, "-"
        if body.get("stream"):
            await _send(send, error_response(400, "stream=true is not supported by the fake LLM"))
            return 400, "-"
        behaviour = self._next_behaviour()
        latency = self.latency if behaviour.latency is None else behaviour.latency
        if latency > 0 and await self._closed_within(latency):
            return "stopped", behaviour.mode
        if behaviour.mode == "hang" and await self._disconnected_within(receive, self.hang_seconds):
            return "abandoned", behaviour.mode
        if behaviour.mode == "drop":
            self._drop(scope)
            await receive()  # returns once uvicorn saw the close: no 500 for a "missing" answer
            return "dropped", behaviour.mode
        response = self._answer(body, behaviour)
        if _cut_off(response):
            await _send_cut_off(send, response)
            await self._disconnected_within(receive, self.hang_seconds)
            return "cut off", behaviour.mode
        await _send(send, response)
        return response.status, behaviour.mode

    def _answer(self, body: JSONDict, behaviour: Behaviour) -> RawResponse:
        if behaviour.mode == "error":
            message = f"injected error {behaviour.status}"
            return error_response(behaviour.status, message, retry_after=behaviour.retry_after)
        try:
            return build_completion(
                body,
                mode="ok" if behaviour.mode == "hang" else behaviour.mode,
                responder=behaviour.responder or self.responder,
                default_model=self.model,
            )
        except Exception as exc:  # a broken responder must show up in the test, not reset it
            return error_response(500, f"fake LLM responder failed: {exc!r}")

    def _drop(self, scope: Scope) -> None:
        """Abort this request's connection: ASGI has no message for "close without answering"."""
        server, client = self._uvicorn, scope.get("client")
        if server is None or client is None:
            return
        for connection in list(server.server_state.connections):
            if tuple(getattr(connection, "client", None) or ()) == tuple(client):
                connection.transport.abort()

    async def _closed_within(self, seconds: float) -> bool:
        """Wait ``seconds``, or less when the server stops; ``True`` when it stopped."""
        assert self._closing is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), timeout=seconds)
        return self._closing.is_set()

    async def _disconnected_within(self, receive: Receive, seconds: float) -> bool:
        """Wait up to ``seconds`` for the client to go away (or the server to stop).

        A hung request must not stay "in flight" forever once its client timed out, or
        ``max_in_flight`` and shutdown would see ghosts. Once the body is read, uvicorn's next
        ``receive`` returns only when the client disconnects.
        """
        assert self._closing is not None
        gone = asyncio.ensure_future(receive())
        closing = asyncio.ensure_future(self._closing.wait())
        done, pending = await asyncio.wait(
            (gone, closing), timeout=seconds, return_when=asyncio.FIRST_COMPLETED
        )
        for task in pending:
            task.cancel()
        return bool(done)


async def _read_body(receive: Receive) -> bytes | None:
    """The request body (at most a byte past ``MAX_BODY_BYTES``), or ``None`` if the client left."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_BODY_BYTES or not message.get("more_body", False):
            return b"".join(chunks)


def _parse_chat_body(raw: bytes) -> tuple[JSONDict | None, str]:
    """``(body, "")`` for a usable chat request, else ``(body or None, why not)``."""
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"request body is not JSON: {exc}"
    if not isinstance(body, dict):
        return None, "request body must be a JSON object"
    if not isinstance(body.get("messages"), list):
        return None, "'messages' must be a list"
    return body, ""


def _payload(response: RawResponse) -> bytes:
    if isinstance(response.body, bytes):
        return response.body
    return json.dumps(response.body, ensure_ascii=False).encode()


def _head(response: RawResponse, length: int) -> list[tuple[bytes, bytes]]:
    """Response headers: JSON and the body's length unless the response names its own."""
    headers = {
        "content-type": "application/json",
        "content-length": str(length),
        "x-request-id": uuid.uuid4().hex,
    }
    headers.update({name.lower(): value for name, value in response.headers.items()})
    return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


def _declared_length(response: RawResponse) -> int | None:
    for name, value in response.headers.items():
        if name.lower() == "content-length" and value.strip().isdigit():
            return int(value)
    return None


def _cut_off(response: RawResponse) -> bool:
    """Whether ``response`` promises more bytes (``Content-Length``) than its body has."""
    declared = _declared_length(response)
    return declared is not None and declared > len(_payload(response))


async def _send(send: Send, response: RawResponse) -> None:
    payload = _payload(response)
    declared = _declared_length(response)
    if declared is not None:
        payload = payload[:declared]  # a shorter declared length cuts the body, as on the wire
    headers = _head(response, len(payload))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


async def _send_cut_off(send: Send, response: RawResponse) -> None:
    """The head and the bytes there are, and never the rest: the response stays unfinished."""
    payload = _payload(response)
    headers = _head(response, len(payload))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload, "more_body": True})
