"""``ReviewReward`` with the LLM reviewer behind a loopback server (scripted reviewer), and its
adapters called the way TRL, verl and OpenRLHF call them, and ``serve-reward --reward review``."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn

from papergym.fakellm import FakeOpenAIServer
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.netutil import bind
from papergym.review import openrlhf as review_openrlhf
from papergym.review import trl as review_trl
from papergym.review import verl as review_verl
from papergym.review.records import PaperReview, scale_value
from papergym.review.reviewer import LLMReviewer, load_profiles
from papergym.review.reward import ReviewReward
from papergym.review.runtime import set_shared_review_reward
from papergym.review.server import create_review_app
from papergym.reward import runtime
from papergym.reward.server import RewardServer
from papergym.reward.settings import RewardSection
from papergym.settings.models import PaperGymConfig
from support.reviewer import ScriptedReviewer

GOOD = "# A Paper\n\n1 INTRODUCTION\n\nWe propose a method and test it on two benchmarks."
BAD = "# BROKEN paper\n\n1 INTRODUCTION\n\nEvery reviewer fails on this one."


class PerPaperScript(ScriptedReviewer):
    """Ratings by profile; every review of a paper whose text says BROKEN is garbage."""

    def __call__(self, request: dict[str, Any]) -> Any:
        if "BROKEN" in str(request["messages"][0]["content"]):
            with self._lock:
                self.requests.append(request)
            return "no JSON here"
        return super().__call__(request)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.responder = PerPaperScript(ratings={"empirical": 8, "theory": 6})
        yield running


def llm_reward(server: FakeOpenAIServer) -> ReviewReward:
    backend = BackendConfig(
        model="reviewer-m", base_url=(server.base_url,), retry_base_delay=0.0, repair_attempts=0
    )
    llm = LLMClient(LLMConfig(default=backend, cache=False))
    return ReviewReward(LLMReviewer(llm, reviewers=2, meta_review=False))


@pytest.fixture
def shared(server: FakeOpenAIServer) -> Iterator[ReviewReward]:
    reward = llm_reward(server)
    runtime.set_shared_config(PaperGymConfig(reward=RewardSection(unscored=-1.0)))
    set_shared_review_reward(reward)
    yield reward
    set_shared_review_reward(None)
    runtime.set_shared_reward(None)


def test_review_reward_is_the_scaled_mean_rating_and_unscored_is_none(
    server: FakeOpenAIServer,
) -> None:
    good, bad, empty = llm_reward(server).score_many([GOOD, BAD, "  "])
    assert good.rating == 7.0 and good.value == pytest.approx(scale_value(7.0)) == 6 / 9
    assert good.reviews == 2 and good.unscored == 0 and good.reason is None
    assert bad.value is None and bad.rating is None and bad.unscored == 2
    assert bad.reason is not None and "unparseable" in bad.reason
    assert empty.value == 0.0 and empty.reviews == 0  # nothing to review: the lowest rating
    assert len(server.requests) == 4  # two reviewers for each of the two texts


def test_review_reward_reviews_a_repeated_text_once(server: FakeOpenAIServer) -> None:
    reward = llm_reward(server)
    scores = reward.score_many([GOOD, GOOD, GOOD])
    assert len({s.value for s in scores}) == 1
    assert len(server.requests) == 2
    reward.score_many([GOOD])
    assert len(server.requests) == 2


def test_review_reward_trl_returns_none_for_unscored_and_logs(shared: ReviewReward) -> None:
    logged: dict[str, float] = {}
    chat = [[{"role": "assistant", "content": GOOD}], [{"role": "assistant", "content": BAD}]]
    values = review_trl.review_reward(
        prompts=["p", "p"], completions=chat, log_metric=logged.__setitem__, extra_column=[1, 2]
    )
    assert values == [pytest.approx(6 / 9), None]
    assert logged == {"review/rating_mean": 7.0, "review/unscored": 1.0}
    async_values = asyncio.run(review_trl.review_reward_async(["p"], [GOOD]))
    assert async_values == [pytest.approx(6 / 9)]


def test_review_reward_verl_one_key_set_and_the_unscored_fallback(shared: ReviewReward) -> None:
    good = review_verl.compute_score("papergym-review", GOOD, None, extra_info={}, step=1)
    bad = asyncio.run(review_verl.compute_score_async("papergym-review", BAD, "{}"))
    batch = review_verl.compute_score_batch(["d", "d"], [GOOD, BAD], [None, None])
    assert set(good) == set(bad) == set(batch[0]) == set(review_verl.KEYS)
    assert good == {"score": pytest.approx(6 / 9), "rating": 7.0, "reviews": 2.0, "unscored": 0.0}
    assert bad == {"score": -1.0, "rating": -1.0, "reviews": 0.0, "unscored": 1.0}
    assert batch == [good, bad]


def test_review_reward_openrlhf_reward_func(shared: ReviewReward) -> None:
    prompts = ["Write a paper.\n", "Write a paper.\n"]
    result = review_openrlhf.reward_func(
        [p + t for p, t in zip(prompts, [GOOD, BAD], strict=True)], prompts
    )
    assert result["rewards"].tolist() == pytest.approx([6 / 9, -1.0])
    assert result["extra_logs"]["review_unscored"].tolist() == [0.0, 1.0]
    assert result["extra_logs"]["review_rating"].tolist() == [7.0, -1.0]


@contextmanager
def served(app: Any) -> Iterator[tuple[str, int]]:
    sock = bind("127.0.0.1", 0)
    address = sock.getsockname()[:2]
    server = RewardServer(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive()
        time.sleep(0.01)
    try:
        yield address
    finally:
        server.should_exit = True
        thread.join(10)


def call(address: tuple[str, int], method: str, path: str, body: Any = None) -> tuple[int, Any]:
    connection = http.client.HTTPConnection(*address, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def test_review_reward_server_get_reward_and_score(shared: ReviewReward) -> None:
    with served(create_review_app(shared)) as address:
        assert call(address, "GET", "/health")[0] == 200
        status, body = call(
            address,
            "POST",
            "/get_reward",
            {"query": ["Q: " + GOOD, "Q: " + BAD], "prompts": ["Q: ", "Q: "]},
        )
        assert status == 200
        assert body["rewards"] == pytest.approx([6 / 9, -1.0])
        assert body["extra_logs"]["review_unscored"] == [0.0, 1.0]
        status, body = call(
            address, "POST", "/score", {"items": [{"answer": GOOD}, {"answer": BAD}]}
        )
        assert status == 200
        assert body["scores"][0]["rating"] == 7.0 and body["scores"][1]["value"] is None
        bad_lengths = {"query": ["a"], "prompts": [], "labels": None}
        assert call(address, "POST", "/get_reward", bad_lengths)[0] == 422


def test_review_reward_serve_reward_cli_with_the_llm_reviewer(server: FakeOpenAIServer) -> None:
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "papergym.cli", "serve-reward", "--reward", "review"),
            *("--port", "0", f"llm.default.base_url={server.base_url}"),
            *("llm.default.model=reviewer-m", "llm.cache=false", "review.reviewers=2"),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+) · review reward", line)
        assert found, line
        threading.Thread(target=process.stderr.read, daemon=True).start()
        address = ("127.0.0.1", int(found.group(1)))
        status, body = call(address, "POST", "/score", {"items": [{"answer": GOOD}]})
        assert status == 200 and body["scores"][0]["rating"] == 7.0
        reviewed = {r["messages"][0]["content"] for r in server.requests}
        assert len(reviewed) == len(load_profiles()[:2])  # two independent reviewer calls
    finally:
        process.terminate()
        process.wait(timeout=10)


class SlowReviewer:
    """Takes a moment per text and counts its reviews: for the reward's sharing, not reviewing."""

    name = "slow"

    def __init__(self) -> None:
        self.calls = 0

    async def review(self, paper_id: str, text: str) -> PaperReview:
        self.calls += 1
        await asyncio.sleep(0.2)
        return PaperReview(
            paper_id=paper_id, source=paper_id, reviewer_model="slow", baseline=False,
            score=8.0, decision="accept", threshold=5.5,
        )  # fmt: skip


def test_review_reward_a_waiter_survives_the_first_askers_cancellation() -> None:
    reviewer = SlowReviewer()
    reward = ReviewReward(reviewer)

    async def go() -> float | None:
        first = asyncio.ensure_future(reward.ascore(GOOD))
        await asyncio.sleep(0.05)
        second = asyncio.ensure_future(reward.ascore(GOOD))
        await asyncio.sleep(0.05)
        first.cancel()
        return (await second).value

    assert asyncio.run(go()) == pytest.approx(7 / 9)
    assert reviewer.calls == 2  # the cancelled review was not shared: the waiter reviewed anew
