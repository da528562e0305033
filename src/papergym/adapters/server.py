"""The HTTP reward server, over any :class:`~papergym.reward_protocol.Reward`.

- ``POST /get_reward`` — OpenRLHF's remote reward model protocol: ``{"query": [...],
  "prompts": [...], "labels": [...]}`` → ``{"rewards", "scores", "extra_logs"}``;
- ``POST /score`` — ``{"items": [{"ground_truth": ..., "answer": "..."}]}`` → every result
  (``value`` is null when unscored);
- ``GET /health`` — 200 ``{"status": "ok"}`` once the reward is loaded, 503 ``loading`` (or
  ``failed``) before.

What keeps one client from tying the server up: a body larger than ``max_body_bytes`` is refused
with 413 from its ``Content-Length`` before a byte of it is read, or as soon as a streamed body
passes the limit; answers are cut by the reward's ``max_answer_chars``; a request whose client
disconnects has its judging cancelled; SIGTERM/SIGINT stop the server after at most
:data:`GRACEFUL_SHUTDOWN_S` of in-flight work. An optional bearer token guards everything but
``/health``; the interactive docs are off unless asked for. The review reward's server
(:mod:`papergym.review.server`) shares this guard, readiness and shutdown with routes of its
own (its texts are cut in worker processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Generator
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from papergym.adapters.openrlhf import payload, response_of
from papergym.redact import redact
from papergym.reward_protocol import Reward, RewardResult

T = TypeVar("T")
S = TypeVar("S", bound=RewardResult)

DEFAULT_PORT = 8765
"""Not 8000: that is vLLM's (and many judges') default port, often on the same machine."""

DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
"""32 MiB: a batch of 256 answers of 32,000 characters with their labels fits; 200 MB does not."""

GRACEFUL_SHUTDOWN_S = 5.0
"""How long in-flight requests may finish after SIGTERM before their work is cancelled."""

CLIENT_CLOSED = 499
"""The status logged for a request whose client went away (nginx's convention; never sent)."""

OPEN_PATHS = frozenset({"/health"})
"""Paths answered without the bearer token: a load balancer's probe has no secret."""

DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})
"""FastAPI's interactive docs: off by default, open (describing, not scoring) with ``--docs``."""

log = logging.getLogger("papergym.reward.server")  # the serve-reward command's log


class RewardRequest(BaseModel):
    query: list[str]
    prompts: list[str]
    labels: list[Any]


class ScoreItem(BaseModel):
    ground_truth: Any
    answer: str
    extra_info: dict[str, Any] | None = None


class ScoreRequest(BaseModel):
    items: list[ScoreItem]


# --- readiness -----------------------------------------------------------------------------------


class Readiness:
    """Whether the judge is loaded; scoring requests that arrive earlier wait for it."""

    def __init__(self, ready: bool) -> None:
        self.ready = ready
        self.error: str | None = None
        self._event: asyncio.Event | None = None

    @property
    def status(self) -> str:
        return "ok" if self.ready else "failed" if self.error else "loading"

    async def wait(self) -> None:
        """Return once the judge is ready; 503 when it failed to load."""
        if not self.ready and self.error is None:
            if self._event is None:
                self._event = asyncio.Event()
            await self._event.wait()
        if self.error is not None:
            raise HTTPException(503, f"the judge failed to load: {self.error}")

    def finish(self, error: str | None) -> None:
        """Mark the judge loaded (or failed); call on the server's loop."""
        self.ready, self.error = error is None, error
        if self._event is not None:
            self._event.set()


# --- the ASGI guard: token, body limit, request log ---------------------------------------------


class _Guard:
    """Outermost middleware: checks the token and the body size, and logs every request.

    A plain ASGI middleware, not Starlette's ``BaseHTTPMiddleware``, which would run the endpoint
    in another task and hide the client's disconnect from it.
    """

    def __init__(
        self, app: Any, *, max_body_bytes: int, token: str | None, open_paths: frozenset[str]
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.token = f"Bearer {token}".encode() if token else None
        self.open_paths = open_paths

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        record: dict[str, Any] = {"status": 500}
        scope["papergym.record"] = record

        async def logged_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                record["status"] = message["status"]
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                await _send_json(logged_send, *refusal)
                return
            await self.app(scope, self._limited(receive), logged_send)
        finally:
            _log_request(scope, record, time.perf_counter() - started)

    def _refusal(self, scope: dict[str, Any]) -> tuple[int, str, dict[str, str]] | None:
        """(status, detail, headers) when the request is refused before its body is read."""
        headers = dict(scope.get("headers") or [])
        if self.token is not None and scope["path"] not in self.open_paths:
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self.token):
                return (
                    401,
                    "missing or wrong bearer token (send 'Authorization: Bearer <token>')",
                    {"www-authenticate": "Bearer"},
                )
        length = headers.get(b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_body_bytes:
            return 413, self._too_large(), {}
        return None

    def _limited(self, receive: Any) -> Any:
        """``receive`` that stops a body (chunked, or lying about its length) at the limit."""
        received = 0

        async def limited() -> dict[str, Any]:
            nonlocal received
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    # FastAPI re-raises an HTTPException met while reading the body: a 413
                    raise HTTPException(413, self._too_large())
            return message

        return limited

    def _too_large(self) -> str:
        return f"request body over the limit of {self.max_body_bytes} bytes (--max-body-mb)"


async def _send_json(send: Any, status: int, detail: str, headers: dict[str, str]) -> None:
    body = json.dumps({"detail": detail}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    # the body was not read: tell the client this connection ends here
    raw.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _log_request(scope: dict[str, Any], record: dict[str, Any], seconds: float) -> None:
    client = scope.get("client")
    who = f"{client[0]}:{client[1]}" if client else "-"
    line = f"{who} {scope.get('method', '-')} {scope['path']} {record['status']} {seconds * 1000:.1f} ms"
    if "scored" in record:
        line += f" scored={record['scored']} unscored={record['unscored']}"
        if record.get("partial"):
            line += f" partial={record['partial']}"
    if record["status"] == CLIENT_CLOSED:
        line += " (client disconnected: judging cancelled)"
    log.info(line)


# --- the app --------------------------------------------------------------------------------------


class _ClientGone(Exception):
    """The client closed its connection before its scores were ready."""


async def _until_disconnected(request: Any, work: Coroutine[Any, Any, T]) -> T:
    """Await ``work``, cancelling it if the client disconnects first.

    Uvicorn keeps running a request whose client has gone; only ``receive()`` tells, by
    returning ``http.disconnect`` once the body has been read.
    """

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    job = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(gone())
    try:
        await asyncio.wait({job, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finished = job.done()
    finally:  # also when this request itself is cancelled (server shutdown)
        watcher.cancel()
        if not job.done():
            job.cancel()
    if not finished:
        raise _ClientGone
    return job.result()


def create_app(
    reward: Reward[Any, Any],
    *,
    title: str,
    health: Callable[[], dict[str, Any]],
    fallback: Callable[[], float],
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    token: str | None = None,
    docs: bool = False,
    load: Callable[[], None] | None = None,
    on_load_error: Callable[[str], None] | None = None,
) -> Any:
    """A FastAPI app serving any ``reward`` (all scoring happens on the server's own event
    loop): ``POST /get_reward`` (OpenRLHF's protocol; unscored answers get ``fallback()``),
    ``POST /score`` and ``GET /health`` (``health()``'s fields). Each label (a ``/score`` item's
    ``ground_truth`` with its ``extra_info``) is read by the reward's ``input_of``.

    ``load`` runs on a thread at startup (e.g. loading the judge's model); until it returns,
    ``/health`` answers 503 and scoring requests wait. ``token``: the bearer token every path
    but ``/health`` requires. ``docs``: serve ``/docs``, ``/redoc`` and ``/openapi.json``.
    """
    app, readiness = guarded_app(
        title,
        health=health,
        max_body_bytes=max_body_bytes,
        token=token,
        docs=docs,
        load=load,
        on_load_error=on_load_error,
    )

    async def scores(request: Request, pairs: list[tuple[Any, str]]) -> list[Any] | Response:
        return await scored_when_ready(request, readiness, lambda: reward.ascore_batch(pairs))

    @app.post("/get_reward", response_model=None)
    async def get_reward(body: RewardRequest, request: Request) -> dict[str, Any] | Response:
        if not len(body.query) == len(body.prompts) == len(body.labels):
            raise HTTPException(422, "query, prompts and labels must have the same length")
        pairs = [
            (_input(reward, label, None), response_of(query, prompt))
            for query, prompt, label in zip(body.query, body.prompts, body.labels, strict=True)
        ]
        found = await scores(request, pairs)
        return found if isinstance(found, Response) else payload(reward, found, fallback())

    @app.post("/score", response_model=None)
    async def score(body: ScoreRequest, request: Request) -> dict[str, Any] | Response:
        pairs = [
            (_input(reward, item.ground_truth, item.extra_info), item.answer) for item in body.items
        ]
        found = await scores(request, pairs)
        if isinstance(found, Response):
            return found
        return {"scores": [_as_json(s) for s in found]}

    return app


def _input(reward: Reward[Any, Any], ground_truth: Any, extra_info: dict[str, Any] | None) -> Any:
    """The reward's input from a request's label; a bad label is the client's error: 422 with
    the reason."""
    try:
        return reward.input_of(ground_truth, extra_info)
    except Exception as error:
        raise HTTPException(422, f"invalid ground truth: {str(error).splitlines()[0]}") from None


def _as_json(result: Any) -> Any:
    """A result as JSON data: a pydantic record's own dump, else pydantic's for the type."""
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    return to_jsonable_python(result)


def guarded_app(
    title: str,
    *,
    health: Callable[[], dict[str, Any]],
    max_body_bytes: int,
    token: str | None,
    docs: bool,
    load: Callable[[], None] | None,
    on_load_error: Callable[[str], None] | None,
) -> tuple[FastAPI, Readiness]:
    """A FastAPI app with the guard (token, body limit, request log), background loading and
    ``GET /health`` (``health()``'s fields; 503 until loaded): what every reward server shares."""
    readiness = Readiness(ready=load is None)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        if load is not None:
            _start_loading(load, readiness, on_load_error)
        yield

    app = FastAPI(
        title=title,
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        redoc_url="/redoc" if docs else None,
        openapi_url="/openapi.json" if docs else None,
    )
    app.add_middleware(
        _Guard,
        max_body_bytes=max_body_bytes,
        token=token,
        open_paths=OPEN_PATHS | (DOCS_PATHS if docs else frozenset()),
    )

    @app.get("/health")
    async def health_route() -> Response:
        body: dict[str, Any] = {"status": readiness.status, **health()}
        if readiness.error:
            body["error"] = readiness.error
        return JSONResponse(body, status_code=200 if readiness.ready else 503)

    return app, readiness


async def scored_when_ready(
    request: Request, readiness: Readiness, work: Callable[[], Coroutine[Any, Any, list[S]]]
) -> list[S] | Response:
    """``work()``'s scores once the reward is loaded, cancelled when the client goes away (499);
    the request's log line gets the scored and unscored counts (and the review reward's partial
    ones)."""

    async def when_ready() -> list[S]:
        await readiness.wait()
        return await work()

    try:
        found = await _until_disconnected(request, when_ready())
    except _ClientGone:
        return Response(status_code=CLIENT_CLOSED)
    record = request.scope.get("papergym.record", {})
    record["scored"] = sum(1 for s in found if s.scored)
    record["unscored"] = len(found) - record["scored"]
    record["partial"] = sum(1 for s in found if getattr(s, "partial", False))  # review reward
    return found


def _start_loading(
    load: Callable[[], None], readiness: Readiness, on_error: Callable[[str], None] | None
) -> None:
    """Run ``load`` on a daemon thread (a shutdown never waits for it) and report on the loop."""
    loop = asyncio.get_running_loop()
    started = time.perf_counter()

    def done(error: str | None) -> None:
        readiness.finish(error)
        if error is None:
            log.info(f"judge ready in {time.perf_counter() - started:.1f} s")
            return
        log.error(f"error: the judge failed to load: {error}")
        if on_error is not None:
            on_error(error)

    def run() -> None:
        try:
            load()
            error = None
        except Exception as failure:
            error = redact(
                f"{type(failure).__name__}: {str(failure).splitlines()[0] if str(failure) else ''}"
            )
        with contextlib.suppress(RuntimeError):  # the loop closed first: nobody is waiting
            loop.call_soon_threadsafe(done, error)

    threading.Thread(target=run, name="papergym-judge-load", daemon=True).start()


# --- running it --------------------------------------------------------------------------------


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@dataclass(frozen=True)
class ServeOptions:
    """What a reward server takes from the serve settings: the body limit, the bearer token
    every path but ``/health`` requires, and whether ``/docs`` is served."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    token: str | None = None
    docs: bool = False


DEFAULT_SERVE_OPTIONS = ServeOptions()


def run_server(
    create_app: Callable[..., Any],
    sock: socket.socket,
    options: ServeOptions,
    *,
    load: Callable[[], None],
    serving: str,
    loading: str,
) -> int:
    """Run the app ``create_app(max_body_bytes=, token=, docs=, load=, on_load_error=)`` builds
    on ``sock`` until SIGTERM/SIGINT, after one line saying where it listens, what it serves and
    the token rule; the exit code (1 when loading failed: that stops the server)."""
    _log_to_stderr()
    failed: list[str] = []

    def stop(error: str) -> None:
        failed.append(error)
        server.should_exit = True

    app = create_app(
        max_body_bytes=options.max_body_bytes,
        token=options.token,
        docs=options.docs,
        load=load,
        on_load_error=stop,
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,  # our own line per request says more (latency, scored/unscored)
        timeout_graceful_shutdown=int(GRACEFUL_SHUTDOWN_S),
        lifespan="on",
    )
    server = RewardServer(config)
    guard = "bearer token required (except /health)" if options.token else "no token"
    log.info(f"papergym serve-reward listening on {url_of(sock)} · {serving} · {guard} · {loading}")
    server.run(sockets=[sock])
    log.info("stopped")
    return 1 if failed else 0


class RewardServer(uvicorn.Server):
    """uvicorn's server, stopping on SIGTERM/SIGINT with exit code 0.

    uvicorn re-raises the signal once its graceful shutdown is done, so the process would die of
    SIGTERM (exit -15) instead of returning normally; this one just returns.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signals reach the main thread only (tests run servers on threads)
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if not self.should_exit:
            log.info(
                f"{signal.Signals(sig).name}: stopping (in-flight requests get "
                f"{GRACEFUL_SHUTDOWN_S:g} s, then their judging is cancelled)"
            )
        super().handle_exit(sig, frame)


def _log_to_stderr() -> None:
    if not any(getattr(h, "papergym", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(message)s", datefmt="%Y-%m-%d %H:%M:%S")
        )
        handler.papergym = True  # type: ignore[attr-defined]
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
