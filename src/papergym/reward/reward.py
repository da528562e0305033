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
:data:`~papergym.reward.cache.DEFAULT_CACHE_SIZE`), shared with every reward
(:class:`~papergym.reward.cache.ScoreCache`); ``0`` turns it off (concurrent duplicates are still judged once).

**What is never kept.** A score with a verdict its judge never gave — the LLM judge's endpoint
failed after its retries, or the budget was spent (:func:`~papergym.llm.verdicts.never_answered`
reads the verdict's reason) — is returned, unscored, to the callers who asked for it at the time,
but not cached: the failure says nothing about the answer, and the next request for it asks
the judge again. An answer the judge gave but that could not be used (unparseable after the
repairs, cut at the token limit) is the judge's outcome and is kept like any other score.

**Modes** (``mode``, SPEC §6's ablations; every Score says its ``mode``, and a mode other
than ``rubric`` joins the cache key, so two modes never share a score):

* ``rubric`` — the rubric reward above;
* ``generic_only`` — the same judge, handed the instance *without its specific criteria*, so
  only the general criteria are judged and the value is their pass rate (the Score's α is 0
  because there is no specific part, not because α was set to 0); a rubric without general
  criteria, or a judge that grades none (the offline judge), is unscored with that reason;
* ``holistic`` and ``reference_similarity`` — a whole-answer judge
  (:class:`~papergym.reward.rating.AnswerJudge`) gives one value, no verdicts
  (:func:`~papergym.reward.ablations.answer_score`).

**Answer length.** An answer longer than ``max_answer_chars`` characters (after its
``<think>`` blocks are removed, which every judge does anyway) is cut to that length before it
is judged, as a trainer's maximum completion length would cut it, and its Score says
``answer_truncated``. ``None`` turns the limit off.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from papergym.llm.structured import strip_reasoning
from papergym.llm.verdicts import never_answered
from papergym.quotes import tally
from papergym.records import Instance, Normalisation, RewardMode, Score, Verdict
from papergym.reward.ablations import answer_score
from papergym.reward.cache import DEFAULT_CACHE_SIZE as DEFAULT_CACHE_SIZE
from papergym.reward.cache import ScoreCache
from papergym.reward.labels import instance_from_ground_truth, instances_from_columns
from papergym.reward.rating import AnswerJudge
from papergym.reward.scoring import check_normalisation, rubric_score
from papergym.reward.settings import DEFAULT_ALPHA
from papergym.reward.settings import DEFAULT_MAX_ANSWER_CHARS as DEFAULT_MAX_ANSWER_CHARS


class Judge(Protocol):
    """Anything that returns (specific, general) verdicts for an answer."""

    @property
    def name(self) -> str: ...

    async def judge(
        self, instance: Instance, answer: str
    ) -> tuple[list[Verdict], list[Verdict]]: ...


def judge_identity(judge: Judge | AnswerJudge) -> str:
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
    mode: RewardMode = "rubric",
) -> str:
    """The cache key of one judgement: a digest of everything that decides its score (a
    ``rubric`` key stays what it was before modes existed)."""
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
    if mode != "rubric":
        content["mode"] = mode
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


def check_mode(mode: RewardMode, judge: Judge | AnswerJudge) -> None:
    """Refuse a judge that cannot produce ``mode``'s scores (``ValueError``)."""
    if mode in ("holistic", "reference_similarity"):
        if not isinstance(judge, AnswerJudge) or judge.mode != mode:
            raise ValueError(f"reward mode {mode!r} needs its own judge, not {judge.name!r}")
    elif mode in ("rubric", "generic_only"):
        if isinstance(judge, AnswerJudge):
            raise ValueError(f"reward mode {mode!r} needs a rubric judge, not {judge.name!r}")
    else:
        raise ValueError(f"unknown reward mode {mode!r}")


def without_specific(instance: Instance) -> Instance:
    """``instance`` with no specific criteria: what the judge sees in ``generic_only`` mode
    (so it neither judges them nor pays for them)."""
    rubric = instance.rubric.model_copy(update={"specific": ()})
    return instance.model_copy(update={"rubric": rubric})


def generic_only(score: Score) -> Score:
    """A rubric score of the general criteria alone, labelled ``generic_only``; unscored with
    the reason when no general criterion was judged."""
    if not any(v.kind == "general" for v in score.verdicts):
        return score.model_copy(
            update={
                "value": None,
                "mode": "generic_only",
                "unscored_reason": "generic_only unscored: no general criterion was judged "
                "(the rubric has none, or the judge grades none: the offline judge)",
            }
        )
    return score.model_copy(update={"mode": "generic_only"})


@dataclass
class RubricReward:
    """Scores answers against an instance's rubric: ``α·specific + (1−α)·general``.

    ``specific`` is the weighted score of the specific criteria under ``normalisation``
    (``positive``: divided by the sum of positive weights, as HealthBench; ``absolute``: by the
    sum of ``|w|``, as RaR), clipped to ``[0, 1]`` per answer; equal to their pass rate when
    every weight is 1. A :class:`~papergym.reward_protocol.Reward` of (instance, answer) pairs.
    """

    judge: Judge | AnswerJudge
    alpha: float = DEFAULT_ALPHA
    normalisation: Normalisation = "positive"
    max_concurrency: int = 32
    cache_size: int = DEFAULT_CACHE_SIZE
    max_answer_chars: int | None = DEFAULT_MAX_ANSWER_CHARS
    mode: RewardMode = "rubric"
    _cache: ScoreCache[Score] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_normalisation(self.normalisation)
        check_mode(self.mode, self.judge)
        if self.max_answer_chars is not None and self.max_answer_chars < 1:
            raise ValueError(f"max_answer_chars must be at least 1, not {self.max_answer_chars}")
        self._cache = ScoreCache(self.cache_size, self.max_concurrency)

    @property
    def name(self) -> str:
        """The judge's name."""
        return self.judge.name

    async def ascore(self, instance: Instance, answer: str) -> Score:
        """The score of one answer; a repeated answer is served from memory."""
        judged, truncated = limit_answer(answer, self.max_answer_chars)
        key = score_key(
            instance,
            judged,
            judge_identity(self.judge),
            self.alpha,
            self.normalisation,
            self.mode,
        )

        async def judgement() -> tuple[Score, bool]:
            if isinstance(self.judge, AnswerJudge):
                return await self._rated(instance, judged)
            return await self._judged(instance, judged)

        return _for_caller(await self._cache.get(key, judgement), instance, truncated)

    async def _judged(self, instance: Instance, answer: str) -> tuple[Score, bool]:
        """The rubric (or generic-only) score, and whether it may be kept."""
        assert not isinstance(self.judge, AnswerJudge)
        shown = without_specific(instance) if self.mode == "generic_only" else instance
        specific, general = await self.judge.judge(shown, answer)
        score = rubric_score(
            instance.id,
            with_weights(specific, instance),
            general,
            alpha=self.alpha,
            judge=self.judge.name,
            normalisation=self.normalisation,
        )
        if self.mode == "generic_only":
            score = generic_only(score)
        # a failure is not the answer's: such a score is not kept
        return score, not judge_never_answered(specific, general)

    async def _rated(self, instance: Instance, answer: str) -> tuple[Score, bool]:
        """A whole-answer judge's score, and whether it may be kept."""
        assert isinstance(self.judge, AnswerJudge)
        rating = await self.judge.rate(instance, answer)
        score = answer_score(
            instance.id,
            rating.value,
            mode=self.judge.mode,
            judge=self.judge.name,
            reason=rating.reason,
        )
        return score, not (rating.value is None and never_answered(rating.reason))

    async def ascore_many(self, pairs: Sequence[tuple[Instance, str]]) -> list[Score]:
        """Scores of many answers, in order, judged concurrently within the bound."""
        return list(await asyncio.gather(*(self.ascore(i, a) for i, a in pairs)))

    async def ascore_batch(self, pairs: Sequence[tuple[Instance, str]]) -> list[Score]:
        """:meth:`ascore_many` (the :class:`~papergym.reward_protocol.Reward` protocol)."""
        return await self.ascore_many(pairs)

    def score(self, instance: Instance, answer: str) -> Score:
        """Synchronous :meth:`ascore`, for code without an event loop."""
        return self.score_many([(instance, answer)])[0]

    def score_many(self, pairs: Sequence[tuple[Instance, str]]) -> list[Score]:
        """Synchronous :meth:`ascore_many`; inside a running loop, await ``ascore_many``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._cache.new_loop()
            return asyncio.run(self.ascore_many(pairs))
        raise RuntimeError(
            "RubricReward.score* called inside an event loop: await ascore/ascore_many"
        )

    @property
    def cached(self) -> int:
        """How many scores the cache holds now."""
        return len(self._cache)

    def input_of(self, label: Any, extra_info: Mapping[str, Any] | None) -> Instance:
        """The instance a verl ``ground_truth`` (or OpenRLHF label) and its ``extra_info``
        describe."""
        return instance_from_ground_truth(label, extra_info)

    def inputs_of_columns(self, columns: Mapping[str, Any], count: int) -> list[Instance]:
        """The instances of TRL's ``question``, ``reference`` and ``rubric`` columns (and
        ``instance_id``, ``recipe`` when present)."""
        return instances_from_columns(columns, count)

    def verl_metrics(self, item: Instance, result: Score) -> dict[str, float]:
        """``specific`` and ``general`` (-1.0 when unscored), ``unscored``, ``num_criteria``."""
        return {
            "specific": result.specific if result.specific is not None else -1.0,
            "general": result.general if result.general is not None else -1.0,
            "unscored": 0.0 if result.scored else 1.0,
            "num_criteria": float(len(item.rubric.specific)),
        }

    def openrlhf_logs(self, results: Sequence[Score]) -> dict[str, list[float]]:
        """See :func:`openrlhf_logs`."""
        return openrlhf_logs(results)

    def trl_logs(self, results: Sequence[Score]) -> dict[str, float]:
        """See :func:`trl_logs`."""
        return trl_logs(results)


def openrlhf_logs(results: Sequence[Score]) -> dict[str, list[float]]:
    """``rubric_specific`` and ``rubric_general`` per answer (-1.0 marks a part that could not
    be scored) and ``rubric_unscored``. ``rubric_general`` is left out when no answer was given
    a general verdict at all: the offline judge grades no general criteria, and a column of
    -1.0 would read as a score. ``rubric_unbacked`` (per answer, its "met" verdicts whose quote
    was not in it) is there only when the judge quotes."""
    logs = {"rubric_specific": [s.specific if s.specific is not None else -1.0 for s in results]}
    if any(v.kind == "general" for s in results for v in s.verdicts):
        logs["rubric_general"] = [s.general if s.general is not None else -1.0 for s in results]
    logs["rubric_unscored"] = [0.0 if s.scored else 1.0 for s in results]
    if any(tally(s.verdicts).claimed for s in results):  # only a quoting judge has them
        logs["rubric_unbacked"] = [float(tally(s.verdicts).unbacked) for s in results]
    return logs


def trl_logs(results: Sequence[Score]) -> dict[str, float]:
    """The means of the specific and general parts, how many answers were unscored, and the
    share of the judge's "met" verdicts whose quote was not in the answer (``unbacked_rate``,
    only when the judge quotes: :func:`papergym.quotes.tally`)."""
    logs: dict[str, float] = {}
    for name in ("specific", "general"):
        values = [getattr(s, name) for s in results if getattr(s, name) is not None]
        if values:
            logs[f"rubric/{name}_mean"] = statistics.fmean(values)
    logs["rubric/unscored"] = float(sum(not s.scored for s in results))
    quotes = tally(v for s in results for v in s.verdicts)
    if quotes.rate is not None:  # a judge that quotes nothing has no rate, not a rate of 0
        logs["rubric/unbacked_rate"] = quotes.rate
    return logs


def _for_caller(score: Score, instance: Instance, truncated: bool) -> Score:
    """A shared judgement labelled for this caller: its own instance id and truncation flag."""
    if score.instance_id == instance.id and score.answer_truncated == truncated:
        return score
    return score.model_copy(update={"instance_id": instance.id, "answer_truncated": truncated})
