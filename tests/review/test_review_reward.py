"""``ReviewReward`` with the LLM reviewer behind a loopback server (scripted reviewer), and its
adapters called the way TRL, verl and OpenRLHF call them, and ``serve-reward --reward review``."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
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
from papergym.review.offline import OfflineReviewer, predicted_review
from papergym.review.records import PaperReview, scale_value
from papergym.review.reviewer import LLMReviewer, load_profiles
from papergym.review.reward import ReviewReward, limit_paper
from papergym.review.runtime import make_review_reward, set_shared_review_reward
from papergym.review.server import create_review_app, review_workers, warm_up_reviewer
from papergym.reward import runtime
from papergym.reward.server import RewardServer
from papergym.settings.models import PaperGymConfig, ReviewSection, RewardSection
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


def llm_reward(server: FakeOpenAIServer, **options: Any) -> ReviewReward:
    backend = BackendConfig(
        model="reviewer-m",
        base_url=(server.base_url,),
        retry_base_delay=0.0,
        repair_attempts=0,
        max_retries=0,
    )
    llm = LLMClient(LLMConfig(default=backend, cache=False))
    return ReviewReward(LLMReviewer(llm, reviewers=2, meta_review=False), **options)


class DownFor(PerPaperScript):
    """As :class:`PerPaperScript`, but the reviews of the profiles in ``down`` find the endpoint
    failing (HTTP 500) while ``down`` holds them."""

    def __init__(self, down: set[str]) -> None:
        super().__init__(ratings={"empirical": 8, "theory": 6})
        self.down = down

    def __call__(self, request: dict[str, Any]) -> Any:
        if self.profile_of(request) in self.down:
            with self._lock:
                self.requests.append(request)
            raise RuntimeError("the endpoint is down")  # answered as HTTP 500
        return super().__call__(request)


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
    assert logged == {"review/rating_mean": 7.0, "review/unscored": 1.0, "review/partial": 0.0}
    async_values = asyncio.run(review_trl.review_reward_async(["p"], [GOOD]))
    assert async_values == [pytest.approx(6 / 9)]


def test_review_reward_verl_one_key_set_and_the_unscored_fallback(shared: ReviewReward) -> None:
    good = review_verl.compute_score("papergym-review", GOOD, None, extra_info={}, step=1)
    bad = asyncio.run(review_verl.compute_score_async("papergym-review", BAD, "{}"))
    batch = review_verl.compute_score_batch(["d", "d"], [GOOD, BAD], [None, None])
    assert set(good) == set(bad) == set(batch[0]) == set(review_verl.KEYS)
    assert good == {
        "score": pytest.approx(6 / 9), "rating": 7.0, "reviews": 2.0, "unscored": 0.0,
        "partial": 0.0,
    }  # fmt: skip
    assert bad == {"score": -1.0, "rating": -1.0, "reviews": 0.0, "unscored": 1.0, "partial": 0.0}
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
            *("--max-answer-chars", "2000"),
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
        # --max-answer-chars reaches the review reward (it used to be ignored there)
        long = GOOD + " And we test it again." * 1000
        status, body = call(address, "POST", "/score", {"items": [{"answer": long}]})
        assert status == 200 and body["scores"][0]["answer_truncated"] is True
        assert all(len(str(r["messages"][0]["content"])) < 5000 for r in server.requests)
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


def test_review_reward_from_fewer_reviews_than_asked_is_flagged_or_unscored(
    server: FakeOpenAIServer,
) -> None:
    server.responder = DownFor({"theory"})  # one of the two reviews never comes
    [flagged] = llm_reward(server).score_many([GOOD])
    assert flagged.value == pytest.approx(scale_value(8.0)) and flagged.reviews == 1
    # it used to come back with reason null and nothing else to tell it from a full panel
    assert flagged.reason is not None
    assert "1 of 2 review(s) unscored; first: unreachable" in flagged.reason
    assert flagged.partial and flagged.asked == 2 and flagged.unscored == 1
    [unscored] = llm_reward(server, partial="unscored").score_many([GOOD])
    assert unscored.value is None and unscored.rating is None and unscored.partial
    assert unscored.reason is not None and "review.partial=unscored" in unscored.reason
    payload = review_openrlhf.review_payload([flagged, unscored])
    assert payload["extra_logs"]["review_partial"] == [1.0, 1.0]
    assert payload["extra_logs"]["review_unscored"] == [0.0, 1.0]
    assert review_verl.review_score_dict(flagged)["partial"] == 1.0


def test_review_reward_a_full_panel_is_not_partial(server: FakeOpenAIServer) -> None:
    [score] = llm_reward(server).score_many([GOOD])
    assert not score.partial and score.asked == 2 and score.reason is None


def test_review_reward_never_caches_an_endpoint_failure(server: FakeOpenAIServer) -> None:
    script = DownFor({"empirical", "theory"})
    server.responder = script
    reward = llm_reward(server)

    async def go() -> None:  # one event loop: the client's connections belong to it
        down = await reward.ascore(GOOD)
        assert down.value is None and down.reason is not None and "unreachable" in down.reason
        script.down = {"theory"}
        partial = await reward.ascore(GOOD)
        assert len(script.requests) == 4  # asked again: nothing was kept (it used to be 2)
        assert partial.partial
        script.down = set()
        back = await reward.ascore(GOOD)
        assert back.value == pytest.approx(6 / 9) and not back.partial
        assert len(script.requests) == 6
        await reward.ascore(GOOD)
        assert len(script.requests) == 6  # a full review is kept

    asyncio.run(go())


def test_review_reward_an_unparseable_review_is_a_verdict_and_is_kept(
    server: FakeOpenAIServer,
) -> None:
    reward = llm_reward(server)
    reward.score_many([BAD])
    reward.score_many([BAD])
    assert len(server.requests) == 2  # unparseable is the reviewer's answer: not asked again


# --- the served review reward under long answers: the limit first, CPU work off the loop ---------


class Recorder:
    """A reviewer that records the texts it is given (for the reward's cutting, not reviewing)."""

    name = "recorder"

    def __init__(self) -> None:
        self.texts: list[str] = []

    async def review(self, paper_id: str, text: str) -> PaperReview:
        self.texts.append(text)
        return PaperReview(
            paper_id=paper_id, source=paper_id, reviewer_model="r", baseline=True, score=5.5,
            decision="accept", threshold=5.5,
        )  # fmt: skip


def test_review_reward_cuts_a_long_answer_before_the_reviewer_sees_it() -> None:
    reviewer = Recorder()
    reward = ReviewReward(reviewer, max_answer_chars=1000)
    long, short = reward.score_many(["a" * 60_000, "<think>" + "b" * 5000 + "</think> A paper."])
    assert long.answer_truncated and not short.answer_truncated
    assert [len(t) for t in reviewer.texts] == [1000, len("A paper.")]
    assert limit_paper("  x  ", None) == ("x", False)


def test_review_reward_from_the_configuration_honours_max_answer_chars() -> None:
    assert make_review_reward(PaperGymConfig()).max_answer_chars == 100_000
    assert (
        make_review_reward(
            PaperGymConfig(review=ReviewSection(max_answer_chars=0))
        ).max_answer_chars
        is None
    )
    config = PaperGymConfig(review=ReviewSection(max_answer_chars=1000))
    reward = make_review_reward(config)
    assert reward.max_answer_chars == 1000
    [score] = reward.score_many(["We propose a method. " * 3000])  # 63,000 characters
    assert score.answer_truncated and score.value is not None


class RecordingExecutor(Executor):
    """Runs jobs on a thread and records which functions were sent."""

    def __init__(self) -> None:
        self.functions: list[str] = []
        self.pool = ThreadPoolExecutor(1)

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.functions.append(fn.__name__)
        return self.pool.submit(fn, *args, **kwargs)


def test_reviewers_send_their_text_work_to_the_executor(server: FakeOpenAIServer) -> None:
    executor = RecordingExecutor()
    offline = OfflineReviewer(executor=executor)
    expected = asyncio.run(OfflineReviewer().review("p", GOOD))
    assert asyncio.run(offline.review("p", GOOD)) == expected
    llm = llm_reward(server).reviewer
    assert isinstance(llm, LLMReviewer)
    llm.executor = executor
    assert asyncio.run(llm.review("p", GOOD)).score == 7.0
    reward = ReviewReward(Recorder(), max_answer_chars=10, executor=executor)
    assert reward.score("x" * 1_000_001).answer_truncated  # no reasoning tag: cut here
    assert reward.score("<think>x</think>" + "x" * 1_000_001).answer_truncated
    assert executor.functions == ["predicted_review", "prepare_paper", "limit_paper"]


def start_held_server(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], int, Path]:
    """support.held_review's server in its own process; (process, port, its started file)."""
    started = tmp_path / "started"
    process = subprocess.Popen(
        [sys.executable, "-m", "support.held_review", *args],
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[1],
        env={**os.environ, "HELD_STARTED": str(started), "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert process.stderr is not None
    found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", process.stderr.readline())
    assert found, "the server did not start"
    threading.Thread(target=process.stderr.read, daemon=True).start()
    port = int(found.group(1))
    deadline = time.monotonic() + 120
    while call(("127.0.0.1", port), "GET", "/health")[0] != 200:  # workers warmed up
        assert time.monotonic() < deadline, "the server did not get ready"
        time.sleep(0.1)
    return process, port, started


def health_while_working(tmp_path: Path, *args: str) -> tuple[float, float]:
    """(seconds /health took while a text was worked on, seconds the text's /score took)."""
    process, port, started = start_held_server(tmp_path, *args)
    try:
        address = ("127.0.0.1", port)
        scored: list[float] = []

        def score() -> None:
            begun = time.perf_counter()
            assert call(address, "POST", "/score", {"items": [{"answer": GOOD}]})[0] == 200
            scored.append(time.perf_counter() - begun)

        worker = threading.Thread(target=score)
        worker.start()
        deadline = time.monotonic() + 60
        while not started.exists():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.05)  # the work is under way
        asked = time.perf_counter()
        assert call(address, "GET", "/health")[0] == 200
        health = time.perf_counter() - asked
        worker.join(120)
        assert scored
        return health, scored[0]
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_review_server_answers_health_while_a_text_is_worked_on(tmp_path: Path) -> None:
    health, scored = health_while_working(tmp_path)
    assert health < scored / 3, (health, scored)


def test_review_server_warms_its_worker_processes() -> None:
    executor = review_workers()
    try:
        warm_up_reviewer(ReviewReward(OfflineReviewer(executor=executor), executor=executor))
        assert executor.submit(predicted_review, None, GOOD).result(timeout=60)[0] > 0
    finally:
        executor.shutdown()


def children_of(pid: int) -> set[int]:
    """The child processes of ``pid`` (Linux's /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux's /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_review_server_workers_end_with_the_server(stop: signal.Signals) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "papergym.cli", "serve-reward", "--reward", "review", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        assert process.stderr is not None
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", process.stderr.readline())
        assert found
        threading.Thread(target=process.stderr.read, daemon=True).start()
        address = ("127.0.0.1", int(found.group(1)))
        deadline = time.monotonic() + 120
        while call(address, "GET", "/health")[0] != 200:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        workers = children_of(process.pid)
        assert workers  # the warmed-up worker processes
        process.send_signal(stop)
        process.wait(timeout=20)
        deadline = time.monotonic() + 20
        while any(alive(pid) for pid in workers):
            assert time.monotonic() < deadline, "a worker outlived the server"
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_review_server_parses_a_large_body_in_its_executor() -> None:
    executor = RecordingExecutor()
    reward = ReviewReward(Recorder(), max_answer_chars=1000, executor=executor)
    with served(create_review_app(reward, docs=True)) as address:
        big = "We propose a method. " * 100_000  # 2.1 MB of JSON
        status, body = call(address, "POST", "/score", {"items": [{"answer": big}]})
        assert status == 200 and body["scores"][0]["answer_truncated"] is True
        assert executor.functions == ["cut_texts"]
        status, body = call(address, "POST", "/score", {"items": [{"answer": 3}], "pad": big})
        assert status == 422 and body["detail"][0]["loc"] == ["items", 0, "answer"]
        status, body = call(address, "POST", "/get_reward", {"query": [big], "prompts": []})
        assert status == 422 and "same length" in body["detail"]
        small = call(address, "POST", "/score", {"items": [{"answer": "A paper."}]})
        assert small[0] == 200 and len(executor.functions) == 3  # small bodies: parsed here
        schema = call(address, "GET", "/openapi.json")[1]
        assert "requestBody" in schema["paths"]["/score"]["post"]
