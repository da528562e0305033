"""Generation and scoring for ``papergym eval``: each system answers every question N times
through the LLM layer, and the rubric reward scores each answer; both resume."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence

from papergym.eval.benchmark import BenchmarkRule, benchmark_score
from papergym.eval.log import RecordLog
from papergym.eval.records import (
    EvalAnswer,
    EvalJudgeUsage,
    EvalQuestion,
    EvalScore,
    EvalVerdict,
)
from papergym.eval.systems import ResolvedSystem
from papergym.export.common import chat_prompt
from papergym.llm.cache import ResponseCache, default_cache_dir
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import (
    LLMTransportError,
    LLMTruncatedError,
    Message,
    SamplingParams,
    Usage,
)
from papergym.llm.usage import UsageTracker, call_cost
from papergym.records import Instance, RewardMode, Score
from papergym.reward.factory import make_reward
from papergym.reward.reward import RubricReward
from papergym.reward.scoring import specific_score
from papergym.reward.settings import RewardSection

Key = tuple[str, str, int]
"""(system, instance id, sample): what one answer and its score are keyed by."""

Progress = Callable[[int], None]


def system_client(system: ResolvedSystem, llm: LLMConfig, tracker: UsageTracker) -> LLMClient:
    """A client whose policy role is the system (the cache and prices of ``llm`` kept)."""
    config = LLMConfig(
        roles={"policy": system.backend},
        prices=llm.prices,
        cache=llm.cache,
        cache_dir=llm.cache_dir,
        budget_usd=llm.budget_usd,
        budget_tokens=llm.budget_tokens,
    )
    return LLMClient(config, cache=response_cache(config), tracker=tracker)


def response_cache(config: LLMConfig) -> ResponseCache | None:
    """The on-disk response cache ``config`` asks for (None with ``cache: false``)."""
    if not config.cache:
        return None
    return ResponseCache((config.cache_dir or default_cache_dir()) / "responses.sqlite")


def judge_tracker(reward: RubricReward) -> UsageTracker | None:
    """The usage of the reward's LLM judge (its own tracker, under its own budget); None for
    the offline judge."""
    llm = getattr(reward.judge, "llm", None)
    return llm.tracker if isinstance(llm, LLMClient) else None


def eval_reward(section: RewardSection, llm: LLMConfig) -> RubricReward:
    """The rubric reward ``section`` describes (an LLM judge on ``llm``'s endpoints), judging
    as many answers at once as its LLM judge's endpoints take requests.

    The reward's own bound (32 answers, sized for trainers) would otherwise cap the judge at
    64 requests in flight whatever ``max_concurrency`` says: eval hands it every answer at
    once, so the LLM layer's per-endpoint bound is the one that should decide.
    """
    reward = make_reward(section, llm)
    client = getattr(reward.judge, "llm", None)
    role = getattr(reward.judge, "role", None)
    if not isinstance(client, LLMClient) or role is None:
        return reward  # the offline judge: its own bound stands
    backend = client.config.for_role(role)
    slots = backend.max_concurrency * max(1, len(backend.base_url))
    return dataclasses.replace(reward, max_concurrency=max(reward.max_concurrency, slots))


def messages_for(instance: Instance, system_prompt: str | None) -> list[Message]:
    """The chat prompt training used: the optional system message, then the question."""
    return [Message.model_validate(m) for m in chat_prompt(instance.question, system_prompt)]


def _answer_cost(client: LLMClient, usage: Usage, cached: bool) -> float | None:
    """What one answer cost: None for an unpriced model (even from the cache), 0 from the
    cache, else its tokens at the price of the model asked for (as the usage tracker does)."""
    price = client.config.prices.get(client.config.for_role("policy").model)
    if price is None:
        return None
    return 0.0 if cached else call_cost(price, usage)


def _words(text: str) -> int:
    return len(text.split())


async def generate(
    system: ResolvedSystem,
    client: LLMClient,
    instances: Sequence[Instance],
    params: SamplingParams,
    samples: int,
    log: RecordLog[EvalAnswer],
    done: set[Key],
    progress: Progress | None = None,
) -> list[str]:
    """Answers not in ``done``, appended to ``log`` as each finishes; returns the failures.

    An answer cut at max_tokens is recorded with its error (it will be unscored, never 0);
    an endpoint failure is not recorded, so running the command again asks again.
    """
    name = system.record.name
    failures: list[str] = []

    async def one(instance: Instance, sample: int) -> None:
        messages = messages_for(instance, system.system_prompt)
        started = time.perf_counter()
        try:
            result = await client.call(
                "policy", messages, params=params, stage=f"eval:{name}", sample_index=sample
            )
            record = EvalAnswer(
                system=name,
                instance_id=instance.id,
                sample=sample,
                answer=result.text,
                words=_words(result.text),
                finish_reason=result.finish_reason,
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
                latency_s=round(time.perf_counter() - started, 4),
                cached=result.cached,
                cost_usd=_answer_cost(client, result.usage, result.cached),
            )
        except LLMTruncatedError:
            record = EvalAnswer(
                system=name,
                instance_id=instance.id,
                sample=sample,
                answer="",
                words=0,
                finish_reason="length",
                error=f"answer cut at max_tokens={params.max_tokens}",
            )
        except LLMTransportError as error:
            failures.append(f"{name}: {error}")
            return
        log.append([record])
        if progress is not None:
            progress(1)

    await asyncio.gather(
        *(
            one(instance, sample)
            for instance in instances
            for sample in range(samples)
            if (name, instance.id, sample) not in done
        )
    )
    return failures


def eval_question(instance: Instance) -> EvalQuestion:
    """What a report shows of a question: its text and every criterion's text by id."""
    criteria = {c.id: c.text for c in instance.rubric.specific}
    criteria |= {c.id: c.text for c in instance.rubric.general}
    return EvalQuestion(instance_id=instance.id, question=instance.question, criteria=criteria)


def _dimension_score(score: Score, instance: Instance, dimension: str) -> float | None:
    ids = {c.id for c in instance.rubric.specific if c.dimension == dimension}
    verdicts = [v for v in score.verdicts if v.kind == "specific" and v.criterion_id in ids]
    if not verdicts:
        return None
    return specific_score(verdicts, score.normalisation)


def _benchmark_value(rule: BenchmarkRule, score: Score) -> tuple[float | None, str | None]:
    """The value by a benchmark's rule and, when it leaves the answer unscored, why."""
    if score.value is None:  # the reward could not score it: neither can the rule
        return None, score.unscored_reason
    value = benchmark_score(rule, score.verdicts)
    return value, None if value is not None else f"{rule}: no criterion to score by"


def eval_score(
    answer: EvalAnswer, instance: Instance, score: Score, rule: BenchmarkRule = "papergym"
) -> EvalScore:
    """The reward's score as an eval record, each verdict with its criterion's dimension and
    rank, and the specific score split by dimension; under a benchmark ``rule`` the value is
    that rule's score of the same verdicts (:mod:`papergym.eval.benchmark`)."""
    criteria = {c.id: c for c in instance.rubric.specific}
    verdicts = tuple(
        EvalVerdict(
            criterion_id=v.criterion_id,
            kind=v.kind,
            dimension=criteria[v.criterion_id].dimension
            if v.kind == "specific" and v.criterion_id in criteria
            else None,
            rank=criteria[v.criterion_id].rank
            if v.kind == "specific" and v.criterion_id in criteria
            else None,
            weight=v.weight,
            passed=v.passed,
            reason=v.reason,
            quote=v.quote,
            unbacked=v.unbacked,
            grade=v.grade,
        )
        for v in score.verdicts
    )
    value, unscored_reason = score.value, score.unscored_reason
    if rule != "papergym":
        value, unscored_reason = _benchmark_value(rule, score)
    scored = value is not None
    whole_answer = score.mode in ("holistic", "reference_similarity")  # no α, no verdicts
    return EvalScore(
        system=answer.system,
        instance_id=answer.instance_id,
        sample=answer.sample,
        value=value,
        specific=score.specific,
        general=score.general,
        method=_dimension_score(score, instance, "method") if scored else None,
        experiment=_dimension_score(score, instance, "experiment") if scored else None,
        words=answer.words,
        verdicts=verdicts,
        unscored_reason=unscored_reason,
        judge=score.judge,
        answer_truncated=score.answer_truncated,
        alpha=score.alpha if rule == "papergym" and not whole_answer else None,
        scoring=None if rule == "papergym" else rule,
        mode=score.mode,
    )


def unscored_answer(answer: EvalAnswer, judge: str, mode: RewardMode = "rubric") -> EvalScore:
    """The score of an answer that never came (cut at max_tokens): unscored, never 0."""
    return EvalScore(
        mode=mode,
        system=answer.system,
        instance_id=answer.instance_id,
        sample=answer.sample,
        value=None,
        words=answer.words,
        unscored_reason=f"no answer: {answer.error}",
        judge=judge,
    )


async def score_answers(
    reward: RubricReward,
    answers: Sequence[EvalAnswer],
    instances: dict[str, Instance],
    log: RecordLog[EvalScore],
    progress: Progress | None = None,
    rule: BenchmarkRule = "papergym",
) -> None:
    """Scores of ``answers`` (by ``rule``), appended to ``log`` as each verdict comes back."""

    async def one(answer: EvalAnswer) -> None:
        if answer.error is not None:
            record = unscored_answer(answer, reward.judge.name, reward.mode)
        else:
            instance = instances[answer.instance_id]
            score = await reward.ascore(instance, answer.answer)
            record = eval_score(answer, instance, score, rule)
        log.append([record])
        if progress is not None:
            progress(1)

    await asyncio.gather(*(one(a) for a in answers))


def _usage_totals(tracker: UsageTracker) -> tuple[int, int, int, int, float, bool]:
    """calls, cache hits, prompt and completion tokens, priced dollars, and whether every row
    was priced."""
    rows = list(tracker.rows.values())
    return (
        sum(r.calls for r in rows),
        sum(r.cache_hits for r in rows),
        sum(r.usage.prompt_tokens for r in rows),
        sum(r.usage.completion_tokens for r in rows),
        sum(r.cost for r in rows if r.cost is not None),
        all(r.cost is not None for r in rows),
    )


async def score_by_system(
    reward: RubricReward,
    answers: Sequence[EvalAnswer],
    instances: dict[str, Instance],
    logs: tuple[RecordLog[EvalScore], RecordLog[EvalJudgeUsage]],
    progress: Progress | None = None,
    rule: BenchmarkRule = "papergym",
) -> None:
    """:func:`score_answers`, one system at a time, so the LLM judge's calls, tokens and cost
    can be told apart per system (appended to the second log); the offline judge logs none."""
    scores_log, usage_log = logs
    tracker = judge_tracker(reward)
    systems = list(dict.fromkeys(a.system for a in answers))
    for system in systems:
        mine = [a for a in answers if a.system == system]
        before = _usage_totals(tracker) if tracker else None
        await score_answers(reward, mine, instances, scores_log, progress, rule)
        if tracker is None or before is None:
            continue
        after = _usage_totals(tracker)
        usage_log.append(
            [
                EvalJudgeUsage(
                    system=system,
                    answers=len(mine),
                    calls=after[0] - before[0],
                    cache_hits=after[1] - before[1],
                    prompt_tokens=after[2] - before[2],
                    completion_tokens=after[3] - before[3],
                    cost_usd=round(after[4] - before[4], 8) if after[5] else None,
                )
            ]
        )
