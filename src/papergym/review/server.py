"""``papergym serve-reward --reward review``: the review reward over HTTP.

The same protocol, guard and shutdown as the rubric reward's server
(:mod:`papergym.adapters.server`, whose token check, body limit, request log, readiness and
disconnect handling this reuses), with the review reward behind it:

- ``POST /get_reward`` — OpenRLHF's protocol: ``{"query": [...], "prompts": [...], "labels":
  [...]}`` (labels optional and not read) → ``{"rewards", "scores", "extra_logs"}``; unscored
  texts get ``reward.unscored`` and ``extra_logs.review_unscored`` 1.0;
- ``POST /score`` — ``{"items": [{"answer": "..."}]}`` → every :class:`ReviewScore` (``value``
  null when unscored);
- ``GET /health`` — 200 once the reviewer is loaded (the offline baseline's model), 503 before.

Reviewing starts with pure-Python work on the text (anonymising it, the offline baseline's
prediction), which holds the interpreter lock for as long as it runs: on the event loop, or on a
thread, one long answer would keep every other request, ``/health`` included, waiting. So the
served reviewer does that work in worker processes (:func:`review_workers`), and a text is cut
to ``reward.max_answer_chars`` before anything else is done with it.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from papergym.adapters.openrlhf import response_of
from papergym.adapters.server import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_SERVE_OPTIONS,
    ServeOptions,
    guarded_app,
    run_server,
    scored_when_ready,
)
from papergym.redact import redact
from papergym.review.openrlhf import review_payload
from papergym.review.reviewer import off_loop
from papergym.review.reward import ReviewReward, ReviewScore, limit_paper


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


MAX_WORKERS = 4
"""Worker processes of a review server at most (fewer on a machine with fewer cores)."""

WARM_UP_TEXT = "We propose a method and evaluate it on two benchmarks."

WATCH_S = 0.5
"""How often a worker checks that its server is still there."""

LARGE_BODY_BYTES = 1 << 20
"""A larger request body is parsed, and its texts cut, in a worker process."""


def worker_count() -> int:
    """Worker processes of a review server: one per core, at most :data:`MAX_WORKERS`."""
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


def _exit_with_parent(parent: int) -> None:
    """A worker's initializer: exit once the server is gone (killed, or stopped before it could
    stop its workers), so that no worker outlives it holding its output open."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_S)
        os._exit(0)

    threading.Thread(target=watch, name="papergym-parent-watch", daemon=True).start()


class ReviewWorkers(ProcessPoolExecutor):
    """The worker processes a review server anonymises and rates texts in. Spawned, not forked:
    the server's threads (its event loop, the loader) must not be copied into them."""

    def __init__(self) -> None:
        super().__init__(
            worker_count(),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_exit_with_parent,
            initargs=(os.getpid(),),
        )

    def close(self) -> None:
        """Stop every worker now, one busy with a long text included (its client has gone)."""
        self.shutdown(wait=False, cancel_futures=True)
        processes: dict[int, multiprocessing.process.BaseProcess] = (
            getattr(self, "_processes", None) or {}  # CPython's pool keeps them there
        )
        for process in list(processes.values()):
            process.terminate()
        for process in list(processes.values()):
            process.join(5)


def review_workers() -> ReviewWorkers:
    """A review server's worker processes (see :class:`ReviewWorkers`)."""
    return ReviewWorkers()


class BadBody(Exception):
    """A request body that is not what the route takes: ``detail`` is a sentence, or pydantic's
    error list (plain data, so it crosses from a worker process)."""

    def __init__(self, detail: str | list[Any]) -> None:
        super().__init__(detail)
        self.detail = detail


def cut_texts(raw: bytes, route: str, max_chars: int | None) -> list[tuple[str, bool]]:
    """The texts a body of ``route`` holds (``/score``: its answers; ``/get_reward``: the
    response part of each query), each cut by :func:`limit_paper`."""
    try:
        if route == "/score":
            items = ReviewScoreRequest.model_validate_json(raw).items
            texts = [item.answer for item in items]
        else:
            body = ReviewRewardRequest.model_validate_json(raw)
            if len(body.query) != len(body.prompts) or (
                body.labels is not None and len(body.labels) != len(body.query)
            ):
                raise BadBody("query, prompts and labels must have the same length")
            texts = [response_of(q, p) for q, p in zip(body.query, body.prompts, strict=True)]
    except ValidationError as error:
        raise BadBody(
            list(error.errors(include_url=False, include_context=False, include_input=False))
        ) from None
    return [limit_paper(text, max_chars) for text in texts]


def _body(model: type[BaseModel]) -> dict[str, Any]:
    """The route's request body in the API docs (the route reads the body itself)."""
    schema = {"content": {"application/json": {"schema": model.model_json_schema()}}}
    return {"requestBody": {"required": True, **schema}}


def warm_up_reviewer(reward: ReviewReward) -> None:
    """Load what the reviewer needs before its first answer: the offline baseline's model, and
    the modules of every worker process (spawning one takes a second or two)."""
    from papergym.review.offline import OfflineReviewer, predicted_review
    from papergym.review.reviewer import prepare_paper

    reviewer = reward.reviewer
    if isinstance(reviewer, OfflineReviewer):
        reviewer.predict([WARM_UP_TEXT])
    if reward.executor is None:
        return
    jobs: list[Future[object]] = [  # submitted together: each waiting job starts a worker
        reward.executor.submit(predicted_review, reviewer.path, WARM_UP_TEXT)
        if isinstance(reviewer, OfflineReviewer)
        else reward.executor.submit(prepare_paper, WARM_UP_TEXT, 500)
        for _ in range(worker_count())
    ]
    for job in jobs:
        job.result()  # a worker that cannot start is a failure to load


def create_review_app(
    reward: ReviewReward,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    token: str | None = None,
    docs: bool = False,
    load: Callable[[], None] | None = None,
    on_load_error: Callable[[str], None] | None = None,
) -> Any:
    """A FastAPI app serving ``reward``: scoring on the server's own event loop, the CPU work
    on texts (a large body's parsing too) in the reward's executor when it has one."""
    app, readiness = guarded_app(
        "PaperGym review reward",
        health=lambda: {"reward": "review", "reviewer": reward.name},
        max_body_bytes=max_body_bytes,
        token=token,
        docs=docs,
        load=load,
        on_load_error=on_load_error,
    )

    async def scores(request: Request, route: str) -> list[ReviewScore] | Response:
        cut = await read_texts(request, route)
        return await scored_when_ready(request, readiness, lambda: reward.ascore_cut_many(cut))

    async def read_texts(request: Request, route: str) -> list[tuple[str, bool]]:
        """The body's texts, cut to the answer limit: in a worker process when the body is
        large (parsing 30 MB of JSON holds the interpreter lock for a while)."""
        raw = await request.body()
        try:
            if len(raw) > LARGE_BODY_BYTES:
                return await off_loop(
                    reward.executor, cut_texts, raw, route, reward.max_answer_chars
                )
            return cut_texts(raw, route, reward.max_answer_chars)
        except BadBody as error:
            if isinstance(error.detail, str):
                raise HTTPException(422, error.detail) from None
            raise RequestValidationError(error.detail) from None

    @app.post("/get_reward", response_model=None, openapi_extra=_body(ReviewRewardRequest))
    async def get_reward(request: Request) -> dict[str, Any] | Response:
        found = await scores(request, "/get_reward")
        return found if isinstance(found, Response) else review_payload(found)

    @app.post("/score", response_model=None, openapi_extra=_body(ReviewScoreRequest))
    async def score(request: Request) -> dict[str, Any] | Response:
        found = await scores(request, "/score")
        if isinstance(found, Response):
            return found
        return {"scores": [s.model_dump(mode="json") for s in found]}

    return app


def serve_review(
    reward: ReviewReward, sock: socket.socket, options: ServeOptions = DEFAULT_SERVE_OPTIONS
) -> int:
    """Serve on ``sock`` until SIGTERM/SIGINT; the exit code (1 when the reviewer failed to load).
    The reward's executor (its worker processes) is shut down at the end."""
    try:
        return run_server(
            functools.partial(create_review_app, reward),
            sock,
            options,
            load=lambda: warm_up_reviewer(reward),
            serving=f"review reward, reviewer {redact(reward.name)}",
            loading="loading (GET /health answers 503 until ready)",
        )
    finally:
        if isinstance(reward.executor, ReviewWorkers):
            reward.executor.close()
        elif reward.executor is not None:
            reward.executor.shutdown(wait=False, cancel_futures=True)
