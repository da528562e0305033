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

Repeated texts are reviewed once: scores are kept in a bounded LRU keyed by the text and the
reviewer's identity, and concurrent duplicates share one review.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from papergym.llm.structured import strip_reasoning
from papergym.records import Record
from papergym.review.records import ICLR, PaperReview, VenueScale, scale_value
from papergym.review.reviewer import UNREACHABLE, Reviewer

DEFAULT_CACHE_SIZE = 4096
"""Scores kept in memory (a score is a few numbers; the reviews themselves are not kept)."""


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
    """Why the text is unscored (None when it is scored)."""

    @property
    def scored(self) -> bool:
        return self.value is not None


def score_of(review: PaperReview, scale: VenueScale = ICLR) -> ReviewScore:
    """A paper review as a reward: its mean rating on [0, 1], or unscored with the reason."""
    if review.score is None:
        reasons = [u.reason for u in review.unscored]
        reason = (
            f"all {len(reasons)} review(s) unscored; first: {reasons[0]}"
            if reasons
            else "the reviewer gave no score"
        )
        return ReviewScore(
            value=None, rating=None, reviews=0, unscored=len(review.unscored), reason=reason
        )
    return ReviewScore(
        value=scale_value(review.score, scale),
        rating=review.score,
        reviews=len(review.reviews),
        unscored=len(review.unscored),
    )


def endpoint_failed(reason: str | None) -> bool:
    """Whether an unscored text's reason says the reviewer's endpoint never answered (a failure
    to retry, not the reviewer's verdict): :func:`score_of` names the first review's reason."""
    return f"first: {UNREACHABLE}:" in (reason or "")


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
    """Reviews texts with ``reviewer`` and rewards their mean rating, scaled to [0, 1]."""

    reviewer: Reviewer
    scale: VenueScale = ICLR
    cache_size: int = DEFAULT_CACHE_SIZE
    max_concurrency: int = 16
    _scores: OrderedDict[str, ReviewScore] = field(default_factory=OrderedDict, repr=False)
    _pending: dict[str, asyncio.Future[ReviewScore]] = field(default_factory=dict, repr=False)
    _semaphore: asyncio.Semaphore | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return f"review:{reviewer_name(self.reviewer)}"

    async def ascore(self, text: str) -> ReviewScore:
        """The review reward of one text; a repeated text is reviewed once."""
        paper = strip_reasoning(text)
        if not paper.strip():
            return ReviewScore(value=0.0, rating=float(self.scale.low), reviews=0, unscored=0)
        key = hashlib.sha256(
            json.dumps([reviewer_identity(self.reviewer), paper]).encode("utf-8")
        ).hexdigest()
        if key in self._scores:
            self._scores.move_to_end(key)
            return self._scores[key]
        if key in self._pending:  # the same text is being reviewed now: share its review
            try:
                return await asyncio.shield(self._pending[key])
            except _AskerCancelled:  # its asker left (a client disconnected): review it anew
                return await self.ascore(text)
        future: asyncio.Future[ReviewScore] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            async with self._bound():
                review = await self.reviewer.review(text_id(paper), paper)
            score = score_of(review, self.scale)
            self._remember(key, score)
            future.set_result(score)
            return score
        except BaseException as error:
            # a cancelled asker's waiters are not cancelled themselves: they review it again
            cancelled = isinstance(error, asyncio.CancelledError)
            future.set_exception(_AskerCancelled() if cancelled else error)
            future.exception()  # retrieved: waiters re-raise it, nobody logs it as lost
            raise
        finally:
            del self._pending[key]

    async def ascore_many(self, texts: Sequence[str]) -> list[ReviewScore]:
        """Review rewards of many texts, in order, reviewed concurrently within the bound."""
        return list(await asyncio.gather(*(self.ascore(t) for t in texts)))

    def score(self, text: str) -> ReviewScore:
        """Synchronous :meth:`ascore`, for code without an event loop."""
        return self.score_many([text])[0]

    def score_many(self, texts: Sequence[str]) -> list[ReviewScore]:
        """Synchronous :meth:`ascore_many`; inside a running loop, await ``ascore_many``."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._semaphore = None  # a semaphore belongs to the loop that made it
            return asyncio.run(self.ascore_many(texts))
        raise RuntimeError("ReviewReward.score* called inside an event loop: await ascore*")

    def _remember(self, key: str, score: ReviewScore) -> None:
        if self.cache_size == 0:
            return
        self._scores[key] = score
        while len(self._scores) > self.cache_size:
            self._scores.popitem(last=False)

    def _bound(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
        return self._semaphore


class _AskerCancelled(Exception):
    """The caller reviewing a text was cancelled; callers waiting on it must review it anew."""
