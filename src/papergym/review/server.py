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

import socket
from collections.abc import Callable
from typing import Any

from fastapi import HTTPException, Request
from fastapi.responses import Response
from pydantic import BaseModel

from papergym.redact import redact
from papergym.review.openrlhf import review_payload
from papergym.review.reward import ReviewReward, ReviewScore
from papergym.reward.openrlhf import response_of
from papergym.reward.server import (
    DEFAULT_MAX_BODY_BYTES,
    guarded_app,
    run_server,
    scored_when_ready,
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
    app, readiness = guarded_app(
        "PaperGym review reward",
        health=lambda: {"reward": "review", "reviewer": reward.name},
        max_body_bytes=max_body_bytes,
        token=token,
        docs=docs,
        load=load,
        on_load_error=on_load_error,
    )

    async def scores(request: Request, texts: list[str]) -> list[ReviewScore] | Response:
        return await scored_when_ready(request, readiness, lambda: reward.ascore_many(texts))

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
    return run_server(
        lambda on_load_error: create_review_app(
            reward,
            max_body_bytes=max_body_bytes,
            token=token,
            docs=docs,
            load=lambda: warm_up_reviewer(reward),
            on_load_error=on_load_error,
        ),
        sock,
        token=token,
        serving=f"review reward, reviewer {redact(reward.name)}",
        loading="loading (GET /health answers 503 until ready)",
    )
