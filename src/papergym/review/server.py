"""``papergym serve-reward --reward review``: the review reward over HTTP.

The same protocol, guard and shutdown as the rubric reward's server
(:mod:`papergym.reward.server`, whose token check, body limit, request log, readiness and
disconnect handling this reuses), with the review reward behind it:

- ``POST /get_reward`` — OpenRLHF's protocol: ``{"query": [...], "prompts": [...], "labels":
  [...]}`` (labels optional and not read) → ``{"rewards", "scores", "extra_logs"}``; unscored
  texts get ``reward.unscored`` and ``extra_logs.review_unscored`` 1.0;
- ``POST /score`` — ``{"items": [{"answer": "..."}]}`` → every :class:`ReviewScore` (``value``
  null when unscored);
- ``GET /health`` — 200 once the reviewer is loaded (the offline baseline's model), 503 before.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from papergym.redact import redact
from papergym.review.openrlhf import review_payload
from papergym.review.reward import ReviewReward, ReviewScore
from papergym.reward.openrlhf import response_of
from papergym.reward.server import (
    CLIENT_CLOSED,
    DEFAULT_MAX_BODY_BYTES,
    DOCS_PATHS,
    GRACEFUL_SHUTDOWN_S,
    OPEN_PATHS,
    Readiness,
    RewardServer,
    _ClientGone,
    _Guard,
    _log_to_stderr,
    _start_loading,
    _until_disconnected,
    log,
    url_of,
)


class ReviewRewardRequest(BaseModel):
    query: list[str]
    prompts: list[str]
    labels: list[Any] | None = None


class ReviewItem(BaseModel):
    answer: str
    ground_truth: Any = None
    extra_info: dict[str, Any] | None = None


class ReviewScoreRequest(BaseModel):
    items: list[ReviewItem]


def warm_up_reviewer(reward: ReviewReward) -> None:
    """Load what the reviewer needs before its first answer (the offline baseline's model)."""
    predict = getattr(reward.reviewer, "predict", None)
    if callable(predict):
        predict(["We propose a method and evaluate it on two benchmarks."])


def create_review_app(
    reward: ReviewReward,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    token: str | None = None,
    docs: bool = False,
    load: Callable[[], None] | None = None,
    on_load_error: Callable[[str], None] | None = None,
) -> Any:
    """A FastAPI app serving ``reward`` (scoring on the server's own event loop)."""
    readiness = Readiness(ready=load is None)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        if load is not None:
            _start_loading(load, readiness, on_load_error)
        yield

    app = FastAPI(
        title="PaperGym review reward",
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
    async def health() -> Response:
        body: dict[str, Any] = {"status": readiness.status, "reward": "review"}
        body["reviewer"] = reward.name
        if readiness.error:
            body["error"] = readiness.error
        return JSONResponse(body, status_code=200 if readiness.ready else 503)

    async def scores(request: Request, texts: list[str]) -> list[ReviewScore] | Response:
        async def reviewed() -> list[ReviewScore]:
            await readiness.wait()
            return await reward.ascore_many(texts)

        try:
            found = await _until_disconnected(request, reviewed())
        except _ClientGone:
            return Response(status_code=CLIENT_CLOSED)
        record = request.scope.get("papergym.record", {})
        record["scored"] = sum(1 for s in found if s.scored)
        record["unscored"] = len(found) - record["scored"]
        return found

    @app.post("/get_reward", response_model=None)
    async def get_reward(body: ReviewRewardRequest, request: Request) -> dict[str, Any] | Response:
        if len(body.query) != len(body.prompts) or (
            body.labels is not None and len(body.labels) != len(body.query)
        ):
            raise HTTPException(422, "query, prompts and labels must have the same length")
        texts = [response_of(q, p) for q, p in zip(body.query, body.prompts, strict=True)]
        found = await scores(request, texts)
        return found if isinstance(found, Response) else review_payload(found)

    @app.post("/score", response_model=None)
    async def score(body: ReviewScoreRequest, request: Request) -> dict[str, Any] | Response:
        found = await scores(request, [item.answer for item in body.items])
        if isinstance(found, Response):
            return found
        return {"scores": [s.model_dump(mode="json") for s in found]}

    return app


def serve_review(
    reward: ReviewReward,
    sock: socket.socket,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    token: str | None = None,
    docs: bool = False,
) -> int:
    """Serve on ``sock`` until SIGTERM/SIGINT; the exit code (1 when the reviewer failed to load)."""
    _log_to_stderr()
    failed: list[str] = []

    def stop(error: str) -> None:
        failed.append(error)
        server.should_exit = True

    app = create_review_app(
        reward,
        max_body_bytes=max_body_bytes,
        token=token,
        docs=docs,
        load=lambda: warm_up_reviewer(reward),
        on_load_error=stop,
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=int(GRACEFUL_SHUTDOWN_S),
        lifespan="on",
    )
    server = RewardServer(config)
    guard = "bearer token required (except /health)" if token else "no token"
    log.info(
        f"papergym serve-reward listening on {url_of(sock)} · review reward, reviewer "
        f"{redact(reward.name)} · {guard} · loading (GET /health answers 503 until ready)"
    )
    server.run(sockets=[sock])
    log.info("stopped")
    return 1 if failed else 0
