"""The pure rules of ``train cycle``: input sampling, pair selection, round metrics, and the
rule-based structure reviewer."""

from __future__ import annotations

import asyncio

import pytest

from papergym.review.reward import ReviewReward
from papergym.train.cycle.records import (
    CycleInput,
    Pair,
    Paper,
    Skip,
    round_inputs,
    round_metrics,
    select_pair,
    watch_agreement,
)
from papergym.train.cycle.reviewers import StructureReviewer, citations_of, sections_of

ITEM = CycleInput(id="a", prompt="Write.")


def paper(sample: int, score: float | None, watch: float | None = None, text: str = "") -> Paper:
    return Paper(
        input_id="a",
        sample=sample,
        text=text or f"paper {sample}",
        tokens=3,
        words=len((text or f"paper {sample}").split()),
        score=score,
        rating=None if score is None else 1 + 9 * score,
        reason="unparseable" if score is None else None,
        watch_score=watch,
    )


def test_rounds_take_fresh_inputs_first_then_refill() -> None:
    ids = [f"i{n}" for n in range(9)]
    plan = round_inputs(ids, rounds=4, fraction=1 / 3, seed=0)
    assert [len(r) for r in plan] == [3, 3, 3, 3]
    assert sorted(x for r in plan[:3] for x in r) == ids  # three rounds use every input once
    assert all(len(set(r)) == len(r) for r in plan)
    assert plan == round_inputs(ids, rounds=4, fraction=1 / 3, seed=0)  # seeded
    assert plan != round_inputs(ids, rounds=4, fraction=1 / 3, seed=1)


def test_a_short_fresh_pool_is_topped_up_without_repeats() -> None:
    ids = [f"i{n}" for n in range(5)]
    plan = round_inputs(ids, rounds=3, fraction=0.4, seed=3)  # 2 a round: 2, 2, then 1 fresh + 1
    assert [len(r) for r in plan] == [2, 2, 2]
    first_two = {x for r in plan[:2] for x in r}
    leftover = set(ids) - first_two
    assert leftover <= set(plan[2])
    assert round_inputs([], rounds=2, fraction=0.5, seed=0) == []


def test_chosen_is_best_rejected_is_worst_unscored_left_out() -> None:
    pair = select_pair(ITEM, [paper(0, 0.2), paper(1, None), paper(2, 0.9), paper(3, 0.5)])
    assert isinstance(pair, Pair)
    assert (pair.chosen, pair.rejected) == ("paper 2", "paper 0")
    assert (pair.chosen_score, pair.rejected_score) == (0.9, 0.2)


def test_ties_and_unscored_give_skips_with_reasons() -> None:
    tie = select_pair(ITEM, [paper(0, 0.5), paper(1, 0.5), paper(2, None)])
    assert tie == Skip(input_id="a", reason="tie", scored=2)
    lone = select_pair(ITEM, [paper(0, 0.5), paper(1, None), paper(2, None)])
    assert lone == Skip(input_id="a", reason="unscored", scored=1)
    # equal best scores: the earlier sample is chosen; a distinct worst still makes a pair
    pair = select_pair(ITEM, [paper(0, 0.1), paper(1, 0.8), paper(2, 0.8)])
    assert isinstance(pair, Pair) and pair.chosen == "paper 1"


def test_round_metrics_count_skips_and_the_watch_agreement() -> None:
    papers = [paper(0, 0.2, 0.1), paper(1, 0.9, 0.7), paper(2, 0.5, 0.9), paper(3, None, 0.3)]
    pair = select_pair(ITEM, papers)
    assert isinstance(pair, Pair)
    skips = [
        Skip(input_id="b", reason="tie", scored=3),
        Skip(input_id="c", reason="unscored", scored=0),
    ]
    m = round_metrics(papers, [pair], skips)
    assert (m["papers"], m["unscored_papers"], m["pairs"]) == (4, 1, 1)
    assert (m["skipped_tie"], m["skipped_unscored"]) == (1, 1)
    assert m["chosen_score"] == 0.9 and m["rejected_score"] == 0.2
    assert m["margin"] == pytest.approx(0.7)
    assert m["unscored_reasons"] == {"unparseable": 1}
    assert m["watch_papers"] == 3
    assert m["watch_spearman"] == pytest.approx(0.5)  # ranks (1,3,2) vs (1,2,3)
    assert m["watch_pair_agreement"] == 1.0  # the watch also prefers 0.7 over 0.1


def test_watch_ties_and_missing_scores_are_not_disagreement() -> None:
    tied = Pair(
        input_id="a",
        prompt="",
        chosen="x",
        rejected="y",
        chosen_score=1,
        rejected_score=0,
        chosen_watch=0.5,
        rejected_watch=0.5,
    )
    unseen = tied.model_copy(update={"chosen_watch": None})
    result = watch_agreement([], [tied, unseen])
    assert (result["watch_pairs"], result["watch_pair_ties"]) == (1, 1)
    assert result["watch_pair_agreement"] is None
    assert result["watch_spearman"] is None


GOOD = r"""\title{T}
\section{Introduction} We build on \cite{k1}.
\section{Method} Ours, after \citep{k1,k2}.
\section{Experiments and results} Simulated numbers.
\section{Conclusion} Done."""


def test_structure_reviewer_checks_sections_order_and_citations() -> None:
    assert sections_of(GOOD) == ["introduction", "method", "experiments and results", "conclusion"]
    assert sections_of("# Introduction\n## Method\n") == ["introduction", "method"]
    assert citations_of(GOOD) == ["k1", "k1", "k2"]
    reviewer = StructureReviewer(allowed_keys=lambda text: {"k1", "k2"})
    assert reviewer.rating(GOOD) == 10.0
    assert StructureReviewer(allowed_keys=lambda text: {"k1"}).rating(GOOD) < 10.0
    swapped = (
        GOOD.replace("Method", "TMP").replace("Conclusion", "Method").replace("TMP", "Conclusion")
    )
    assert reviewer.checks(swapped)[4] is False  # every section there, out of order
    assert reviewer.rating("no sections, no citations") == 1.0


def test_structure_reviewer_through_review_reward() -> None:
    scores = asyncio.run(ReviewReward(StructureReviewer()).ascore_many([GOOD, "nothing here"]))
    assert scores[0].value == 1.0
    assert scores[1].value == 0.0 and scores[1].reason is None


def test_reviewers_are_built_from_the_config() -> None:
    from papergym.errors import BadInputError
    from papergym.settings.train import TrainConfig
    from papergym.train.cycle.reviewers import build_reviewer, build_scorer

    config = TrainConfig()
    assert isinstance(build_reviewer("structure", config), StructureReviewer)
    offline = build_scorer("offline", config)  # the shipped, fitted baseline
    (score,) = asyncio.run(offline.ascore_many([GOOD]))
    assert score.value is not None and 0.0 <= score.value <= 1.0
    with pytest.raises(BadInputError, match="needs an LLM"):
        build_reviewer("llm", config)  # no llm: section configured
