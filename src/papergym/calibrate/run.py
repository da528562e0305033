"""``papergym judge calibrate``'s work, callable from Python: which labels were given decides
what is measured — criterion labels (JSONL) measure a rubric judge on built instances; a
ratings file (TSV, as ``review fit`` reads) measures a reviewer's predictions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from papergym.calibrate.records import ReviewCalibration, RubricCalibration
from papergym.calibrate.review import calibrate_reviewer
from papergym.calibrate.rubric import calibrate_rubric
from papergym.calibrate.settings import CalibrateSection
from papergym.errors import BadInputError
from papergym.llm.config import LLMConfig
from papergym.review.settings import ReviewSection
from papergym.reward.settings import RewardSection

RATINGS_SUFFIXES = (".tsv", ".tab")


@dataclass(frozen=True)
class CalibrationRequest:
    """The labels, and what is measured against them: ``instances`` for a rubric judge, or
    ``reviews`` (a reviews.jsonl or a predictions CSV) for a reviewer; ``out``: a folder."""

    labels: Path
    instances: Path | None = None
    reviews: Path | None = None
    out: Path | None = None


def is_ratings(labels: Path) -> bool:
    """Whether ``labels`` is a reviewer's ratings file (tab-separated) rather than criterion
    labels (JSONL)."""
    return labels.suffix.lower() in RATINGS_SUFFIXES


def calibrate(
    request: CalibrationRequest,
    section: CalibrateSection,
    reward: RewardSection,
    llm: LLMConfig,
    review: ReviewSection,
) -> RubricCalibration | ReviewCalibration:
    """Measure the judge (``reward``, ``llm``) or the reviewer's predictions (on ``review``'s
    venue and threshold) against ``request.labels``."""
    if request.out is not None and request.out.exists() and not request.out.is_dir():
        raise BadInputError(request.out, "exists and is not a folder")
    if is_ratings(request.labels):
        if request.reviews is None or request.instances is not None:
            raise BadInputError(
                request.labels, "is a ratings file: give --reviews (not --instances)"
            )
        return _reviewer(request, request.reviews, section, review)
    if request.instances is None or request.reviews is not None:
        raise BadInputError(
            request.labels, "holds criterion labels: give --instances (not --reviews)"
        )
    return _rubric(request, request.instances, section, reward, llm)


def _rubric(
    request: CalibrationRequest,
    instances: Path,
    section: CalibrateSection,
    reward: RewardSection,
    llm: LLMConfig,
) -> RubricCalibration:
    from papergym.reward.factory import judge_kind, judge_llm, make_judge

    offline = judge_kind(reward, llm) == "offline"
    notes = []
    if not offline and section.repeats > 1 and judge_llm(reward, llm).cache:
        notes.append(
            "the LLM cache is on: repeated judgements are answered from it, so repeat "
            "consistency is 1 by construction; run with --no-cache to measure it"
        )
    return calibrate_rubric(
        make_judge(reward, llm),
        instances,
        request.labels,
        section,
        deterministic=offline,
        out=request.out,
        notes=notes,
    )


def _reviewer(
    request: CalibrationRequest, reviews: Path, section: CalibrateSection, review: ReviewSection
) -> ReviewCalibration:
    from papergym.review.eval_run import reference_baseline
    from papergym.review.records import VENUES
    from papergym.review.runtime import checked_threshold

    threshold = checked_threshold(review)
    if threshold is None:  # the mean human rating that best matches the venue's decisions
        threshold = reference_baseline(None, review.baseline)[0].human_threshold
    return calibrate_reviewer(
        request.labels, reviews, VENUES[review.venue], threshold, section, request.out
    )
