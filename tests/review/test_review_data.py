"""Reading ratings, papers, reviews and external predictions."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.review.data import (
    LinearScale,
    read_paper_text,
    read_predictions,
    read_ratings,
    read_reviews,
)
from papergym.review.records import ICLR


def test_a_pdf_extraction_with_stray_nul_bytes_is_text(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes(b"# Title\n\nSome text\x00 with a stray NUL from the PDF.\n")
    assert read_paper_text(path) == "# Title\n\nSome text with a stray NUL from the PDF.\n"


def test_whitespace_only_paper_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("  \n\n")
    with pytest.raises(BadInputError, match="empty"):
        read_paper_text(path)


def test_ratings_need_the_header_and_two_ratings(tmp_path: Path) -> None:
    path = tmp_path / "r.tsv"
    path.write_text("id\t0\tdecision\n")
    with pytest.raises(BadInputError, match="header"):
        read_ratings(path, ICLR)
    path.write_text("paper_id\t0\t1\tdecision\na\t5\t\tReject\n")
    with pytest.raises(BadInputError, match="at least 2"):
        read_ratings(path, ICLR)
    path.write_text("paper_id\t0\t1\tdecision\na\t5\t6\tMaybe\n")
    with pytest.raises(BadInputError, match="neither"):
        read_ratings(path, ICLR)
    path.write_text("paper_id\t0\t1\tdecision\na\t5\t6\tAccept (Oral)\n")
    (paper,) = read_ratings(path, ICLR)
    assert paper.accepted and paper.mean_rating == 5.5


def test_reviews_file_with_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "reviews.jsonl"
    path.write_text('{"paper_id": "a"}\n')
    with pytest.raises(BadInputError, match="line 1"):
        read_reviews(path, ICLR)


def test_linear_scale_mapping(tmp_path: Path) -> None:
    mapping = LinearScale.parse("0:4")
    assert mapping.to_venue(0, ICLR) == 1.0 and mapping.to_venue(4, ICLR) == 10.0
    assert mapping.to_venue(2, ICLR) == pytest.approx(5.5)
    for text in ("4:0", "x", "1:2:3"):
        with pytest.raises(BadInputError):
            LinearScale.parse(text)
    path = tmp_path / "p.csv"
    path.write_text("paper_id,Overall,Decision\na,2,Accept\nb,,\n")
    loaded = read_predictions(
        path, id_column="paper_id", score_column="Overall", decision_column="Decision",
        mapping=mapping, scale=ICLR,
    )  # fmt: skip
    assert loaded["a"].score == pytest.approx(5.5) and loaded["a"].decision == "accept"
    assert loaded["b"].score is None  # the reviewer's unscored paper, not a zero
