"""The LLM reviewer (SPEC §5): N independent simulated reviewers, then a meta-review.

For each paper, :class:`LLMReviewer`

1. anonymises the text (:func:`papergym.review.anonymise.anonymise`: author block, venue
   headers, acknowledgements, funding, the paper's code URLs) and records what it removed;
2. fits it to the model's context (:func:`papergym.review.fit.fit_paper`), recording the rule;
3. asks ``reviewers`` reviewers, each an **independent** call through the LLM layer (role
   ``reviewer``) with its own profile (``prompts/profiles.json``: empirical, theory, clarity,
   senior-skeptic, cycled when there are more reviewers than profiles) and its own sampling
   seed — never several reviews from one completion;
4. takes each review as structured output: the schema sent to the server restricts the rating
   to the venue's scale (an enum: ICLR 1, 3, 5, 6, 8, 10), the sub-scores to 1–4 and the
   confidence to 1–5, and the LLM layer validates the answer locally and re-asks with the
   errors. A review still invalid after those repairs, cut by the token limit, or never
   answered becomes an :class:`~papergym.review.records.UnscoredReview` with the reason;
5. scores the paper with the mean rating of the scored reviews — None when none was scored,
   never a 0 — and decides by the configured threshold (``score >= threshold``), never from
   text; a rating of 10 stays 10;
6. writes a meta-review (text only, one more call), which never changes score or decision.

**Citations.** Each strength and weakness may quote the passage of the paper it rests on (null
for something the paper lacks). The quote is checked against the paper as the reviewer read it
(:func:`papergym.quotes.quote_problem`: case, whitespace and typography forgiven, paraphrase
not) and kept as a :class:`~papergym.review.records.Citation`; one not in the paper is recorded
and counted (``unbacked_citations`` in the run's summary and the reward's logs), and changes
neither the rating nor the score.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, create_model

from papergym.llm.client import LLMClient
from papergym.llm.structured import strip_reasoning
from papergym.llm.types import (
    BudgetExceededError,
    LLMError,
    LLMOutputError,
    LLMTransportError,
    LLMTruncatedError,
    Message,
    SamplingParams,
    Usage,
)
from papergym.quotes import QUOTE_MISSING, quote_problem
from papergym.review.anonymise import Anonymised, anonymise
from papergym.review.fit import Fitted, fit_paper
from papergym.review.records import (
    ICLR,
    Citation,
    PaperReview,
    Review,
    UnscoredReview,
    VenueScale,
    decide,
    mean_rating,
)

if TYPE_CHECKING:
    from papergym.review.settings import ReviewSection

T = TypeVar("T")

REVIEW_STAGE = "review"
META_STAGE = "review:meta"
"""The stages the reviewer's calls are accounted under in the usage table."""

DEFAULT_THRESHOLD = 5.5
"""Decision threshold on the mean rating used when none is configured."""

OPENING_WORDS = 400
"""Words of the paper the meta-review call sees (the title and abstract, usually)."""

MAX_REASON_CHARS = 400
"""An unscored review's reason keeps this much of the error."""

CHARS_PER_TOKEN = 3.0
"""A generous count of a text's tokens for a budget: English runs about 4 characters a token."""

WORD_CHARS = 8
"""A generous length of a word with its space, for the meta-review's opening words."""

UNREACHABLE = "unreachable"
"""The reason prefix of a review whose endpoint never answered: a run retries such papers."""

TRUNCATED = "truncated"
"""The reason prefix of a review cut by the token limit (after the LLM layer's one retry with a
larger budget): a run retries such papers too, as the build does, once the limit is raised."""

SCALE_MEANINGS: dict[str, str] = {
    "iclr": "1 = strong reject, 3 = reject, 5 = marginally below the acceptance threshold, "
    "6 = marginally above the acceptance threshold, 8 = accept, 10 = strong accept",
}
VENUE_NAMES: dict[str, str] = {"iclr": "ICLR, a machine-learning conference"}


class Reviewer(Protocol):
    """Anything that reviews a paper: the LLM reviewer, the offline baseline."""

    async def review(self, paper_id: str, text: str) -> PaperReview: ...


async def off_loop(executor: Executor | None, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` run in ``executor``, or here when there is none.

    A reward server gives its reviewer worker *processes*: anonymising a long text is pure-Python
    regex work, which holds the interpreter lock for its whole length, so a thread would still
    stop the server's event loop (``/health`` included) until it is done. ``function`` must be a
    module-level function whose arguments and result pickle.
    """
    if executor is None:
        return function(*args)
    return await asyncio.get_running_loop().run_in_executor(executor, function, *args)


def prepare_paper(text: str, max_words: int) -> tuple[Anonymised, Fitted]:
    """What the LLM reviewers read of a paper: anonymised, then fitted to ``max_words`` words
    (CPU work: :func:`off_loop` runs it)."""
    anonymised = anonymise(text)
    return anonymised, fit_paper(anonymised.text, max_words)


@dataclass(frozen=True)
class ReviewerProfile:
    """Who a simulated reviewer is: a name and the sentence the prompt describes them with."""

    name: str
    description: str


@functools.cache
def load_profiles() -> tuple[ReviewerProfile, ...]:
    """The shipped reviewer profiles (``prompts/profiles.json``)."""
    path = resources.files("papergym.review").joinpath("prompts", "profiles.json")
    return tuple(ReviewerProfile(**item) for item in json.loads(path.read_text("utf-8")))


def panel(
    count: int, profiles: Sequence[ReviewerProfile], seed: int
) -> list[tuple[str, ReviewerProfile, int]]:
    """``count`` reviewers as (name, profile, sampling seed): profiles cycled, seeds distinct.

    A profile used again (more reviewers than profiles) gets a numbered name (``theory-2``)."""
    if not profiles:
        raise ValueError("at least one reviewer profile is needed")
    chosen = []
    for index in range(count):
        profile = profiles[index % len(profiles)]
        turn = index // len(profiles)
        name = profile.name if turn == 0 else f"{profile.name}-{turn + 1}"
        chosen.append((name, profile, seed + index))
    return chosen


class CitedPoint(BaseModel):
    """A strength or weakness, and the passage of the paper it rests on."""

    model_config = ConfigDict(extra="forbid")

    point: str = Field(description="The strength or weakness, in your own words.")
    quote: str | None = Field(
        description="The passage of the paper it rests on, copied word for word; null when it "
        "rests on no single passage (something the paper lacks)."
    )


class ReviewAnswer(BaseModel):
    """One reviewer's review of a paper (the rating is restricted per venue, see
    :func:`answer_schema`)."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(description="What the paper does and claims, in your own words.")
    strengths: list[CitedPoint] = Field(description="The main strengths, one per item.")
    weaknesses: list[CitedPoint] = Field(description="The main weaknesses, one per item.")
    questions: list[str] = Field(description="Questions for the authors, one per item.")
    soundness: Literal[1, 2, 3, 4] = Field(description="1 poor, 2 fair, 3 good, 4 excellent.")
    presentation: Literal[1, 2, 3, 4] = Field(description="1 poor, 2 fair, 3 good, 4 excellent.")
    contribution: Literal[1, 2, 3, 4] = Field(description="1 poor, 2 fair, 3 good, 4 excellent.")
    rating: int = Field(description="Overall recommendation on the venue's scale.")
    confidence: Literal[1, 2, 3, 4, 5] = Field(description="1 an educated guess ... 5 certain.")


@functools.cache
def answer_schema(scale: VenueScale) -> type[ReviewAnswer]:
    """:class:`ReviewAnswer` whose rating is one of ``scale.ratings`` (a JSON-schema enum, so
    structured decoding enforces it and local validation refuses anything else). Built once
    per scale, so the schema and the LLM cache key stay stable."""
    rating: Any = cast(Any, Literal)[scale.ratings]  # the ratings are known at run time only
    return create_model(
        "ReviewAnswer",
        __base__=ReviewAnswer,
        __doc__=ReviewAnswer.__doc__,
        rating=(rating, Field(description=f"Overall recommendation: one of {scale.ratings}.")),
    )


@functools.cache
def _template(name: str) -> Template:
    path = resources.files("papergym.review").joinpath("prompts", f"{name}.md")
    return Template(path.read_text("utf-8"))


def review_messages(profile: ReviewerProfile, scale: VenueScale, paper: str) -> list[Message]:
    """The one user message asking ``profile`` to review ``paper`` on ``scale``."""
    content = _template("review").substitute(
        venue=VENUE_NAMES.get(scale.name, scale.name),
        profile=profile.description,
        ratings=", ".join(str(r) for r in scale.ratings),
        scale_meaning=SCALE_MEANINGS.get(scale.name, f"{scale.low} is worst, {scale.high} best"),
        paper=paper,
    )
    return [Message(role="user", content=content.strip())]


def meta_review_messages(scale: VenueScale, paper: str, reviews: Sequence[Review]) -> list[Message]:
    """The message asking for a meta-review of ``reviews`` (ratings shown, no decision asked)."""
    shown = []
    for number, review in enumerate(reviews, start=1):
        lines = [f"Reviewer {number} ({review.reviewer}), rating {review.rating}:"]
        lines.append(f"Summary: {review.summary}")
        lines += [f"+ {item}" for item in review.strengths]
        lines += [f"- {item}" for item in review.weaknesses]
        shown.append("\n".join(lines))
    content = _template("meta_review").substitute(
        venue=VENUE_NAMES.get(scale.name, scale.name),
        count=len(reviews),
        opening=" ".join(paper.split()[:OPENING_WORDS]),
        reviews="\n\n".join(shown),
    )
    return [Message(role="user", content=content.strip())]


class MetaReviewUnreachable(Exception):
    """The meta-review's endpoint never answered: the paper is not finished (a record saved
    without its meta-review would never get one), and the next run reviews it again (its
    reviews come from the LLM cache)."""


def unscored_reason(error: LLMError) -> str:
    """Why a review is unscored: the kind of failure, then the error's first characters."""
    kind = (
        TRUNCATED
        if isinstance(error, LLMTruncatedError)
        else "unparseable"
        if isinstance(error, LLMOutputError)
        else UNREACHABLE
        if isinstance(error, LLMTransportError)
        else "failed"
    )
    detail = " ".join(str(error).split())
    if len(detail) > MAX_REASON_CHARS:
        detail = detail[: MAX_REASON_CHARS - 1] + "…"
    return f"{kind}: {detail}"


def unreachable(review: PaperReview) -> bool:
    """Whether a review of the paper failed because its endpoint never answered (retry it)."""
    return any(u.reason.startswith(UNREACHABLE + ":") for u in review.unscored)


def unfinished(review: PaperReview) -> str | None:
    """Why a paper's review is not final, or None when it is: a review whose endpoint never
    answered, or that the token limit cut. ``papergym review`` does not save such a paper, and
    its next run reviews it again (the reviews that were scored come from the LLM cache)."""
    for kind in (UNREACHABLE, TRUNCATED):
        found = [u.reason for u in review.unscored if u.reason.startswith(kind + ":")]
        if found:
            hint = (
                "; raise review.max_tokens (and llm max_tokens_ceiling), then run again"
                if kind == TRUNCATED
                else ""
            )
            return found[0] + hint
    return None


class LLMReviewer:
    """Simulated peer review through the LLM layer (see the module docstring)."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        reviewers: int = 4,
        scale: VenueScale = ICLR,
        threshold: float = DEFAULT_THRESHOLD,
        temperature: float = 0.7,
        max_tokens: int = 2048,
        max_paper_words: int = 12000,
        meta_review: bool = True,
        seed: int = 0,
        profiles: Sequence[ReviewerProfile] | None = None,
        executor: Executor | None = None,
    ) -> None:
        if reviewers < 1:
            raise ValueError(f"reviewers must be at least 1, not {reviewers}")
        self.llm = llm
        self.scale = scale
        self.threshold = threshold
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_paper_words = max_paper_words
        self.meta_review = meta_review
        self.seed = seed
        self.panel = panel(reviewers, profiles or load_profiles(), seed)
        self.executor = executor
        """Where papers are anonymised and fitted (see :func:`off_loop`); None: here."""

    @classmethod
    def from_settings(
        cls,
        llm: LLMClient,
        settings: ReviewSection,
        scale: VenueScale = ICLR,
        threshold: float = DEFAULT_THRESHOLD,
        executor: Executor | None = None,
    ) -> LLMReviewer:
        """The reviewer the ``review`` section describes (``threshold``: the resolved one)."""
        return cls(
            llm,
            reviewers=settings.reviewers,
            scale=scale,
            threshold=settings.threshold if settings.threshold is not None else threshold,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            max_paper_words=settings.max_paper_words,
            meta_review=settings.meta_review,
            seed=settings.seed,
            executor=executor,
        )

    @property
    def model(self) -> str:
        return self.llm.config.for_role("reviewer").model

    @property
    def name(self) -> str:
        return f"llm:{self.model}:{len(self.panel)} reviewers"

    @property
    def identity(self) -> str:
        """Everything that can change this reviewer's reviews (a reward's cache key)."""
        return json.dumps(
            {
                "name": self.name,
                "panel": [(n, p.description, s) for n, p, s in self.panel],
                "scale": self.scale.model_dump(mode="json"),
                "sampling": [self.temperature, self.max_tokens, self.max_paper_words],
                "backend": self.llm.identity("reviewer"),  # endpoint normalised, no credentials
            },
            sort_keys=True,
        )

    def estimated_usage(self, text: str) -> Usage:
        """A generous estimate of what reviewing ``text`` costs, every call at its longest:
        each reviewer's prompt (the paper as fitted, in its template) and answer, and the
        meta-review's. A token budget starts a paper only when this fits in what is left."""
        words = len(text.split())
        fitted = (
            len(text) if words <= self.max_paper_words else len(text) * self.max_paper_words / words
        )
        prompt = _tokens(len(_template("review").template) + fitted)
        calls = len(self.panel)
        prompts = calls * prompt
        if self.meta_review:  # the paper's opening and every review, shown at their longest
            shown = OPENING_WORDS * WORD_CHARS + calls * self.max_tokens * CHARS_PER_TOKEN
            prompts += _tokens(len(_template("meta_review").template) + shown)
            calls += 1
        return Usage(prompt_tokens=prompts, completion_tokens=calls * self.max_tokens)

    def _params(self, seed: int) -> SamplingParams:
        base = self.llm.config.for_role("reviewer").params
        return base.model_copy(
            update={"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": seed}
        )

    async def review(self, paper_id: str, text: str) -> PaperReview:
        """Every reviewer's review of one paper, its score, decision and meta-review."""
        anonymised, fitted = await off_loop(
            self.executor, prepare_paper, text, self.max_paper_words
        )
        if not fitted.text.strip():
            results: list[Review | UnscoredReview] = [
                UnscoredReview(reviewer=name, seed=seed, reason="empty paper: nothing to review")
                for name, _, seed in self.panel
            ]
        else:
            results = list(
                await asyncio.gather(
                    *(
                        self._one(index, name, profile, seed, fitted.text)
                        for index, (name, profile, seed) in enumerate(self.panel)
                    )
                )
            )
        reviews = [r for r in results if isinstance(r, Review)]
        score = mean_rating(reviews)
        meta = await self._meta(fitted.text, reviews) if reviews and self.meta_review else None
        return PaperReview(
            paper_id=paper_id,
            source=paper_id,
            reviewer_model=self.model,
            baseline=False,
            reviews=reviews,
            unscored=[r for r in results if isinstance(r, UnscoredReview)],
            meta_review=meta,
            score=score,
            decision=decide(score, self.threshold),
            threshold=self.threshold,
            removed=list(anonymised.removed),
            fit=fitted.rule,
        )

    async def _one(
        self, index: int, name: str, profile: ReviewerProfile, seed: int, paper: str
    ) -> Review | UnscoredReview:
        try:
            result = await self.llm.call(
                "reviewer",
                review_messages(profile, self.scale, paper),
                schema=answer_schema(self.scale),
                params=self._params(seed),
                stage=REVIEW_STAGE,
                sample_index=index,
            )
        except BudgetExceededError:
            raise  # the run stops cleanly; finished papers are kept
        except LLMError as error:
            return UnscoredReview(reviewer=name, seed=seed, reason=unscored_reason(error))
        answer = result.parsed
        if answer is None:  # the layer validates a schema call; a None means a bug upstream
            return UnscoredReview(reviewer=name, seed=seed, reason="unparseable: no answer")
        return Review(reviewer=name, seed=seed, **_fields(answer, paper))

    async def _meta(self, paper: str, reviews: Sequence[Review]) -> str | None:
        try:
            result = await self.llm.call(
                "reviewer",
                meta_review_messages(self.scale, paper, reviews),
                params=self._params(self.seed),
                stage=META_STAGE,
            )
        except BudgetExceededError:
            raise
        except LLMTransportError as error:  # an endpoint that never answered is not a verdict
            raise MetaReviewUnreachable(f"meta-review: {unscored_reason(error)}") from None
        except LLMError:
            return None  # the meta-review is commentary: the score stands without it
        return strip_reasoning(result.text) or None


def _tokens(chars: float) -> int:
    return int(chars / CHARS_PER_TOKEN) + 1


def _fields(answer: ReviewAnswer, paper: str) -> dict[str, Any]:
    """The review's fields, its points' quotes checked against ``paper`` (as the reviewer read
    it) into citations."""
    data = answer.model_dump(exclude={"strengths", "weaknesses"})
    data["questions"] = [" ".join(item.split()) for item in data["questions"] if item.strip()]
    data["summary"] = " ".join(data["summary"].split())
    strengths = [p for p in answer.strengths if p.point.strip()]
    weaknesses = [p for p in answer.weaknesses if p.point.strip()]
    data["strengths"] = [" ".join(p.point.split()) for p in strengths]
    data["weaknesses"] = [" ".join(p.point.split()) for p in weaknesses]
    data["citations"] = cited("strength", strengths, paper) + cited("weakness", weaknesses, paper)
    return data


def cited(
    claim: Literal["strength", "weakness"], points: Sequence[CitedPoint], paper: str
) -> list[Citation]:
    """The citations of ``points`` (those that quote something), each checked against
    ``paper``: a quote not in it is kept with ``found=False``, to be counted."""
    return [
        Citation(
            claim=claim,
            index=index,
            quote=" ".join(point.quote.split()),
            found=quote_problem(point.quote, paper) is None,
        )
        for index, point in enumerate(points)
        if point.quote is not None and quote_problem(point.quote, "") != QUOTE_MISSING
    ]
