"""``ReviewReward``: a text (a generated paper) → its mean simulated review rating in [0, 1].

The reward of the CycleResearcher loop (SPEC §5) and of any trainer that wants "how would
reviewers rate this": the reviewer (the LLM reviewer or the offline baseline) reviews the text,
and the reward is the paper's mean rating mapped to [0, 1] by the venue's scale
(:func:`~papergym.review.records.scale_value`: ICLR 1 → 0.0, 5.5 → 0.5, 10 → 1.0).

**Unscored is not zero.** When no review could be scored (every reviewer's answer was
unparseable, cut or never came), the score's ``value`` is None with the reason; the adapters
turn that into TRL's None or the configured ``reward.unscored`` fallback, with a flag. An
*empty* text is different: there is nothing to review, and it gets the scale's lowest rating
(0.0) without a call, as the rubric reward gives an empty answer 0.

**Fewer reviews than asked.** When some reviews were scored and others were not (unparseable,
cut, or their endpoint failed), ``partial`` says what to do (``review.partial``): ``flag`` keeps
the mean of the scored reviews and marks the score ``partial`` with the reason; ``unscored``
gives no reward (``value`` None, the reason says why). Either way the adapters log it.

**Answer length.** A text longer than ``max_answer_chars`` (``review.max_answer_chars`` where
the reward is built from the configuration) is cut to it before anything else is done with it,
as the rubric reward cuts answers, and its score says ``answer_truncated``.

Repeated texts are reviewed once: scores are kept in the rubric reward's bounded LRU
(:class:`~papergym.reward.cache.ScoreCache`) keyed by the text and the reviewer's identity,
and concurrent duplicates share one review. A score with a review whose
endpoint failed is never kept: the failure says nothing about the text, and the next request for
it asks the endpoint again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import statistics
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Literal

from papergym.llm.structured import strip_reasoning
from papergym.records import Record
from papergym.review.guards import GuardReport, guarded_rating, readable_text
from papergym.review.records import ICLR, PaperReview, UnscoredReview, VenueScale, scale_value
from papergym.review.reviewer import UNREACHABLE, Reviewer, off_loop, unreachable
from papergym.review.settings import GuardSettings
from papergym.reward.cache import DEFAULT_CACHE_SIZE, ScoreCache

Partial = Literal["flag", "unscored"]
"""What a text scored from fewer reviews than asked gets (see the module docstring)."""

REASONING_WORDS = ("think", "reasoning")
"""Words every reasoning tag holds (``<think>``, ``<thinking>``, ``<reasoning>``): a text
without them has no reasoning block, and is cut without a pass of the tag pattern over it."""

OFF_LOOP_CHARS = 1_000_000
"""A longer text with reasoning tags is cut to the answer limit in the executor, when there is
one, rather than on the event loop (finding its reasoning blocks is a pass over all of it)."""


class ReviewScore(Record):
    """The review reward of one text."""

    value: float | None
    """The mean rating mapped to [0, 1]; None when no review was scored."""
    rating: float | None
    """The mean rating on the venue's scale; None when no review was scored."""
    reviews: int
    """Reviews that were scored (0 for the offline baseline, which predicts without reviews)."""
    unscored: int
    """Reviews that could not be scored."""
    reason: str | None = None
    """Why the text is unscored, or why some of its reviews are missing (None when every review
    asked for was scored)."""
    asked: int = 0
    """Reviews asked for (0 for the offline baseline)."""
    partial: bool = False
    """Fewer reviews were scored than asked for (some unparseable, cut, or never answered): the
    value is the mean of the rest (``review.partial=flag``), or None (``unscored``)."""
    answer_truncated: bool = False
    """The text was cut to the answer limit (``review.max_answer_chars``) before review."""
    citations: int = 0
    """Passages of the text the reviews quoted for their strengths and weaknesses."""
    unbacked_citations: int = 0
    """Of those, the quotes not in the text: counted, the rating unchanged."""
    raw_rating: float | None = None
    """The reviewer's rating of what the guards passed it, before their factors (None: not
    guarded, or not reviewed)."""
    guards: GuardReport | None = None
    """What the guards measured, each one's factor, and which fired (None: not guarded)."""

    @property
    def fired(self) -> list[str]:
        """The guards that fired on this text (empty when not guarded)."""
        return list(self.guards.fired) if self.guards is not None else []

    @property
    def scored(self) -> bool:
        return self.value is not None

    @property
    def unscored_reason(self) -> str | None:
        """Why the text is unscored (None when it was scored)."""
        return None if self.scored else self.reason


def _first_reasons(unscored: Sequence[UnscoredReview]) -> list[str]:
    """The unscored reviews' reasons, endpoint failures first (a reason names the first)."""
    reasons = [u.reason for u in unscored]
    return sorted(reasons, key=lambda r: not r.startswith(UNREACHABLE + ":"))


def score_of(
    review: PaperReview, scale: VenueScale = ICLR, partial: Partial = "flag"
) -> ReviewScore:
    """A paper review as a reward: its mean rating on [0, 1], or unscored with the reason; a
    review scored from fewer reviews than asked is flagged or unscored as ``partial`` says."""
    reasons = _first_reasons(review.unscored)
    counts: dict[str, Any] = {
        "reviews": len(review.reviews),
        "unscored": len(reasons),
        "asked": len(review.reviews) + len(reasons),
        "citations": sum(len(r.citations) for r in review.reviews),
        "unbacked_citations": sum(r.unbacked_citations for r in review.reviews),
    }
    if review.score is None:
        first = f"all {len(reasons)} review(s) unscored; first: {reasons[0]}" if reasons else None
        return ReviewScore(
            value=None, rating=None, reason=first or "the reviewer gave no score", **counts
        )
    value = scale_value(review.score, scale)
    if not reasons:
        return ReviewScore(value=value, rating=review.score, **counts)
    reason = f"{len(reasons)} of {counts['asked']} review(s) unscored; first: {reasons[0]}"
    if partial == "unscored":
        return ReviewScore(
            value=None,
            rating=None,
            reason=f"{reason} (review.partial=unscored)",
            partial=True,
            **counts,
        )
    return ReviewScore(value=value, rating=review.score, reason=reason, partial=True, **counts)


def endpoint_failed(reason: str | None) -> bool:
    """Whether a score's reason says a review's endpoint never answered (a failure to retry,
    not the reviewer's verdict): :func:`score_of` names an endpoint failure first."""
    return f"first: {UNREACHABLE}:" in (reason or "")


def has_reasoning_tags(text: str) -> bool:
    """Whether ``text`` may hold a reasoning block (a plain substring search: fast)."""
    return any(word in text for word in REASONING_WORDS)


def limit_paper(text: str, max_chars: int | None) -> tuple[str, bool]:
    """(the paper in ``text``, whether it was cut): its reasoning blocks removed, then cut to
    ``max_chars`` characters (None: no limit), as the rubric reward cuts an answer. A text with
    no reasoning tag word is not searched for tags."""
    paper = strip_reasoning(text) if has_reasoning_tags(text) else text.strip()
    if max_chars is None or len(paper) <= max_chars:
        return paper, False
    return paper[:max_chars].strip(), True


def text_id(text: str) -> str:
    """A stable paper id for a text that has none (a policy's completion)."""
    return "text-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def reviewer_identity(reviewer: Reviewer) -> str:
    """What distinguishes ``reviewer``'s reviews from another's (its ``identity``, else its
    ``name``, else its class)."""
    for attribute in ("identity", "name"):
        value = getattr(reviewer, attribute, None)
        if isinstance(value, str):
            return value
    return type(reviewer).__qualname__


def reviewer_name(reviewer: Reviewer) -> str:
    """A short label of ``reviewer`` (logs, the server's health answer)."""
    value = getattr(reviewer, "name", None)
    return value if isinstance(value, str) else type(reviewer).__qualname__


@dataclass
class ReviewReward:
    """Reviews texts with ``reviewer`` and rewards their mean rating, scaled to [0, 1]. A
    :class:`~papergym.reward_protocol.Reward` whose input is ignored (the answer is the paper)."""

    reviewer: Reviewer
    scale: VenueScale = ICLR
    cache_size: int = DEFAULT_CACHE_SIZE
    max_concurrency: int = 16
    partial: Partial = "flag"
    max_answer_chars: int | None = None
    executor: Executor | None = None
    """Where long texts are cut (a server's worker processes); None: on the event loop."""
    guards: GuardSettings | None = None
    """The guards against word lists, duplicated and shuffled texts (None: none); see
    :mod:`papergym.review.guards`."""
    _cache: ScoreCache[ReviewScore] = field(init=False, repr=False)

    @property
    def name(self) -> str:
        return f"review:{reviewer_name(self.reviewer)}"

    def __post_init__(self) -> None:
        if self.partial not in ("flag", "unscored"):
            raise ValueError(f"partial must be 'flag' or 'unscored', not {self.partial!r}")
        if self.max_answer_chars is not None and self.max_answer_chars < 1:
            raise ValueError(f"max_answer_chars must be at least 1, not {self.max_answer_chars}")
        self._cache = ScoreCache(self.cache_size, self.max_concurrency)

    async def ascore(self, text: str) -> ReviewScore:
        """The review reward of one text; a repeated text is reviewed once."""
        if len(text) > OFF_LOOP_CHARS and has_reasoning_tags(text):
            paper, truncated = await off_loop(
                self.executor, limit_paper, text, self.max_answer_chars
            )
        else:
            paper, truncated = limit_paper(text, self.max_answer_chars)
        return await self.ascore_cut(paper, truncated)

    async def ascore_cut(self, paper: str, truncated: bool) -> ReviewScore:
        """The review reward of a text :func:`limit_paper` has cut already (``truncated``: it
        was cut), as a server does in its worker processes for a large body."""
        if not paper.strip():
            return ReviewScore(value=0.0, rating=float(self.scale.low), reviews=0, unscored=0)
        score = await self._reviewed(paper)
        return score.model_copy(update={"answer_truncated": True}) if truncated else score

    async def _reviewed(self, paper: str) -> ReviewScore:
        """The review reward of a paper already cut to the limit, through the guards when
        there are some."""
        if self.guards is None:
            return await self._cached_review(paper)
        readable, report = readable_text(paper, self.guards)
        low = float(self.scale.low)
        if report.fluent_words < self.guards.min_fluent_words:
            _, gated = guarded_rating(low, report, self.guards, low)
            return ReviewScore(value=0.0, rating=low, reviews=0, unscored=0, guards=gated)
        score = await self._cached_review(readable)
        if score.rating is None:
            return score.model_copy(update={"guards": report})
        rating, report = guarded_rating(score.rating, report, self.guards, low)
        return score.model_copy(
            update={
                "value": scale_value(rating, self.scale),
                "rating": rating,
                "raw_rating": score.rating,
                "guards": report,
            }
        )

    async def _cached_review(self, paper: str) -> ReviewScore:
        """The reviewer's score of ``paper``, reviewed once (see the module docstring)."""
        key = hashlib.sha256(
            json.dumps([reviewer_identity(self.reviewer), paper]).encode("utf-8")
        ).hexdigest()

        async def review() -> tuple[ReviewScore, bool]:
            reviewed = await self.reviewer.review(text_id(paper), paper)
            # an endpoint's failure is not the text's score: such a score is not kept
            return score_of(reviewed, self.scale, self.partial), not unreachable(reviewed)

        return await self._cache.get(key, review)

    async def ascore_many(self, texts: Sequence[str]) -> list[ReviewScore]:
        """Review rewards of many texts, in order, reviewed concurrently within the bound."""
        return list(await asyncio.gather(*(self.ascore(t) for t in texts)))

    async def ascore_cut_many(self, cut: Sequence[tuple[str, bool]]) -> list[ReviewScore]:
        """:meth:`ascore_cut` of many (text, truncated) pairs, in order."""
        return list(await asyncio.gather(*(self.ascore_cut(p, t) for p, t in cut)))

    async def ascore_batch(self, pairs: Sequence[tuple[None, str]]) -> list[ReviewScore]:
        """:meth:`ascore_many` of the answers of ``pairs`` (the
        :class:`~papergym.reward_protocol.Reward` protocol: a text needs no input)."""
        return await self.ascore_many([text for _, text in pairs])

    def input_of(self, label: Any, extra_info: Mapping[str, Any] | None) -> None:
        """No input: a label is not read (a row needs no rubric)."""
        return None

    def inputs_of_columns(self, columns: Mapping[str, Any], count: int) -> list[None]:
        """No input: no dataset column is read."""
        return [None] * count

    def verl_metrics(self, item: None, result: ReviewScore) -> dict[str, float]:
        """See :func:`verl_metrics`."""
        return verl_metrics(result)

    def openrlhf_logs(self, results: Sequence[ReviewScore]) -> dict[str, list[float]]:
        """See :func:`openrlhf_logs`."""
        return openrlhf_logs(results)

    def trl_logs(self, results: Sequence[ReviewScore]) -> dict[str, float]:
        """See :func:`trl_logs`."""
        return trl_logs(results)

    def new_loop(self) -> None:
        """Before another event loop uses this reward (its concurrency bound belongs to the
        loop that made it)."""
        self._cache.new_loop()

    def score(self, text: str) -> ReviewScore:
        """Synchronous :meth:`ascore`, for code without an event loop."""
        return self.score_many([text])[0]

    def score_many(self, texts: Sequence[str]) -> list[ReviewScore]:
        """Synchronous :meth:`ascore_many`; inside a running loop, await ``ascore_many``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._cache.new_loop()
            return asyncio.run(self.ascore_many(texts))
        raise RuntimeError("ReviewReward.score* called inside an event loop: await ascore*")


def verl_metrics(result: ReviewScore) -> dict[str, float]:
    """``rating`` (-1.0 when unscored), ``reviews`` (scored), ``unscored``, ``partial``."""
    return {
        "rating": result.rating if result.rating is not None else -1.0,
        "reviews": float(result.reviews),
        "unscored": 0.0 if result.scored else 1.0,
        "partial": 1.0 if result.partial else 0.0,
    }


def openrlhf_logs(results: Sequence[ReviewScore]) -> dict[str, list[float]]:
    """The mean rating (-1 where unscored), and the unscored and partial texts flagged."""
    return {
        "review_rating": [s.rating if s.rating is not None else -1.0 for s in results],
        "review_unscored": [0.0 if s.scored else 1.0 for s in results],
        "review_partial": [1.0 if s.partial else 0.0 for s in results],
    }


def trl_logs(results: Sequence[ReviewScore]) -> dict[str, float]:
    """The mean rating of the scored texts, how many were unscored, how many were scored
    from fewer reviews than asked, and the share of the reviews' quotes not in the text."""
    logs: dict[str, float] = {}
    ratings = [s.rating for s in results if s.rating is not None]
    if ratings:
        logs["review/rating_mean"] = statistics.fmean(ratings)
    logs["review/unscored"] = float(sum(not s.scored for s in results))
    logs["review/partial"] = float(sum(s.partial for s in results))
    cited = sum(s.citations for s in results)
    if cited:  # no rate for reviews that quote nothing (the offline baseline), never 0
        logs["review/unbacked_citation_rate"] = sum(s.unbacked_citations for s in results) / cited
    return logs
