"""Corpora and scripted servers for the ARES runner, shard and engine tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ares_texts import GOOD

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.completions import RawResponse, error_response
from papergym.jsonl import read_jsonl
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.recipes.ares.build import AresJob
from papergym.recipes.ares.scripted import AresScript
from papergym.records import Instance

SHORT = "Too short to ask anything about."
FLAKY = "FLAKY"  # a document holding this word gets 500s from a FlakyScript server


def good_text(index: int, marker: str = "") -> str:
    """GOOD with a first line of its own, so every document is distinct (not a duplicate)."""
    return (
        f"Managing high blood pressure at home, note {index} {marker}\n\n" + GOOD.split("\n", 1)[1]
    )


def write_corpus(
    path: Path, count: int, *, short_every: int = 4, flaky: frozenset[int] = frozenset()
) -> Path:
    """``count`` rows: every ``short_every``-th one too short (a prefilter drop), the rest good."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            text = f"{SHORT} ({i})" if short_every and i % short_every == short_every - 1 else None
            text = text or good_text(i, FLAKY if i in flaky else "")
            handle.write(json.dumps({"id": f"d{i:03d}", "text": text}) + "\n")
    return path


@dataclass
class FlakyScript:
    """AresScript, except that documents marked FLAKY get HTTP 500 while ``down`` is true."""

    down: bool = True
    script: AresScript = field(default_factory=AresScript)

    def __call__(self, request: dict[str, Any]) -> str | dict[str, Any] | RawResponse:
        prompt = json.dumps(request.get("messages", []))
        if self.down and FLAKY in prompt:
            return error_response(500, "scripted outage")
        return self.script(request)


def llm_config(
    server: FakeOpenAIServer, cache_dir: Path | None, retries: int = 2, **ares: Any
) -> AresJob:
    llm = LLMConfig(
        default=BackendConfig(
            model="m", base_url=server.base_url, retry_base_delay=0.01, max_retries=retries
        ),
        cache=cache_dir is not None,
        cache_dir=cache_dir,
    )
    return AresJob(llm=llm, ares=AresJob().ares.model_copy(update=ares))


@contextmanager
def scripted_server(responder: Any = None) -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder or AresScript()) as server:
        yield server


def instances(out: Path) -> list[Instance]:
    """Every instance of a build's shards, sorted by id (the shard order is not compared)."""
    found = [
        i for path in sorted(out.glob("instances-*.jsonl")) for i in read_jsonl(path, Instance)
    ]
    return sorted(found, key=lambda i: i.id)
