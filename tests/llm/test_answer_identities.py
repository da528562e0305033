"""Every cache of answers knows which model answered (issue 20, item 1: "check every other
cache"): the rubric reward's scores by its judge's identity, the review reward's by its
reviewer's, each with the normalised endpoint and no credential; the offline reviewer by its
fitted file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible_judge import first_span
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.review.offline import OfflineReviewer, baseline_json, load_baseline
from papergym.review.reviewer import LLMReviewer
from papergym.review.reward import ReviewReward, reviewer_identity
from papergym.reward.judge import RubricJudge
from papergym.reward.reward import RubricReward, judge_identity
from support.plans_server import responder as judge_responder
from support.reward_load import mixed_instances

SECRET = "sk-secret-0123456789"
PORT_1 = "http://127.0.0.1:8001/v1"
SPELLINGS = (
    PORT_1,
    "http://127.0.0.1:8001/v1/",
    f"http://user:{SECRET}@127.0.0.1:8001/v1",
    f"HTTP://127.0.0.1:8001/v1?api-key={SECRET}",
)


def _llm(url: str, **backend: Any) -> LLMClient:
    return LLMClient(LLMConfig(default=BackendConfig(model="m", base_url=(url,), **backend)))


def test_the_llm_judges_identity_has_the_endpoint_normalised_and_no_credential() -> None:
    identities = {judge_identity(RubricJudge(_llm(url))) for url in SPELLINGS}
    assert len(identities) == 1  # one server, however its URL is written
    (identity,) = identities
    assert SECRET not in identity and "user" not in identity and "127.0.0.1:8001/v1" in identity
    other = judge_identity(RubricJudge(_llm("http://127.0.0.1:8002/v1")))
    assert other != identity
    assert judge_identity(RubricJudge(_llm(PORT_1, max_retries=0, timeout=5))) == identity


def test_a_rubric_reward_judging_with_a_judge_on_another_server_judges_again() -> None:
    instance = mixed_instances(1)[0]
    answer = instance.reference_answer

    def all_met(request: dict[str, Any]) -> Any:
        verdicts = judge_responder(request)
        assert isinstance(verdicts, dict)
        return {
            "verdicts": [
                v | {"quote": first_span(request), "verdict": 1} for v in verdicts["verdicts"]
            ]
        }

    with (
        FakeOpenAIServer(responder=judge_responder) as strict,
        FakeOpenAIServer(responder=all_met) as lenient,
    ):
        reward = RubricReward(RubricJudge(_llm(strict.base_url)))
        first = reward.score(instance, answer)
        reward.judge = RubricJudge(_llm(lenient.base_url))  # the same model name "m"
        second = reward.score(instance, answer)
        assert lenient.request_count > 0
        assert first.value == 0.0 and second.value == 1.0


def test_the_llm_reviewers_identity_has_the_endpoint_normalised_and_no_credential() -> None:
    identities = {LLMReviewer(_llm(url), reviewers=2).identity for url in SPELLINGS}
    assert len(identities) == 1
    (identity,) = identities
    assert SECRET not in identity and "user" not in identity
    assert LLMReviewer(_llm("http://127.0.0.1:8002/v1"), reviewers=2).identity != identity


def test_two_fitted_baselines_of_one_kind_are_two_reviewers(tmp_path: Path) -> None:
    """Before: both were "baseline:tfidf-ridge", so a review reward whose reviewer was swapped
    for another fit kept serving the first fit's ratings."""
    shipped = load_baseline()
    other = shipped.model_copy(update={"intercept": shipped.intercept + 2.0})
    path = tmp_path / "other-baseline.json"
    path.write_text(baseline_json(other), encoding="utf-8")
    first, second = OfflineReviewer(), OfflineReviewer(path)
    assert first.name == second.name
    assert reviewer_identity(first) != reviewer_identity(second)
    assert reviewer_identity(OfflineReviewer()) == reviewer_identity(first)

    paper = "We propose a new method and evaluate it on three benchmarks. " * 20
    reward = ReviewReward(first)
    before = reward.score(paper)
    reward.reviewer = second
    after = reward.score(paper)
    assert after.rating is not None and before.rating is not None
    assert after.rating > before.rating
