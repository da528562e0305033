"""``RubricReward``: (instance, answer) → :class:`~papergym.records.Score`.

The one object every adapter (TRL, verl, OpenRLHF, the HTTP server) calls. It asks a judge for
per-criterion verdicts, turns them into a score with the pure rules of :mod:`scoring`, never
judges the same answer twice (concurrent duplicates share one judgement), and bounds how many
answers are judged at once.

**What a cached score is keyed by.** Only the content that decides the score: the question,
the reference answer, the rubric (every criterion's id, text, dimension, weight and any other
field, and the general criteria), the answer as judged, the judge's identity
(:func:`judge_identity`), α and the normalisation. The instance *id* is not part of
the key: ids are invented when absent (a verl ``ground_truth`` without one was always
``"verl"``) and chosen by clients (``extra_info.instance_id``), so an id-keyed cache served one
paper's score under another paper's rubric. Two instances with the same content share a judgement; each caller
still gets its own ``instance_id`` back. A document's ``source_kind`` joins the key (the LLM
judge words its prompt for an answer, not a plan); a paper's key is what it always was. Other
instance fields (title, paper id, source path,
warnings) are not read by any judge and are left out.

**Weights.** The specific part of every score is
:func:`~papergym.reward.scoring.weighted_score` over the rubric's signed weights (a pitfall's
"met" subtracts), normalised as ``normalisation`` says — ``positive``: by the sum of positive
weights (HealthBench); ``absolute``: by the sum of ``|w|`` (RaR) — and clipped to ``[0, 1]``
per answer. For a rubric whose weights are all 1 (every rubric the paper recipes build) both
give exactly the pass rate. The weights come from the rubric, never from the judge: the reward
copies each criterion's weight onto its verdict before scoring.

**Memory.** The cache is an LRU of at most ``cache_size`` scores (default
:data:`DEFAULT_CACHE_SIZE`); ``0`` turns it off (concurrent duplicates are still judged once).

**What is never kept.** A score with a verdict its judge never gave — the LLM judge's endpoint
failed after its retries, or the budget was spent (:func:`~papergym.llm.verdicts.never_answered`
reads the verdict's reason) — is returned, unscored, to the callers who asked for it at the time,
but not cached: the failure says nothing about the answer, and the next request for it asks
the judge again. An answer the judge gave but that could not be used (unparseable after the
repairs, cut at the token limit) is the judge's outcome and is kept like any other score.

**Answer length.** An answer longer than ``max_answer_chars`` characters (after its
``<think>`` blocks are removed, which every judge does anyway) is cut to that length before it
is judged, as a trainer's maximum completion length would cut it, and its Score says
``answer_truncated``. ``None`` turns the limit off.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from papergym.llm.structured import strip_reasoning
from papergym.llm.verdicts import never_answered
from papergym.records import Instance, Normalisation, Score, Verdict
from papergym.reward.scoring import check_normalisation, rubric_score

DEFAULT_CACHE_SIZE = 4096
"""Scores kept in memory. A score with its verdicts' reasons is a few KB (about 7 KB with an
LLM judge's reasons), so the cache stays under ~30 MB; 4096 covers two steps of a large GRPO
batch (256 prompts × 8 answers), where repeats happen (duplicate answers in a group, a retried
request, check-reward's probes), while a long-running server no longer grows without bound."""

DEFAULT_MAX_ANSWER_CHARS = 16_000
"""Longest answer judged, in characters (not tokens or words: no tokenizer needed, the same for
every language and judge). About 4,000 tokens of English at ~4 characters a token: twice the
paper's 2,048-token completion budget (``configs/qwen3-8b.yaml``), so real plans are not cut,
while a 1 MB answer costs the offline judge seconds instead of minutes and stays well inside an
LLM judge's context. Raise it (``max_answer_chars``) for longer completion budgets."""


class Judge(Protocol):
    """Anything that returns (specific, general) verdicts for an answer."""

    @property
    def name(self) -> str: ...

    async def judge(
        self, instance: Instance, answer: str
    ) -> tuple[list[Verdict], list[Verdict]]: ...


def judge_identity(judge: Judge) -> str:
    """Everything about ``judge`` that can change its verdicts.

    A judge may expose an ``identity`` string (the LLM judge adds its endpoint, sampling and
    prompt options to its name); otherwise its ``name`` stands for it.
    """
    identity = getattr(judge, "identity", None)
    return identity if isinstance(identity, str) else judge.name


def score_key(
    instance: Instance,
    answer: str,
    judge: str,
    alpha: float,
    normalisation: Normalisation = "positive",
) -> str:
    """The cache key of one judgement: a digest of everything that decides its score."""
    content = {
        "question": instance.question,
        "reference": instance.reference_answer,
        "rubric": instance.rubric.model_dump(mode="json", exclude={"note"}),
        "answer": answer,
        "judge": judge,
        "alpha": alpha,
        "normalisation": normalisation,
    }
    if instance.source_kind != "paper":  # a paper's key stays as it was before the field
        content["source_kind"] = instance.source_kind
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Judged(Protocol):
    """A verdict as any record keeps it (:class:`Verdict`, eval's ``EvalVerdict``)."""

    @property
    def passed(self) -> bool | None: ...

    @property
    def reason(self) -> str: ...


def judge_never_answered(*passes: Sequence[_Judged]) -> bool:
    """Whether any unscored verdict of ``passes`` was never given: its judge's endpoint failed
    or the budget was spent (see :func:`~papergym.llm.verdicts.never_answered`). Such a score
    is not kept, by the reward's cache or by a command's resume log."""
    return any(v.passed is None and never_answered(v.reason) for p in passes for v in p)


def limit_answer(answer: str, max_chars: int | None) -> tuple[str, bool]:
    """(the answer to judge, whether it was cut) under a limit of ``max_chars`` characters.

    Reasoning blocks are removed before measuring (every judge drops them anyway), so a long
    ``<think>`` does not push the plan itself past the limit.
    """
    if max_chars is None or len(answer) <= max_chars:
        return answer, False
    plan = strip_reasoning(answer)
    if len(plan) <= max_chars:
        return plan, False
    return plan[:max_chars], True


def with_weights(verdicts: Sequence[Verdict], instance: Instance) -> list[Verdict]:
    """The specific verdicts with their criteria's weights from the rubric (judges leave 1)."""
    weights = {c.id: c.weight for c in instance.rubric.specific}
    return [
        v
        if weights.get(v.criterion_id, v.weight) == v.weight
        else v.model_copy(update={"weight": weights[v.criterion_id]})
        for v in verdicts
    ]


@dataclass
class RubricReward:
    """Scores answers against an instance's rubric: ``α·specific + (1−α)·general``.

    ``specific`` is the weighted score of the specific criteria under ``normalisation``
    (``positive``: divided by the sum of positive weights, as HealthBench; ``absolute``: by the
    sum of ``|w|``, as RaR), clipped to ``[0, 1]`` per answer; equal to their pass rate when
    every weight is 1.
    """

    judge: Judge
    alpha: float = 0.7
    normalisation: Normalisation = "positive"
    max_concurrency: int = 32
    cache_size: int = DEFAULT_CACHE_SIZE
    max_answer_chars: int | None = DEFAULT_MAX_ANSWER_CHARS
    _scores: OrderedDict[str, Score] = field(default_factory=OrderedDict, repr=False)
    _pending: dict[str, asyncio.Future[Score]] = field(default_factory=dict, repr=False)
    _semaphore: asyncio.Semaphore | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        check_normalisation(self.normalisation)
        if self.cache_size < 0:
            raise ValueError(f"cache_size must be 0 or more, not {self.cache_size}")
        if self.max_answer_chars is not None and self.max_answer_chars < 1:
            raise ValueError(f"max_answer_chars must be at least 1, not {self.max_answer_chars}")

    async def ascore(self, instance: Instance, answer: str) -> Score:
        """The score of one answer; a repeated answer is served from memory."""
        judged, truncated = limit_answer(answer, self.max_answer_chars)
        key = score_key(
            instance, judged, judge_identity(self.judge), self.alpha, self.normalisation
        )
        if key in self._scores:
            self._scores.move_to_end(key)
            return _for_caller(self._scores[key], instance, truncated)
        if key in self._pending:  # the same answer is being judged right now: wait for it
            try:
                shared = await asyncio.shield(self._pending[key])
            except _AskerCancelled:  # its asker left (a client disconnected): judge it anew
                return await self.ascore(instance, answer)
            return _for_caller(shared, instance, truncated)
        future: asyncio.Future[Score] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            async with self._bound():
                specific, general = await self.judge.judge(instance, judged)
            score = rubric_score(
                instance.id,
                with_weights(specific, instance),
                general,
                alpha=self.alpha,
                judge=self.judge.name,
                normalisation=self.normalisation,
            )
            if not judge_never_answered(specific, general):  # a failure is not the answer's
                self._remember(key, score)
            future.set_result(score)
            return _for_caller(score, instance, truncated)
        except BaseException as error:
            # a cancelled asker's waiters are not cancelled themselves: they judge it again
            cancelled = isinstance(error, asyncio.CancelledError)
            future.set_exception(_AskerCancelled() if cancelled else error)
            future.exception()  # mark retrieved: waiters re-raise it, nobody logs it as lost
            raise
        finally:
            del self._pending[key]

    async def ascore_many(self, pairs: Sequence[tuple[Instance, str]]) -> list[Score]:
        """Scores of many answers, in order, judged concurrently within the bound."""
        return list(await asyncio.gather(*(self.ascore(i, a) for i, a in pairs)))

    def score(self, instance: Instance, answer: str) -> Score:
        """Synchronous :meth:`ascore`, for code without an event loop."""
        return self.score_many([(instance, answer)])[0]

    def score_many(self, pairs: Sequence[tuple[Instance, str]]) -> list[Score]:
        """Synchronous :meth:`ascore_many`; inside a running loop, await ``ascore_many``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._semaphore = None  # a semaphore belongs to the loop that made it
            return asyncio.run(self.ascore_many(pairs))
        raise RuntimeError(
            "RubricReward.score* called inside an event loop: await ascore/ascore_many"
        )

    @property
    def cached(self) -> int:
        """How many scores the cache holds now."""
        return len(self._scores)

    def _remember(self, key: str, score: Score) -> None:
        if self.cache_size == 0:
            return
        self._scores[key] = score
        self._scores.move_to_end(key)
        while len(self._scores) > self.cache_size:
            self._scores.popitem(last=False)  # the least recently used

    def _bound(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
        return self._semaphore


class _AskerCancelled(Exception):
    """The caller judging an answer was cancelled; callers waiting on it must judge it anew."""


def _for_caller(score: Score, instance: Instance, truncated: bool) -> Score:
    """A shared judgement labelled for this caller: its own instance id and truncation flag."""
    if score.instance_id == instance.id and score.answer_truncated == truncated:
        return score
    return score.model_copy(update={"instance_id": instance.id, "answer_truncated": truncated})
