"""``train cycle`` rewarded by the LLM reviewer behind a real loopback server: the reviewer is
built from the config, its unparseable answers leave papers unscored (never 0), and an input
with fewer than two scored papers is skipped as unscored."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cycle_samples import write_data

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.completions import extract_schema
from papergym.jsonl import read_jsonl
from papergym.settings.train import TrainConfig
from papergym.train.cycle.records import Paper
from papergym.train.cycle.reviewers import build_scorer
from papergym.train.cycle.run import run_cycle
from support.reviewer import ScriptedReviewer, review_answer


class ByTextReviewer(ScriptedReviewer):
    """Rates each paper by a hash of its text; a paper whose hash is a multiple of 3 gets
    prose with no JSON (unparseable after the layer's repairs)."""

    def __call__(self, request: dict[str, Any]) -> Any:
        with self._lock:
            self.requests.append(request)
        text = " ".join(str(m.get("content", "")) for m in request["messages"][-1:])
        digest = int(hashlib.sha256(text.encode()).hexdigest(), 16)
        if extract_schema(request) is None:
            return "meta"
        if digest % 3 == 0:
            return "A fine paper; I would give it a seven."
        return review_answer((1, 3, 5, 6, 8, 10)[digest % 6], self.profile_of(request))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.responder = ByTextReviewer()
        yield running


def test_a_round_rewarded_by_the_llm_reviewer(
    tmp_path: Path, tiny_model: Path, server: FakeOpenAIServer
) -> None:
    data = write_data(tmp_path / "data", count=3)
    config = TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "model": {"name_or_path": str(tiny_model), "dtype": "float32"},
            "lora": {"r": 4, "alpha": 8},
            "llm": {
                "default": {
                    "model": "reviewer-m",
                    "base_url": server.base_url,
                    "retry_base_delay": 0.0,
                    "repair_attempts": 0,
                },
                "cache": False,
            },
            "review": {"reviewers": 1, "meta_review": False},
            "cycle": {
                "data": str(data),
                "rounds": 1,
                "input_fraction": 1.0,
                "temperature": 1.0,
                "max_new_tokens": 12,
                "reviewer": "llm",
                "watch": "structure",
                "learning_rate": 1e-3,
                "steps": 1,
                "batch_size": 2,
                "gradient_accumulation_steps": 1,
                "max_length": 256,
            },
        }
    )
    reward = build_scorer("llm", config)
    watch = build_scorer("structure", config)
    (metrics,) = run_cycle(config, reward, watch)["rounds"]
    papers = read_jsonl(tmp_path / "run" / "round-1" / "papers.jsonl", Paper)
    unscored = [p for p in papers if p.score is None]
    assert len(papers) == 9 and metrics["unscored_papers"] == len(unscored)
    assert all(p.reason and "unscored" in p.reason for p in unscored)  # a reason, not a 0
    assert all(p.watch_score is not None for p in papers)  # the watch scored every paper
    assert unscored, "the scripted reviewer garbles about a third of the reviews"
    expected = sum(
        1
        for n in ("p0", "p1", "p2")
        if sum(p.score is not None for p in papers if p.input_id == n) < 2
    )
    assert metrics["skipped_unscored"] == expected
    assert metrics["pairs"] + metrics["skipped_tie"] + metrics["skipped_unscored"] == 3
    assert server.responder.review_requests()  # real requests reached the server


def test_a_reviewer_endpoint_that_fails_leaves_the_round_unfinished(
    tmp_path: Path, tiny_model: Path, server: FakeOpenAIServer
) -> None:
    from papergym.train.cycle.run import ReviewerUnreachable

    data = write_data(tmp_path / "data", count=2)
    config = TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "model": {"name_or_path": str(tiny_model), "dtype": "float32"},
            "lora": {"r": 4, "alpha": 8},
            "llm": {
                "default": {
                    "model": "reviewer-m",
                    "base_url": server.base_url,
                    "retry_base_delay": 0.0,
                    "max_retries": 0,
                },
                "cache": False,
            },
            "review": {"reviewers": 1, "meta_review": False},
            "cycle": {
                "data": str(data),
                "rounds": 1,
                "input_fraction": 1.0,
                "max_new_tokens": 8,
                "reviewer": "llm",
                "watch": "none",
                "steps": 1,
                "batch_size": 2,
                "gradient_accumulation_steps": 1,
                "max_length": 256,
            },
        }
    )
    server.fail(500, times=1000)  # the reviewer's endpoint is down for the whole round
    with pytest.raises(ReviewerUnreachable, match="not reviewed"):
        run_cycle(config, build_scorer("llm", config), None)
    # it used to finish the round with every paper "unscored" and no pair: a resume skipped it
    round_dir = tmp_path / "run" / "round-1"
    assert not (round_dir / "metrics.json").exists()
    assert not (round_dir / "papers.jsonl").exists()
    server.clear_script()  # it is back: the same call finishes the round
    (metrics,) = run_cycle(config, build_scorer("llm", config), None)["rounds"]
    assert metrics["papers"] == 6 and (round_dir / "metrics.json").is_file()


class TheoryDown(ByTextReviewer):
    """As :class:`ByTextReviewer`, but the theory reviewer's endpoint fails (HTTP 500)."""

    def __call__(self, request: dict[str, Any]) -> Any:
        if extract_schema(request) is not None and self.profile_of(request) == "theory":
            raise RuntimeError("the endpoint is down")
        return super().__call__(request)


def test_a_round_whose_papers_lost_some_reviews_to_the_endpoint_is_unfinished(
    tmp_path: Path, tiny_model: Path, server: FakeOpenAIServer
) -> None:
    """Issue 20 item 7: papers scored from 1 of their 2 reviews, the other's endpoint having
    failed, were kept as the round's result."""
    from papergym.train.cycle.run import ReviewerUnreachable

    data = write_data(tmp_path / "data", count=2)
    config = TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "model": {"name_or_path": str(tiny_model), "dtype": "float32"},
            "lora": {"r": 4, "alpha": 8},
            "llm": {
                "default": {
                    "model": "reviewer-m",
                    "base_url": server.base_url,
                    "retry_base_delay": 0.0,
                    "max_retries": 0,
                    "repair_attempts": 0,
                },
                "cache": False,
            },
            "review": {"reviewers": 2, "meta_review": False},
            "cycle": {
                "data": str(data),
                "rounds": 1,
                "input_fraction": 1.0,
                "max_new_tokens": 8,
                "reviewer": "llm",
                "watch": "none",
                "steps": 1,
                "batch_size": 2,
                "gradient_accumulation_steps": 1,
                "max_length": 256,
            },
        }
    )
    server.responder = TheoryDown()
    with pytest.raises(ReviewerUnreachable, match="unreachable"):
        run_cycle(config, build_scorer("llm", config), None)
    assert not (tmp_path / "run" / "round-1" / "papers.jsonl").exists()
