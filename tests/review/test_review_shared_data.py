"""The shared ICLR 2022 set (../shared/reviews/iclr2022), when present: it reads, anonymisation
holds on it, the shipped baseline scores it. Skipped when the folder is absent; nothing here
depends on its exact contents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from papergym.review.anonymise import anonymise
from papergym.review.data import LinearScale, read_papers, read_predictions, read_ratings
from papergym.review.leak import surface_leak
from papergym.review.offline import OfflineReviewer
from papergym.review.records import ICLR

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "reviews" / "iclr2022"
CODE_STUB = re.compile(
    r"\b(?:available|found|released|hosted)\s+(?:at|on|from|here)\s*:?[\s*_]*\]", re.IGNORECASE
)
pytestmark = pytest.mark.skipif(not (SHARED / "ratings.tsv").is_file(), reason="no shared set")


def sample(count: int) -> tuple[list, dict[str, str]]:  # type: ignore[type-arg]
    papers = read_ratings(SHARED / "ratings.tsv", ICLR)
    accepted = [p for p in papers if p.accepted][: count // 2]
    rejected = [p for p in papers if not p.accepted][: count // 2]
    chosen = accepted + rejected
    return chosen, read_papers(SHARED / "papers", chosen, SHARED / "ratings.tsv")


def test_shared_set_reads_and_anonymises() -> None:
    papers, texts = sample(12)
    for paper in papers:
        raw = texts[paper.paper_id]
        result = anonymise(raw)
        kept = len(result.text) / len(raw)
        assert kept > 0.8, paper.paper_id
        for mark in ("Paper under double-blind review", "Anonymous authors",
                     "Published as a conference paper"):  # fmt: skip
            assert mark not in result.text
        if paper.accepted:
            assert any(r.kind == "author-block" for r in result.removed), paper.paper_id
        # no "Code is available at ]" left where a URL was cut, no anonymous link
        assert not CODE_STUB.search(result.text), paper.paper_id
        assert "4open.science" not in result.text, paper.paper_id


def test_shipped_baseline_scores_shared_papers() -> None:
    papers, texts = sample(6)
    scores = OfflineReviewer().predict([texts[p.paper_id] for p in papers])
    assert all(1.0 <= s <= 10.0 for s in scores)


def test_external_predictions_read_with_a_mapping() -> None:
    external = next((SHARED / "external").glob("*.csv"), None)
    if external is None:
        pytest.skip("no external predictions")
    loaded = read_predictions(
        external, id_column="paper_id", score_column="Overall", decision_column="Decision",
        mapping=LinearScale(1, 10), scale=ICLR,
    )  # fmt: skip
    assert loaded and all(p.score is None or 1 <= p.score <= 10 for p in loaded.values())


@pytest.mark.slow
def test_surface_leak_falls_to_chance_after_anonymisation() -> None:
    papers, texts = sample(60)
    result = surface_leak([texts[p.paper_id] for p in papers], [p.accepted for p in papers])
    assert result.before is not None and result.before > 0.9
    assert result.after is not None and result.after < 0.75
