"""A scripted reviewer behind a real loopback OpenAI-compatible server (``FakeOpenAIServer``).

:class:`ScriptedReviewer` is the server's responder: it reads which reviewer profile a review
request is for (from the profile's description in the prompt) and answers with a valid review
carrying that profile's scripted rating, or with the fault scripted for it:

* ``garbage`` — prose with no JSON, every time (still unparseable after the layer's repairs);
* ``truncated`` — half a review with ``finish_reason: "length"``, every time;
* ``off-scale`` — a review rated 7 (not on the ICLR scale), every time;
* ``off-scale-once`` — rated 7 first, a valid review when re-asked with the repair message.

Requests without a schema are meta-review requests and get a fixed paragraph.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from typing import Any

from papergym.fakellm import RawResponse
from papergym.fakellm.completions import extract_schema
from papergym.review.reviewer import load_profiles

META_REVIEW = "The reviewers agree the method is simple; they disagree on the evidence."


def review_answer(rating: int, profile: str) -> dict[str, Any]:
    """A valid review with ``rating``."""
    return {
        "summary": f"The paper proposes a method ({profile} view).",
        "strengths": [{"point": "Clear problem statement.", "quote": None}],
        "weaknesses": [{"point": "Few baselines.", "quote": None}],
        "questions": ["How does it scale?"],
        "soundness": 3,
        "presentation": 2,
        "contribution": 3,
        "rating": rating,
        "confidence": 4,
    }


def _body(request: dict[str, Any], content: str, finish_reason: str) -> dict[str, Any]:
    words = sum(len(str(m.get("content", "")).split()) for m in request.get("messages", []))
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "reviewer-fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": words,
            "completion_tokens": len(content.split()),
            "total_tokens": words + len(content.split()),
        },
    }


class ScriptedReviewer:
    """The responder: per-profile ratings and faults; records every request it answers."""

    def __init__(
        self, ratings: dict[str, int] | None = None, faults: dict[str, str] | None = None
    ) -> None:
        self.ratings = ratings or {}
        self.faults = faults or {}
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def profile_of(self, request: dict[str, Any]) -> str:
        first = str(request["messages"][0]["content"])
        found = [p.name for p in load_profiles() if p.description in first]
        assert len(found) == 1, f"expected one profile in the request, found {found}"
        return found[0]

    def review_requests(self) -> list[dict[str, Any]]:
        """The review requests (with a schema) answered so far."""
        with self._lock:
            return [r for r in self.requests if extract_schema(r) is not None]

    def __call__(self, request: dict[str, Any]) -> str | dict[str, Any] | RawResponse:
        with self._lock:
            self.requests.append(request)
        if extract_schema(request) is None:
            return META_REVIEW
        profile = self.profile_of(request)
        fault = self.faults.get(profile)
        repaired = len(request["messages"]) > 1
        if fault == "garbage":
            return "I liked this paper a lot. Overall I would say seven out of ten."
        if fault == "truncated":
            content = json.dumps(review_answer(6, profile))
            return RawResponse(200, _body(request, content[: len(content) // 2], "length"))
        if fault == "off-scale" or (fault == "off-scale-once" and not repaired):
            return review_answer(7, profile)
        return review_answer(self.ratings.get(profile, 6), profile)
