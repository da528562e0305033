from __future__ import annotations

from pathlib import Path

import pytest

from papergym.fetch.http import FetchError, PoliteClient
from papergym.fetch.settings import FetchSection
from support.arxiv_server import ArxivServer, Fault


class FakeTime:
    """A clock that only moves when the client sleeps: the waits are what it asked for."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def _client(settings: FetchSection, time: FakeTime) -> PoliteClient:
    return PoliteClient(settings, sleep=time.sleep, clock=time.clock)


def test_every_request_waits_the_delay_and_names_itself(arxiv: ArxivServer) -> None:
    time = FakeTime()
    settings = FetchSection(base_url=arxiv.base_url, delay_s=3, user_agent="Tester (me@x.org)")
    client = _client(settings, time)
    for _ in range(3):
        client.get_text(f"{arxiv.base_url}/oai2?verb=GetRecord&identifier=oai:arXiv.org:x")
    assert time.sleeps == [3.0, 3.0]  # none before the first request
    assert [agent for _, agent in arxiv.requests] == ["Tester (me@x.org)"] * 3


def test_503_is_retried_after_the_servers_retry_after(arxiv: ArxivServer, tmp_path: Path) -> None:
    arxiv.faults["2401.01234"] = [Fault(503, retry_after="7"), Fault(429)]
    time = FakeTime()
    settings = FetchSection(base_url=arxiv.base_url, delay_s=0, backoff_s=2, max_retries=3)
    target = tmp_path / "eprint"
    size = _client(settings, time).download(f"{arxiv.base_url}/e-print/2401.01234v2", target).size
    assert size == target.stat().st_size > 0
    assert time.sleeps == [7.0, 4.0]  # Retry-After beats 2 s; then 2 s doubled
    assert len(arxiv.paths("/e-print/")) == 3


def test_retries_are_bounded_and_the_reason_kept(arxiv: ArxivServer, tmp_path: Path) -> None:
    arxiv.faults["2401.01234"] = [Fault(503)] * 5
    settings = FetchSection(base_url=arxiv.base_url, delay_s=0, backoff_s=0, max_retries=2)
    with pytest.raises(FetchError, match="HTTP 503"):
        _client(settings, FakeTime()).download(
            f"{arxiv.base_url}/e-print/2401.01234", tmp_path / "eprint"
        )
    assert len(arxiv.paths("/e-print/")) == 3
    assert not (tmp_path / "eprint").exists()


def test_a_body_cut_short_is_never_kept(arxiv: ArxivServer, tmp_path: Path) -> None:
    arxiv.faults["2401.01234"] = [Fault(cut=10)] * 3
    settings = FetchSection(base_url=arxiv.base_url, delay_s=0, backoff_s=0, max_retries=2)
    with pytest.raises(FetchError, match="closed early"):
        _client(settings, FakeTime()).download(
            f"{arxiv.base_url}/e-print/2401.01234", tmp_path / "eprint"
        )
    assert not (tmp_path / "eprint").exists()


def test_a_404_is_not_retried(arxiv: ArxivServer) -> None:
    settings = FetchSection(base_url=arxiv.base_url, delay_s=0, backoff_s=0, max_retries=3)
    with pytest.raises(FetchError, match="HTTP 404"):
        _client(settings, FakeTime()).get_text(f"{arxiv.base_url}/nowhere")
    assert len(arxiv.requests) == 1


def test_a_refused_connection_fails_at_once_without_back_off() -> None:
    # nothing listens there (a wrong --base-url): minutes of polite back-off would help nobody
    import socket

    with socket.socket() as probe:  # a free port, closed again: connections to it are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    time = FakeTime()
    settings = FetchSection(base_url=f"http://127.0.0.1:{port}", delay_s=0, backoff_s=10)
    with pytest.raises(FetchError, match="refused"):
        _client(settings, time).get_text(f"http://127.0.0.1:{port}/api/query?id_list=x")
    assert time.sleeps == []
