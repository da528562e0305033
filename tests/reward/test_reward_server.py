"""The reward server over real HTTP on 127.0.0.1: limits, cancellation, shutdown, auth, logs, load."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn
from typer.testing import CliRunner

from papergym.cli import app as cli
from papergym.export.verl import ground_truth
from papergym.netutil import bind
from papergym.records import Instance, Verdict
from papergym.reward.offline import OfflineJudge
from papergym.reward.reward import Judge, RubricReward
from papergym.reward.server import RewardServer, create_app
from support.reward_load import LoadRequest, drive, mixed_instances, mixed_requests

Address = tuple[str, int]


@contextmanager
def served(app: Any) -> Iterator[Address]:
    """``app`` under uvicorn on a thread, on a free port of 127.0.0.1."""
    sock = bind("127.0.0.1", 0)
    address = sock.getsockname()[:2]
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2
    )
    server = RewardServer(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    try:
        yield address
    finally:
        server.should_exit = True
        thread.join(10)


def call(
    address: Address,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10,
) -> tuple[int, Any]:
    connection = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        connection.close()


class InstantJudge:
    """A judge that passes every criterion at once: for tests about the server, not the judge."""

    name = "instant"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        return [Verdict(criterion_id=c.id, passed=True) for c in instance.rubric.specific], []


class WordJudge:
    """A cheap judge that reads the answer: a criterion passes when most of its words are in it.

    Which rubric grades an answer decides its score, as with the real judges, so a score served
    under the wrong rubric shows; the load test then measures the server, not MiniLM.
    """

    name = "words"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        have = set(re.findall(r"[a-z]+", answer.lower()))
        verdicts = []
        for criterion in instance.rubric.specific:
            wanted = set(re.findall(r"[a-z]{4,}", criterion.text.lower())) - {"plan", "specifies"}
            met = len(wanted & have) >= 0.6 * len(wanted)
            verdicts.append(Verdict(criterion_id=criterion.id, passed=met))
        await asyncio.sleep(0.001)  # a judgement takes a moment: requests overlap on the loop
        return verdicts, []


class SlowJudge:
    """A judge that takes 30 s and records whether its work was cancelled."""

    name = "slow"

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        self.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return [], []


@pytest.fixture(scope="module")
def instance() -> Instance:
    return mixed_instances(1)[0]


def score_body(instance: Instance, answer: str) -> dict[str, Any]:
    return {"items": [{"ground_truth": ground_truth(instance), "answer": answer}]}


# --- item 16: readiness, request log, port, help -----------------------------------------------


def test_health_is_503_until_the_judge_is_loaded_and_scoring_waits_for_it(
    instance: Instance,
) -> None:
    loaded = threading.Event()
    app = create_app(RubricReward(InstantJudge()), load=lambda: loaded.wait(10) and None)
    with served(app) as address:
        status, body = call(address, "GET", "/health")
        assert (status, body["status"]) == (503, "loading")
        answer: list[tuple[int, Any]] = []
        waiting = threading.Thread(
            target=lambda: answer.append(call(address, "POST", "/score", score_body(instance, "x")))
        )
        waiting.start()
        time.sleep(0.3)
        assert not answer, "a score was served before the judge was loaded"
        loaded.set()
        waiting.join(5)
        assert answer and answer[0][0] == 200 and answer[0][1]["scores"][0]["value"] == 1.0
        assert call(address, "GET", "/health") == (200, {"status": "ok", "judge": "instant"})


def test_a_judge_that_fails_to_load_is_reported_by_health(instance: Instance) -> None:
    def fail() -> None:
        raise OSError("no model at /nowhere")

    errors: list[str] = []
    app = create_app(RubricReward(InstantJudge()), load=fail, on_load_error=errors.append)
    with served(app) as address:
        deadline = time.monotonic() + 5
        while not errors and time.monotonic() < deadline:
            time.sleep(0.02)
        status, body = call(address, "GET", "/health")
        assert status == 503 and body["status"] == "failed" and "no model" in body["error"]
        status, body = call(address, "POST", "/score", score_body(instance, "x"))
        assert status == 503 and "failed to load" in body["detail"]


def test_one_log_line_per_request_with_status_latency_and_counts(
    instance: Instance, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="papergym.reward.server")
    with served(create_app(RubricReward(InstantJudge()))) as address:
        body = LoadRequest("/get_reward", ()).body()  # shape only; real items below
        assert json.loads(body) == {"query": [], "prompts": [], "labels": []}
        label = ground_truth(instance)
        status, _ = call(
            address,
            "POST",
            "/get_reward",
            {"query": ["Q a", "Q b"], "prompts": ["Q ", "Q "], "labels": [label, label]},
        )
        assert status == 200
        assert call(address, "POST", "/score", {"items": "nope"})[0] == 422
    lines = [r.getMessage() for r in caplog.records if r.name == "papergym.reward.server"]
    assert any(
        re.fullmatch(r"127\.0\.0\.1:\d+ POST /get_reward 200 [\d.]+ ms scored=2 unscored=0", line)
        for line in lines
    ), lines
    assert any(re.fullmatch(r"127\.0\.0\.1:\d+ POST /score 422 [\d.]+ ms", line) for line in lines)


def test_a_taken_port_is_one_line_and_exit_2() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        result = CliRunner().invoke(
            cli, ["serve-reward", "--judge", "offline", "--port", str(port)]
        )
    finally:
        holder.close()
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: port {port} on 127.0.0.1 is in use (another server?); choose one with --port"
    )


def test_help_documents_the_bodies_with_curl_and_a_port_other_than_vllms() -> None:
    result = CliRunner().invoke(cli, ["serve-reward", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = result.output
    for needed in ('"query"', '"prompts"', '"labels"', '"items"', '"ground_truth"', "curl -s"):
        assert needed in text, needed
    assert re.search(r"serve\.port \(default 8765\)", text), "the default port is 8765, not 8000"
    assert "--token-env" in text and "--max-body-mb" in text and "--max-answer-chars" in text


# --- item 9: limits, cancellation, token, docs, shutdown -----------------------------------------


def test_a_body_over_the_limit_is_refused_before_it_is_read(instance: Instance) -> None:
    app = create_app(RubricReward(InstantJudge()), max_body_bytes=8000)
    with served(app) as address:
        # a 1 GB Content-Length and no body: answered at once, the body is never awaited
        with socket.create_connection(address, timeout=5) as raw:
            raw.sendall(
                b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 1000000000\r\n\r\n"
            )
            assert raw.recv(4096).startswith(b"HTTP/1.1 413")
        # a chunked body (no Content-Length) is stopped once it passes the limit
        connection = http.client.HTTPConnection(*address, timeout=5)
        chunks = (b'{"items": [' + b" " * 1000 for _ in range(16))
        connection.request("POST", "/score", body=chunks, encode_chunked=True)
        assert connection.getresponse().status == 413
        connection.close()
        # under the limit all is well
        assert len(json.dumps(score_body(instance, "fine"))) < 8000
        assert call(address, "POST", "/score", score_body(instance, "fine"))[0] == 200


def test_a_long_answer_is_cut_and_flagged_not_judged_whole(instance: Instance) -> None:
    seen: list[int] = []

    class Measuring(InstantJudge):
        async def judge(
            self, instance: Instance, answer: str
        ) -> tuple[list[Verdict], list[Verdict]]:
            seen.append(len(answer))
            return await super().judge(instance, answer)

    app = create_app(RubricReward(Measuring(), max_answer_chars=1000))
    with served(app) as address:
        status, body = call(address, "POST", "/score", score_body(instance, "word " * 100_000))
    assert status == 200 and body["scores"][0]["answer_truncated"] is True
    assert seen == [1000]


def test_a_disconnected_clients_judging_is_cancelled(
    instance: Instance, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="papergym.reward.server")
    judge = SlowJudge()
    with served(create_app(RubricReward(judge))) as address:
        body = json.dumps(score_body(instance, "a plan")).encode()
        with socket.create_connection(address, timeout=5) as raw:
            raw.sendall(
                b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            assert judge.started.wait(5)
        # the client is gone: its judging must stop, not run on for 30 s
        assert judge.cancelled.wait(3), "the judging of a disconnected client kept running"
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and not any(
            " 499 " in r.getMessage() for r in caplog.records
        ):
            time.sleep(0.02)
    assert any("POST /score 499" in r.getMessage() for r in caplog.records)


def test_another_client_waiting_on_the_same_judgement_still_gets_its_score(
    instance: Instance,
) -> None:
    """Concurrent duplicates share one judgement; its first asker leaving must not fail the rest."""

    class Steady(InstantJudge):
        async def judge(
            self, instance: Instance, answer: str
        ) -> tuple[list[Verdict], list[Verdict]]:
            await asyncio.sleep(0.6)
            return await super().judge(instance, answer)

    with served(create_app(RubricReward(Steady()))) as address:
        body = json.dumps(score_body(instance, "the same answer")).encode()
        leaver = socket.create_connection(address, timeout=5)
        leaver.sendall(
            b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        time.sleep(0.2)  # the leaver's judgement is under way
        second: list[tuple[int, Any]] = []
        waiting = threading.Thread(
            target=lambda: second.append(
                call(address, "POST", "/score", score_body(instance, "the same answer"))
            )
        )
        waiting.start()
        time.sleep(0.2)  # the second client now waits on the same judgement
        leaver.close()
        waiting.join(10)
    assert second and second[0][0] == 200 and second[0][1]["scores"][0]["value"] == 1.0


def test_a_bearer_token_guards_everything_but_health(instance: Instance) -> None:
    app = create_app(RubricReward(InstantJudge()), token="s3cret-token-123")
    with served(app) as address:
        body = score_body(instance, "x")
        assert call(address, "POST", "/score", body)[0] == 401
        wrong = {"Authorization": "Bearer nope"}
        assert call(address, "POST", "/score", body, wrong)[0] == 401
        right = {"Authorization": "Bearer s3cret-token-123"}
        assert call(address, "POST", "/score", body, right)[0] == 200
        assert call(address, "GET", "/health")[0] == 200


def test_docs_are_off_unless_asked(instance: Instance) -> None:
    paths = ("/docs", "/redoc", "/openapi.json")
    with served(create_app(RubricReward(InstantJudge()))) as address:
        assert [call(address, "GET", p)[0] for p in paths] == [404, 404, 404]
    with served(create_app(RubricReward(InstantJudge()), docs=True)) as address:
        connection = http.client.HTTPConnection(*address, timeout=5)
        for path in paths:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            assert response.status == 200, path
        connection.close()


def _start_cli(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], int]:
    """``papergym serve-reward`` in a subprocess on a free port; (process, port) once listening."""
    process = subprocess.Popen(
        [sys.executable, "-m", "papergym.cli", "serve-reward", "--port", "0", *args],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
    )
    assert process.stderr is not None
    line = process.stderr.readline()  # the start line
    found = re.search(r"listening on http://127\.0\.0\.1:(\d+) · judge (\S+)", line)
    assert found, line
    # keep reading its log (a line per request), or a full pipe would block the server
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process, int(found.group(1))


def test_sigterm_stops_a_real_server_promptly_with_exit_0(instance: Instance) -> None:
    process, port = _start_cli(
        "--judge", "offline", "--token-env", "PG_TOKEN", env={"PG_TOKEN": "a-long-test-token"}
    )
    try:
        address = ("127.0.0.1", port)
        assert call(address, "GET", "/health")[0] in (200, 503)  # open without the token
        assert call(address, "POST", "/score", score_body(instance, "x"))[0] == 401
        # a keep-alive connection left open must not hold the shutdown up
        idle = http.client.HTTPConnection(*address, timeout=5)
        idle.request("GET", "/health")
        idle.getresponse().read()
        process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        code = process.wait(timeout=10)
        assert code == 0 and time.monotonic() - started < 5
        idle.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_missing_token_variable_is_one_line_and_exit_2() -> None:
    result = CliRunner().invoke(
        cli, ["serve-reward", "--token-env", "PG_SURELY_UNSET_TOKEN", "--port", "0"]
    )
    assert result.exit_code == 2 and result.output.strip().startswith("error: --token-env")


# --- the load check: mixed rubrics, every score equal to the in-process score -------------------


def _expected(requests: list[LoadRequest], judge: Judge) -> dict[tuple[str, str], float | None]:
    """In-process scores of every distinct (rubric, answer) pair, each under its own instance id."""
    pairs = {(i.instance.id, i.answer): i for r in requests for i in r.items}
    reward = RubricReward(judge)
    scores = reward.score_many([(i.instance, i.answer) for i in pairs.values()])
    return {key: s.value for key, s in zip(pairs, scores, strict=True)}


def _check_load(
    address: Address, judge: Judge, concurrency: int, count: int, timeout: float
) -> None:
    requests = mixed_requests(mixed_instances(), count)
    expected = _expected(requests, judge)
    assert len(set(expected.values())) > 2, "the answers should score differently by rubric"
    results, _ = asyncio.run(drive(*address, requests, concurrency=concurrency, timeout=timeout))
    assert [r.status for r in results] == [200] * count, {r.error for r in results}
    wrong = [
        (item.instance.title, item.answer[:40], got, expected[(item.instance.id, item.answer)])
        for request, result in zip(requests, results, strict=True)
        for item, got in zip(request.items, result.values, strict=True)
        if got != expected[(item.instance.id, item.answer)]
    ]
    assert not wrong, f"{len(wrong)} scores differ from in-process scoring, e.g. {wrong[:3]}"


def test_32_concurrent_clients_with_mixed_rubrics_get_the_in_process_scores() -> None:
    with served(create_app(RubricReward(WordJudge()))) as address:
        _check_load(address, WordJudge(), concurrency=32, count=64, timeout=30)


@pytest.mark.slow
def test_256_concurrent_clients_against_the_cli_server_get_the_in_process_scores() -> None:
    process, port = _start_cli("--judge", "offline")
    try:
        deadline = time.monotonic() + 60
        while call(("127.0.0.1", port), "GET", "/health")[0] != 200:
            assert time.monotonic() < deadline, "the judge did not load in 60 s"
            time.sleep(0.2)
        _check_load(("127.0.0.1", port), OfflineJudge(), concurrency=256, count=512, timeout=240)
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "role"), [(["--judge", "llm"], "judge"), (["--reward", "review"], "reviewer")]
)
def test_an_unreachable_llm_endpoint_stops_the_server_before_it_listens(
    args: list[str], role: str
) -> None:
    """It used to say it was listening and ready, then leave every answer unscored."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    result = CliRunner().invoke(
        cli,
        [
            *("serve-reward", "--port", "0", *args),
            *(f"llm.default.base_url={url}", "llm.default.model=m", "llm.default.timeout=5"),
        ],
    )
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert line.startswith(f"error: {role}: ") and "unreachable" in line and "\n" not in line
    assert "listening" not in result.output
