"""The review reward's gaming probes, the guarded reward, and ``check-reward --reward review``."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.review.guards import split_sentences
from papergym.review.offline import tokens
from papergym.review.probes import (
    probe_reward,
    probe_texts,
    read_probe_papers,
    shuffled_sentences,
    top_words,
)
from papergym.review.records import ICLR, PaperReview, decide
from papergym.review.reward import ReviewReward
from papergym.review.runtime import guards_for
from papergym.review.settings import GuardSettings, ReviewSection
from support.review_papers import FAVOURITES, synthetic_paper, write_baseline


class FavouriteWords:
    """A word-weight reviewer: 3 plus the share of its favourite words in the text, times 7;
    the kind of reviewer the probes game."""

    name = "favourite-words"

    def __init__(self, favourites: frozenset[str]) -> None:
        self.favourites = favourites
        self.baseline = type("Weights", (), {"terms": {w: (1.0, 1.0) for w in favourites}})()

    async def review(self, paper_id: str, text: str) -> PaperReview:
        words = tokens(text.lower())
        share = sum(w in self.favourites for w in words) / len(words) if words else 0.0
        score = min(float(ICLR.high), 3.0 + 7.0 * share)
        return PaperReview(
            paper_id=paper_id,
            source=paper_id,
            reviewer_model=self.name,
            baseline=True,
            score=score,
            decision=decide(score, 5.5),
            threshold=5.5,
        )


PAPER = synthetic_paper(paragraphs_per_section=4)


def test_probe_texts_are_made_from_the_paper() -> None:
    weights = {"sparaion": 2.0, "grapaity": 1.0, "absent": 9.0}
    assert top_words(PAPER, weights, 2) == ["sparaion", "grapaity"]
    texts = probe_texts(PAPER, weights)
    assert list(texts) == ["original", "word_list", "words_appended", "duplicated", "shuffled"]
    assert texts["word_list"] == "sparaion grapaity"
    assert texts["words_appended"].endswith(" sparaion grapaity" * 3)
    assert texts["duplicated"].count("1 INTRODUCTION") == 2


def test_shuffled_sentences_keep_the_sentences_and_the_paragraphs() -> None:
    shuffled = shuffled_sentences(PAPER, "a")
    # a heading poured into a paragraph runs into the next sentence: compare the words
    assert Counter(shuffled.split()) == Counter(PAPER.split())
    assert split_sentences(shuffled)[:5] != split_sentences(PAPER)[:5]
    assert shuffled.count("\n\n") == PAPER.strip().count("\n\n")
    assert shuffled != PAPER and shuffled == shuffled_sentences(PAPER, "a")


def run_probes(reward: ReviewReward) -> dict[str, tuple[int, float]]:
    report = asyncio.run(
        probe_reward(reward, "test", [PAPER], {w: 1.0 for w in FAVOURITES}, allowed=0)
    )
    return {row.probe: (row.beats, row.mean_change or 0.0) for row in report.rows}


def test_without_guards_the_word_list_and_appended_words_beat_the_paper() -> None:
    rows = run_probes(ReviewReward(FavouriteWords(FAVOURITES)))
    assert rows["word_list"][0] == 1 and rows["words_appended"][0] == 1


def test_with_guards_no_probe_beats_the_paper_and_the_score_says_what_fired() -> None:
    reward = ReviewReward(FavouriteWords(FAVOURITES), guards=GuardSettings())
    rows = run_probes(reward)
    assert all(beats == 0 for beats, _ in rows.values()), rows
    assert rows["word_list"][1] < -2.0
    original = reward.score(PAPER)
    assert original.fired == [] and original.raw_rating == original.rating
    listed = reward.score(" ".join(sorted(FAVOURITES)) * 20)
    assert listed.rating == ICLR.low and listed.fired == ["fluency_gate"]
    doubled = reward.score(PAPER + "\n\n" + PAPER)
    assert "duplication" in doubled.fired and doubled.raw_rating == original.rating
    assert doubled.rating is not None and original.rating is not None
    assert doubled.rating < original.rating


def test_guards_apply_to_the_reviewers_the_setting_names() -> None:
    section = ReviewSection()
    assert guards_for(section, "offline") == section.guards
    assert guards_for(section, "llm") is None and guards_for(section, "structure") is None
    every = ReviewSection(guards=GuardSettings(apply="all"))
    assert guards_for(every, "llm") == every.guards and guards_for(every, "structure") is None
    assert guards_for(ReviewSection(guards=GuardSettings(apply="none")), "offline") is None


def test_probe_papers_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file or folder"):
        read_probe_papers(tmp_path / "absent")
    with pytest.raises(BadInputError, match="holds no paper text"):
        read_probe_papers(tmp_path)
    (tmp_path / "b.txt").write_text("B", encoding="utf-8")
    (tmp_path / "a.md").write_text("A", encoding="utf-8")
    assert read_probe_papers(tmp_path) == [("a", "A"), ("b", "B")]
    assert read_probe_papers(tmp_path, limit=1) == [("a", "A")]


def test_check_reward_review_prints_probes_and_strict_fails_unguarded(tmp_path: Path) -> None:
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "paper.txt").write_text(PAPER, encoding="utf-8")
    baseline = f"review.baseline={write_baseline(tmp_path / 'baseline.json', PAPER)}"
    runner = CliRunner()
    command = ["check-reward", "--reward", "review", str(papers), baseline, "--strict"]
    guarded = runner.invoke(app, [*command, "--json"])
    assert guarded.exit_code == 0, guarded.output
    report = json.loads(guarded.output)
    assert report["failing"] == [] and report["papers"] == 1
    rows = {row["probe"]: row for row in report["rows"]}
    assert set(rows) == {"word_list", "words_appended", "duplicated", "shuffled"}
    assert rows["word_list"]["fired"] == {"fluency_gate": 1}
    unguarded = runner.invoke(app, [*command, "review.guards.apply=none"])
    assert unguarded.exit_code == 1, unguarded.output
    assert "word_list" in unguarded.output and "beats the original" in unguarded.output
    missing = runner.invoke(app, ["check-reward", "--reward", "review", str(tmp_path / "x")])
    assert missing.exit_code == 2 and "no such file or folder" in missing.output
