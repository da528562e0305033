"""``papergym eval``'s judging is bounded by the LLM judge's ``max_concurrency``, not by the
reward's own 32-answer bound (which held an LLM judge at 64 requests in flight)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from papergym.eval.evaluate import eval_reward, score_answers
from papergym.eval.log import RecordLog
from papergym.eval.records import EvalAnswer, EvalScore
from papergym.fakellm.plausible import responder
from papergym.fakellm.server import FakeOpenAIServer
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.records import Instance
from papergym.reward.reward import RubricReward
from papergym.reward.settings import RewardSection
from papergym.settings.models import PaperGymConfig
from support.reward_load import mixed_instances


def _questions(count: int) -> list[Instance]:
    bases = mixed_instances()
    return [
        bases[i % len(bases)].model_copy(
            update={"id": f"q{i}", "question": f"{bases[i % len(bases)].question} ({i})"}
        )
        for i in range(count)
    ]


def test_llm_judge_fills_the_llm_layers_concurrency(tmp_path: Path) -> None:
    questions = _questions(60)
    answers = [
        EvalAnswer(system="a", instance_id=q.id, sample=0, answer=q.reference_answer, words=9)
        for q in questions
    ]
    with FakeOpenAIServer(latency=0.3, responder=responder) as server:
        judge = BackendConfig(model="judge", base_url=(server.base_url,), max_concurrency=100)
        settings = PaperGymConfig(
            llm=LLMConfig(default=judge, cache=False),
            reward=RewardSection(judge="llm", criteria_per_call="all"),
        )
        reward = eval_reward(settings.reward, settings.llm)
        log = RecordLog(tmp_path / "scores.jsonl", EvalScore)

        async def judge_all() -> None:
            try:
                await score_answers(reward, answers, {q.id: q for q in questions}, log)
            finally:
                await reward.judge.llm.aclose()  # type: ignore[attr-defined]

        asyncio.run(judge_all())
        # 60 answers x 2 passes = 120 requests: 100 at once, never more; 64 before the fix
        assert server.request_count == 120
        assert server.max_in_flight == 100
    scores = log.read()
    assert len(scores) == 60 and all(s.value is not None for s in scores)


def test_offline_judge_keeps_the_rewards_own_bound() -> None:
    reward = eval_reward(RewardSection(judge="offline"), LLMConfig())
    assert reward.max_concurrency == RubricReward.max_concurrency
