"""Building the reviewer and the review reward from the ``review`` section and the LLM
configuration, and the process-wide review reward.

The ``review`` section chooses the reviewer: ``llm`` (simulated reviewers through the reviewer
role of ``llm``), ``offline`` (the fitted baseline) or ``auto`` (llm when an LLM is
configured). The review reward the adapters share (TRL, verl, OpenRLHF, ``serve-reward
--reward review``) is built once per process from the ``review`` and ``llm`` sections of its
configuration (:mod:`papergym.processconfig`: a command's, else ``$PAPERGYM_CONFIG``'s) and runs
on the reward's background event loop, as the rubric reward does.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Literal

from pydantic import ConfigDict

from papergym import processconfig
from papergym.configbase import ConfigSection
from papergym.errors import BadInputError
from papergym.llm.config import LLMConfig, llm_or
from papergym.review.records import VENUES, VenueScale
from papergym.review.reviewer import Reviewer
from papergym.review.reward import ReviewReward
from papergym.review.settings import GuardSettings, ReviewSection

if TYPE_CHECKING:
    from papergym.llm.client import LLMClient

_lock = threading.Lock()
_reward: ReviewReward | None = None
_built_from: object | None = None  # the process configuration the shared reward was built from


class ReviewSections(ConfigSection):
    """The sections of the process's configuration the review reward reads; the others are
    other commands' business."""

    model_config = ConfigDict(extra="ignore")
    review: ReviewSection = ReviewSection()
    llm: LLMConfig = LLMConfig()


def venue_scale(section: ReviewSection) -> VenueScale:
    """The rating scale of ``review.venue``."""
    return VENUES[section.venue]


def checked_threshold(section: ReviewSection) -> float | None:
    """``review.threshold``, refused in one line unless it lies on the venue's rating range (a
    NaN, or a threshold below the lowest rating, would accept every paper without saying so)."""
    threshold = section.threshold
    scale = venue_scale(section)
    if threshold is not None and not scale.holds(threshold):
        raise BadInputError(
            None,
            f"review.threshold {threshold:g} is outside the {scale.name} rating range "
            f"{scale.low}..{scale.high} (accept when the score is at least the threshold)",
        )
    return threshold


def reviewer_kind(section: ReviewSection, llm: LLMConfig) -> Literal["llm", "offline"]:
    """Which reviewer ``review.reviewer`` names once ``auto`` is resolved (``llm``: whether an
    LLM is configured)."""
    return llm_or(section.reviewer, "offline", llm, "review.reviewer=llm needs an LLM")


def make_reviewer(
    section: ReviewSection,
    llm: LLMConfig,
    client: LLMClient | None = None,
    executor: Executor | None = None,
) -> Reviewer:
    """The reviewer ``section`` describes, through the reviewer role of ``llm``; ``client`` is
    used (not closed) when given; ``executor`` (a server's worker processes) anonymises the
    papers, off the event loop."""
    from papergym.review.offline import OfflineReviewer, load_baseline

    scale = venue_scale(section)
    checked_threshold(section)
    if reviewer_kind(section, llm) == "offline":
        return OfflineReviewer(
            path=section.baseline, threshold=section.threshold, scale=scale, executor=executor
        )
    from papergym.llm.client import LLMClient
    from papergym.review.reviewer import LLMReviewer

    threshold = section.threshold
    if threshold is None:  # calibrated on the human ratings the baseline was fitted on
        threshold = load_baseline(section.baseline).human_threshold
    client = client or LLMClient.from_config(llm)
    return LLMReviewer.from_settings(client, section, scale, threshold, executor=executor)


def make_review_reward(
    section: ReviewSection, llm: LLMConfig, executor: Executor | None = None
) -> ReviewReward:
    """The review reward ``section`` describes: ``review.partial`` for texts scored from fewer
    reviews than asked, ``review.max_answer_chars`` (0: none) for long texts. Its reviewer
    writes no meta-review: that text never changes a score, so for a reward it would be a
    wasted call per text. ``executor``: see :func:`make_reviewer`. The reward guards its
    reviewer as ``review.guards.apply`` says (see :func:`guards_for`)."""
    quiet = section.model_copy(update={"meta_review": False})
    return ReviewReward(
        make_reviewer(quiet, llm, executor=executor),
        scale=venue_scale(section),
        partial=section.partial,
        max_answer_chars=section.max_answer_chars or None,
        executor=executor,
        guards=guards_for(section, reviewer_kind(section, llm)),
    )


def guards_for(section: ReviewSection, kind: str) -> GuardSettings | None:
    """The guards a review reward around a ``kind`` reviewer (offline, llm, structure) gets:
    ``review.guards`` when ``review.guards.apply`` covers that kind, else None."""
    apply = section.guards.apply
    if (apply == "all" and kind != "structure") or (apply == "offline" and kind == "offline"):
        return section.guards
    return None


def shared_review_reward() -> ReviewReward:
    """The process's review reward, built on first use from the process's configuration (and
    again when a command sets another one)."""
    global _reward, _built_from
    config = processconfig.sections(ReviewSections)
    with _lock:
        if _reward is None or (_built_from is not None and _built_from is not config):
            _reward, _built_from = make_review_reward(config.review, config.llm), config
        return _reward


def set_shared_review_reward(reward: ReviewReward | None) -> None:
    """Use ``reward`` in every review adapter of this process (tests, a custom reviewer); None
    forgets it, so it is built again from the configuration on next use."""
    global _reward, _built_from
    with _lock:
        _reward, _built_from = reward, None
