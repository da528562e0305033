"""Fixtures of the fetch tests: a loopback arXiv and settings that do not wait."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

import pytest

from papergym.fetch.settings import FetchSection
from support.arxiv_server import PAPER_TEX, ArxivServer, Paper


@pytest.fixture
def arxiv() -> Iterator[ArxivServer]:
    """A server knowing a new-style and an old-style paper."""
    papers = [
        Paper("2401.01234", version=2),
        Paper(
            "hep-th/9901001",
            categories=("hep-th",),
            licence=None,
            published="1999-01-05",
            eprint=gzip.compress(PAPER_TEX.replace(b"Things", b"Strings")),
        ),
    ]
    with ArxivServer(papers) as server:
        yield server


@pytest.fixture
def quick(arxiv: ArxivServer) -> FetchSection:
    """Settings pointing at the loopback server, with no delay and no back-off."""
    return FetchSection(base_url=arxiv.base_url, delay_s=0, backoff_s=0, max_retries=2)
