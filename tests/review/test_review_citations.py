"""The LLM reviewer's citations: a strength or weakness may quote the paper; a quote the paper
does not hold is recorded and counted, and the rating stands."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.completions import extract_schema
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.review.records import PaperReview
from papergym.review.report import summary
from papergym.review.reviewer import LLMReviewer
from papergym.review.reward import score_of, trl_logs
from support.reviewer import META_REVIEW, review_answer

PAPER = """# Sparse Adapters

ABSTRACT

We propose sparse adapters that fine-tune a model quickly.

EXPERIMENTS

We compare with LoRA and full fine-tuning on GLUE and SuperGLUE.
"""
COPIED = "we compare with  LoRA and full fine‑tuning on GLUE"  # case, spacing, a typographic hyphen
INVENTED = "We compare with twelve baselines on ImageNet."


def _responder(strength_quote: str | None, weakness_quote: str | None) -> Any:
    def respond(request: dict[str, Any]) -> Any:
        if extract_schema(request) is None:
            return META_REVIEW
        answer = review_answer(6, "scripted")
        answer["strengths"] = [
            {"point": "Strong comparison.", "quote": strength_quote},
            {"point": "Simple method.", "quote": None},
        ]
        answer["weaknesses"] = [{"point": "Few datasets.", "quote": weakness_quote}]
        return answer

    return respond


def _review(strength_quote: str | None, weakness_quote: str | None) -> PaperReview:
    with FakeOpenAIServer(responder=_responder(strength_quote, weakness_quote)) as server:
        backend = BackendConfig(model="r", base_url=(server.base_url,), retry_base_delay=0.0)
        reviewer = LLMReviewer(LLMClient(LLMConfig(default=backend, cache=False)), reviewers=2)

        async def go() -> PaperReview:
            try:
                return await reviewer.review("p1", PAPER)
            finally:
                await reviewer.llm.aclose()

        return asyncio.run(go())


def test_a_reviewer_that_copies_its_quotes_has_no_unbacked_citation() -> None:
    record = _review(COPIED, None)
    assert record.score == 6.0
    for review in record.reviews:
        assert review.strengths == ["Strong comparison.", "Simple method."]
        assert [(c.claim, c.index, c.found) for c in review.citations] == [("strength", 0, True)]
        assert review.unbacked_citations == 0
    assert trl_logs([score_of(record)])["review/unbacked_citation_rate"] == 0.0


def test_a_reviewer_that_invents_a_quote_is_counted_and_its_rating_stands(tmp_path: Path) -> None:
    record = _review(COPIED, INVENTED)
    assert record.score == 6.0  # the rating rule is unchanged
    for review in record.reviews:
        assert [(c.claim, c.found) for c in review.citations] == [
            ("strength", True),
            ("weakness", False),
        ]
        assert review.citations[1].quote == INVENTED  # recorded, to inspect
    counted = summary([record], resumed=0, failed=0)
    assert (counted["citations"], counted["unbacked_citations"]) == (4, 2)
    score = score_of(record)
    assert (score.citations, score.unbacked_citations) == (4, 2)
    assert trl_logs([score])["review/unbacked_citation_rate"] == pytest.approx(0.5)


def test_reviews_that_quote_nothing_report_no_rate() -> None:
    record = _review(None, " … ")  # an empty quote is no citation
    assert all(r.citations == [] for r in record.reviews)
    assert "review/unbacked_citation_rate" not in trl_logs([score_of(record)])
