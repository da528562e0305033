"""A reviewer against human ratings: decision agreement, kappa, correlation, consistency."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.calibrate.review import calibrate_reviewer, decision_consistency
from papergym.calibrate.settings import CalibrateSection
from papergym.errors import BadInputError
from papergym.review.records import ICLR

SECTION = CalibrateSection(resamples=50)
RATINGS = (
    "paper_id\t0\t1\t2\tdecision\n"
    "p1\t8\t8\t6\tAccept (Poster)\n"
    "p2\t3\t5\t3\tReject\n"
    "p3\t6\t8\t\tAccept (Oral)\n"
    "p4\t5\t3\t5\tReject\n"
    "p5\t6\t5\t6\tReject\n"
)


def files(tmp_path: Path, predictions: str) -> tuple[Path, Path]:
    ratings = tmp_path / "ratings.tsv"
    ratings.write_text(RATINGS, encoding="utf-8")
    csv = tmp_path / "oof.csv"
    csv.write_text("paper_id,score,decision\n" + predictions, encoding="utf-8")
    return ratings, csv


def test_decisions_by_hand(tmp_path: Path) -> None:
    # reviewer accepts p1, p3, p5 and rejects p2, p4; the venue accepted p1, p3
    # agreement 4/5; p_e = 0.6·0.4 + 0.4·0.6 = 0.48; kappa = (0.8 − 0.48)/0.52 = 8/13
    ratings, csv = files(
        tmp_path,
        "p1,7.5,Accept\np2,3.5,Reject\np3,7,Accept\np4,4,Reject\np5,6.5,Accept\n",
    )
    report = calibrate_reviewer(ratings, csv, ICLR, 5.5, SECTION, out=tmp_path / "o")
    assert report.papers == 5 and report.unscored == 0
    assert report.decision.agreement == pytest.approx(0.8)
    assert report.decision.kappa.value == pytest.approx(8 / 13)
    # mean human ratings 7.33, 3.67, 7, 4.33, 5.67: at 5.5, p1, p3, p5 -> all agree
    assert report.mean_rating.agreement == pytest.approx(1.0)
    assert report.pearson.r is not None and report.pearson.r > 0.9
    assert report.reviewer_consistency is None
    assert (tmp_path / "o" / "calibration.json").is_file()


def test_an_unscored_paper_is_counted_and_left_out(tmp_path: Path) -> None:
    ratings, csv = files(tmp_path, "p1,7.5,Accept\np2,,\np3,7,Accept\np4,4,Reject\n")
    report = calibrate_reviewer(ratings, csv, ICLR, 5.5, SECTION)
    assert report.papers == 3
    assert report.unscored == 2  # p2 unscored, p5 missing


def test_decision_consistency_by_hand() -> None:
    # paper 1: 8, 6, 3 at 5.5 -> T T F: pairs 1, 0, 0 -> 1/3; paper 2: 3, 5 -> F F -> 1
    assert decision_consistency([[8, 6, 3], [3, 5]], 5.5) == pytest.approx((1 / 3 + 1) / 2)
    assert decision_consistency([[8], []], 5.5) is None


def test_a_bad_predictions_file_is_refused(tmp_path: Path) -> None:
    ratings, csv = files(tmp_path, "p1,99,Accept\n")
    with pytest.raises(BadInputError, match=r"oof\.csv"):
        calibrate_reviewer(ratings, csv, ICLR, 5.5, SECTION)
