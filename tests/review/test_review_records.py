"""The review records' pure rules: scale mapping, mean rating, decision."""

from __future__ import annotations

import pytest

from papergym.review.records import ICLR, Review, VenueScale, decide, mean_rating, scale_value


def review(rating: int) -> Review:
    return Review(
        reviewer="r", seed=0, summary="s", strengths=[], weaknesses=[], questions=[],
        soundness=2, presentation=2, contribution=2, rating=rating, confidence=3,
    )  # fmt: skip


def test_review_records_scale_value_maps_the_iclr_range_to_unit() -> None:
    assert ICLR.ratings == (1, 3, 5, 6, 8, 10)
    assert scale_value(1) == 0.0 and scale_value(10) == 1.0 and scale_value(5.5) == 0.5
    assert scale_value(12) == 1.0 and scale_value(0) == 0.0


def test_review_records_mean_rating_keeps_ten_and_never_invents_zero() -> None:
    assert mean_rating([review(10), review(8)]) == 9.0
    assert mean_rating([]) is None


def test_review_records_decision_from_threshold_only() -> None:
    assert decide(5.5, 5.5) == "accept" and decide(5.49, 5.5) == "reject"
    assert decide(None, 5.5) is None


def test_review_records_venue_scale_must_ascend() -> None:
    with pytest.raises(ValueError):
        VenueScale(name="x", ratings=(3, 1))
    with pytest.raises(ValueError):
        Review.model_validate({**review(3).model_dump(), "soundness": 5})
