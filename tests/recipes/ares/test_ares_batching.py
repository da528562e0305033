"""The offline domain step embeds the documents in flight in batches, choosing the same domains."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from papergym.embed import embed
from papergym.jsonl import read_jsonl
from papergym.recipes.ares.batching import BatchingEmbedder
from papergym.recipes.ares.build import AresJob, make_runner, open_corpus
from papergym.recipes.ares.domains import EmbeddingDomains
from papergym.recipes.ares.record import AresDraft

DEMO = Path(__file__).resolve().parents[3] / "examples" / "corpus"


def fake_vectors(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """One row per text that names it: row i is [len(text), hash-ish]."""
    return np.array([[len(t), sum(map(ord, t)) % 997] for t in texts], dtype=np.float32)


def test_each_caller_gets_its_own_rows_from_fewer_calls() -> None:
    calls: list[int] = []
    gate = threading.Event()

    def slow(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        calls.append(len(texts))
        gate.wait(5)
        return fake_vectors(texts)

    batching = BatchingEmbedder(slow, slots=1)
    requests = [[f"doc {i} chunk {j}" * (i + 1) for j in range(i % 3 + 1)] for i in range(12)]
    with ThreadPoolExecutor(12) as pool:
        futures = [pool.submit(batching, r) for r in requests]
        time.sleep(0.2)  # the first caller is embedding; the others pile up behind it
        gate.set()
        results = [f.result() for f in futures]
    for request, result in zip(requests, results, strict=True):
        assert np.array_equal(result, fake_vectors(request))
    assert len(calls) == batching.calls < len(requests)
    assert sum(calls) == sum(len(r) for r in requests)


def test_a_failed_call_is_raised_in_its_caller_and_frees_the_slot() -> None:
    failures = [RuntimeError("model gone")]

    def flaky(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if failures:
            raise failures.pop()
        return fake_vectors(texts)

    batching = BatchingEmbedder(flaky, slots=1)
    with pytest.raises(RuntimeError, match="model gone"):
        batching(["a"])
    assert np.array_equal(batching(["b"]), fake_vectors(["b"]))  # not stuck behind the failure


def test_the_runner_batches_and_chooses_the_domains_of_one_call_per_document(
    tmp_path: Path,
) -> None:
    config = AresJob.model_validate(
        {"ares": {"prefilter": False, "shard_size": 5}, "build": {"limit": 10}}
    )
    calls = 0

    def counted(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        nonlocal calls
        calls += 1
        return embed(texts)

    corpus = open_corpus([DEMO / "web-pages.jsonl", DEMO / "papers.jsonl"], config.ares)
    result = asyncio.run(make_runner(corpus, tmp_path / "o", config, None, embedder=counted).run())
    assert result.kept == 10
    drafts = [
        d for p in sorted((tmp_path / "o").glob("kept-*.jsonl")) for d in read_jsonl(p, AresDraft)
    ]
    assert calls < 1 + len(drafts)  # the descriptions once, then fewer calls than documents
    one_by_one = EmbeddingDomains(config.ares, embed)
    for draft in drafts:
        alone = one_by_one.choose(draft.document.text)
        assert draft.domain == alone.domain, draft.document.id
        assert draft.domain_choice is not None and alone.score is not None
        assert draft.domain_choice.score == pytest.approx(alone.score, abs=2e-4)
