"""The LLM reviewer end to end through a real loopback OpenAI-compatible server with a scripted
reviewer: independent calls, schema-enforced reviews, unscored reviews, decisions."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.completions import extract_schema
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.review.records import ICLR, PaperReview
from papergym.review.reviewer import LLMReviewer, answer_schema, load_profiles, panel
from support.reviewer import META_REVIEW, ScriptedReviewer

PAPER = """# Sparse Adapters for Fast Fine-Tuning

**Jane Doe, John Roe**
University of Somewhere
jane@somewhere.edu

ABSTRACT

We propose sparse adapters that fine-tune a model quickly. Experiments on two benchmarks show
that they match full fine-tuning at a tenth of the cost.

1 INTRODUCTION

Fine-tuning large models is costly. We introduce sparse adapters and evaluate them.

2 METHOD

The adapter is a sparse low-rank update trained with a masked objective.

3 EXPERIMENTS

We compare with LoRA and full fine-tuning on GLUE and SuperGLUE.
"""


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def client(server: FakeOpenAIServer, **backend: Any) -> LLMClient:
    settings: dict[str, Any] = {"model": "reviewer-m", "base_url": server.base_url}
    settings.update({"retry_base_delay": 0.0, "max_retries": 0, **backend})
    return LLMClient(LLMConfig(default=BackendConfig.model_validate(settings), cache=False))


def review(reviewer: LLMReviewer, text: str = PAPER, paper_id: str = "p1") -> PaperReview:
    async def go() -> PaperReview:
        try:
            return await reviewer.review(paper_id, text)
        finally:
            await reviewer.llm.aclose()

    return asyncio.run(go())


def test_review_llm_reviewers_are_independent_calls_with_distinct_profiles_and_seeds(
    server: FakeOpenAIServer,
) -> None:
    script = ScriptedReviewer(
        ratings={"empirical": 8, "theory": 6, "clarity": 5, "senior-skeptic": 3}
    )
    server.responder = script
    reviewer = LLMReviewer(client(server), reviewers=4, seed=10)
    record = review(reviewer)
    requests = script.review_requests()
    assert len(requests) == 4  # one call per reviewer, never one completion for all
    assert all(r.get("n", 1) == 1 for r in requests)
    assert sorted(script.profile_of(r) for r in requests) == sorted(p.name for p in load_profiles())
    assert sorted(r["seed"] for r in requests) == [10, 11, 12, 13]
    assert {r.reviewer: r.rating for r in record.reviews} == {
        "empirical": 8,
        "theory": 6,
        "clarity": 5,
        "senior-skeptic": 3,
    }
    assert record.score == pytest.approx(5.5)
    assert record.decision == "accept"  # 5.5 >= the default threshold 5.5
    assert record.meta_review == META_REVIEW
    assert record.baseline is False and record.reviewer_model == "reviewer-m"
    # anonymised before review: the author block never reaches the server
    assert all("Jane Doe" not in str(r["messages"]) for r in script.requests)
    assert any(removal.kind == "author-block" for removal in record.removed)


def test_review_llm_schema_restricts_rating_to_the_venue_scale(server: FakeOpenAIServer) -> None:
    script = ScriptedReviewer()
    server.responder = script
    review(LLMReviewer(client(server), reviewers=1, meta_review=False))
    schema = extract_schema(script.review_requests()[0])
    assert schema["properties"]["rating"]["enum"] == [1, 3, 5, 6, 8, 10]
    assert schema["properties"]["soundness"]["enum"] == [1, 2, 3, 4]
    assert schema["properties"]["confidence"]["enum"] == [1, 2, 3, 4, 5]


def test_review_llm_unparseable_truncated_and_off_scale_reviews_are_unscored(
    server: FakeOpenAIServer,
) -> None:
    script = ScriptedReviewer(
        ratings={"clarity": 10},
        faults={"empirical": "garbage", "theory": "truncated", "senior-skeptic": "off-scale"},
    )
    server.responder = script
    record = review(LLMReviewer(client(server, repair_attempts=1), reviewers=4))
    assert [r.reviewer for r in record.reviews] == ["clarity"]
    reasons = {u.reviewer: u.reason for u in record.unscored}
    assert reasons["empirical"].startswith("unparseable:")
    assert reasons["theory"].startswith("truncated:")
    assert reasons["senior-skeptic"].startswith("unparseable:")
    assert "one of [1, 3, 5, 6, 8, 10] (got 7)" in reasons["senior-skeptic"]
    # the score is the mean of the rest: a 10 stays 10, unscored reviews are not averaged in as 0
    assert record.score == 10.0
    assert record.decision == "accept"
    # the garbage answer was re-asked with the repair message (1 + 1 repair), the truncated one
    # once more with a larger budget
    by_profile = [script.profile_of(r) for r in script.review_requests()]
    assert by_profile.count("empirical") == 2
    assert by_profile.count("theory") == 2


def test_review_llm_repaired_off_scale_rating_is_scored(server: FakeOpenAIServer) -> None:
    script = ScriptedReviewer(ratings={"empirical": 3}, faults={"empirical": "off-scale-once"})
    server.responder = script
    record = review(LLMReviewer(client(server), reviewers=1, meta_review=False))
    assert [r.rating for r in record.reviews] == [3]
    assert len(script.review_requests()) == 2


def test_review_llm_all_reviews_unscored_leaves_the_paper_unscored(
    server: FakeOpenAIServer,
) -> None:
    script = ScriptedReviewer(faults={p.name: "garbage" for p in load_profiles()})
    server.responder = script
    record = review(LLMReviewer(client(server, repair_attempts=0), reviewers=4))
    assert record.reviews == [] and len(record.unscored) == 4
    assert record.score is None and record.decision is None  # never 0, never "reject"
    assert record.meta_review is None
    assert len(script.requests) == 4  # no meta-review call without a scored review


@pytest.mark.parametrize(("threshold", "decision"), [(5.0, "accept"), (6.0, "reject")])
def test_review_llm_decision_comes_from_the_threshold(
    server: FakeOpenAIServer, threshold: float, decision: str
) -> None:
    server.responder = ScriptedReviewer(ratings={"empirical": 5, "theory": 6})
    record = review(LLMReviewer(client(server), reviewers=2, threshold=threshold))
    assert record.score == 5.5
    assert record.decision == decision and record.threshold == threshold


def test_review_llm_long_paper_is_fitted_by_the_recorded_rule(server: FakeOpenAIServer) -> None:
    script = ScriptedReviewer()
    server.responder = script
    body = " ".join(f"word{i}" for i in range(3000))
    text = f"1 INTRODUCTION\n\n{body}\n\nREFERENCES\n\n{body}\n"
    record = review(
        LLMReviewer(client(server), reviewers=1, max_paper_words=1000, meta_review=False)
    )
    assert record.fit is None  # PAPER is short
    record = review(
        LLMReviewer(client(server), reviewers=1, max_paper_words=1000, meta_review=False), text
    )
    assert record.fit is not None and "dropped references" in record.fit
    sent = str(script.review_requests()[-1]["messages"][0]["content"])
    assert "word900 " in sent and "word1500" not in sent and "[…]" in sent


def test_review_llm_panel_cycles_profiles_with_distinct_names_and_seeds() -> None:
    chosen = panel(6, load_profiles(), seed=0)
    names = [name for name, _, _ in chosen]
    assert len(set(names)) == 6 and names[4] == "empirical-2"
    assert [seed for _, _, seed in chosen] == list(range(6))


def test_review_llm_answer_schema_refuses_off_scale_ratings() -> None:
    schema = answer_schema(ICLR)
    good = {
        "summary": "s",
        "strengths": [],
        "weaknesses": [],
        "questions": [],
        "soundness": 1,
        "presentation": 4,
        "contribution": 2,
        "rating": 10,
        "confidence": 5,
    }
    assert schema.model_validate(good).rating == 10
    with pytest.raises(ValueError):
        schema.model_validate({**good, "rating": 7})
