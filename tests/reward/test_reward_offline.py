"""The offline (embedding + coverage) judge and its calibration, on a tiny fixture.

The fixture's criteria are in the extractive builder's requirement form ("The plan covers:
..."); they used to be near-copies of the reference sentences, the form that made listing the
rubric a perfect answer (issue 23).
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from papergym.records import Criterion, GeneralCriterion, Instance, Rubric
from papergym.reward.offline import (
    OfflineJudge,
    auc_score,
    best_threshold,
    calibrate,
    criterion_core,
    encode_answers,
    key_words,
    pair_vectors,
    passages,
)
from papergym.reward.reward import RubricReward
from papergym.text import split_sentences

PAPERS = {
    "gp": (
        "We build kernels for Gaussian processes by composing base kernels with sums and products. "
        "A greedy search over the kernel grammar picks the structure with the best marginal "
        "likelihood. Each kernel in the final model is described in plain English. "
        "We evaluate extrapolation on airline passenger and solar irradiance time series.",
        [
            "The plan covers: base kernels; sums; products.",
            "The plan covers: greedy search; kernel grammar; marginal likelihood.",
            "The plan covers: plain English.",
            "The plan covers: extrapolation; airline passenger; solar irradiance.",
        ],
    ),
    "econ": (
        "We estimate the effect of compulsory schooling laws on adult skills. "
        "The identification uses differences in reform timing across regions. "
        "Skills are measured with literacy and numeracy test scores from a survey of adults. "
        "Standard errors are clustered at the regional level.",
        [
            "The plan covers: compulsory schooling laws; adult skills.",
            "The plan covers: reform timing; regions.",
            "The plan covers: literacy; numeracy test scores.",
            "The plan covers: standard errors; clustered.",
        ],
    ),
    "astro": (
        "We model stellar light curves with a fast celerite Gaussian process solver. "
        "The solver scales linearly with the number of observations. "
        "We fit rotation periods of stars from Kepler photometry. "
        "We compare runtime against a dense Cholesky factorisation.",
        [
            "The plan covers: stellar light curves; celerite.",
            "The plan covers: solver scales linearly; observations.",
            "The plan covers: rotation periods; Kepler photometry.",
            "The plan covers: runtime; dense Cholesky factorisation.",
        ],
    ),
}


def _instance(key: str) -> Instance:
    reference, criteria = PAPERS[key]
    return Instance(
        id=key,
        recipe="papergym",
        builder="extractive",
        paper_id=key,
        title=key,
        question=f"Propose a research plan for {key}.",
        reference_answer=reference,
        rubric=Rubric(
            specific=tuple(
                Criterion(id=f"{key}{n}", text=t, dimension="method", origin="extractive", rank=n)
                for n, t in enumerate(criteria, start=1)
            ),
            general=(GeneralCriterion(id="general-justification", text="Justifies choices."),),
        ),
    )


INSTANCES = [_instance(k) for k in PAPERS]


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    return OfflineJudge()


def _met(judge: OfflineJudge, instance: Instance, answer: str) -> int:
    specific, _ = judge.judge_sync(instance, answer)
    return sum(v.passed is True for v in specific)


def test_reward_offline_own_reference_meets_most_other_few_empty_none(judge: OfflineJudge) -> None:
    for instance in INSTANCES:
        own = _met(judge, instance, instance.reference_answer)
        assert own >= 3, instance.id
        for other in INSTANCES:
            if other.id != instance.id:
                assert _met(judge, instance, other.reference_answer) <= 1, (instance.id, other.id)
        assert _met(judge, instance, "") == 0
        assert _met(judge, instance, "<think>all of it</think>") == 0


def test_reward_offline_verdicts_are_deterministic_and_general_unscored(
    judge: OfflineJudge,
) -> None:
    instance = INSTANCES[0]
    answer = f"<think>{PAPERS['econ'][0]}</think>{instance.reference_answer}"
    first = judge.judge_sync(instance, answer)
    assert judge.judge_sync(instance, answer) == first
    assert asyncio.run(judge.judge(instance, answer)) == first
    specific, general = first
    assert [v.criterion_id for v in specific] == ["gp1", "gp2", "gp3", "gp4"]
    assert all(v.reason.startswith("offline heuristic") for v in specific)
    assert general == []  # no general pass: the reward is the specific mean alone
    empty_specific, _ = judge.judge_sync(instance, "")
    assert all(v.passed is False and v.reason == "the answer is empty" for v in empty_specific)


def test_reward_offline_text_helpers() -> None:
    assert criterion_core("The plan specifies that the solver is fast.") == "The solver is fast."
    assert criterion_core("The plan uses kernels.") == "Uses kernels."
    assert "plan" not in key_words("The plan specifies kernels")
    assert key_words("kernels") == key_words("kernel")
    assert passages("One idea. Two ideas. Three.") == [
        "One idea.",
        "Two ideas.",
        "Three.",
        "One idea. Two ideas.",
        "Two ideas. Three.",
    ]
    assert passages("") == []
    with pytest.raises(ValueError):
        OfflineJudge(lexical_weight=2.0)


def test_reward_offline_threshold_and_auc_helpers() -> None:
    assert auc_score([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc_score([0.5], [0.5]) == 0.5
    threshold, balanced, tpr, tnr = best_threshold([0.8, 0.9], [0.1, 0.4])
    assert 0.4 < threshold <= 0.8 and balanced == tpr == tnr == 1.0
    assert threshold == pytest.approx(0.6)  # the midpoint of the tied range


def test_reward_offline_calibrate_on_tiny_fixture() -> None:
    report = calibrate(INSTANCES, lexical_weights=(0.0, 0.3, 1.0))
    assert report.instances == 3 and report.positives == 12 and report.negatives == 24
    assert report.balanced_accuracy >= 0.9 and report.auc >= 0.95
    assert report.lexical_weight in (0.0, 0.3, 1.0)
    assert set(report.by_weight) == {"0", "0.3", "1"}
    assert 0.0 < report.threshold < 1.0
    with pytest.raises(ValueError):
        calibrate(INSTANCES[:1])


def test_reward_offline_criteria_listing_and_word_salad_meet_nothing(judge: OfflineJudge) -> None:
    for instance in INSTANCES:
        listing = "\n".join(f"- {c.text}" for c in instance.rubric.specific)
        assert _met(judge, instance, listing) == 0, instance.id
        salad = " ".join(sorted(instance.reference_answer.split(), key=lambda w: (len(w), w)))
        assert _met(judge, instance, salad) == 0, instance.id
        assert _met(judge, instance, instance.reference_answer) >= 3, instance.id


def test_reward_offline_one_frame_filled_with_each_criterion_meets_at_most_one(
    judge: OfflineJudge,
) -> None:
    # The dressed word list (issue 23): grammatical, novel filler words, the rubric's words.
    from papergym.reward.check import _dressed, _dressed_varied

    for instance in INSTANCES:
        texts = [c.text for c in instance.rubric.specific]
        dressed = " ".join(_dressed(t) for t in texts)
        assert _met(judge, instance, dressed) <= 1, instance.id
        # the reference, whose sentences say different things, keeps its verdicts
        assert _met(judge, instance, instance.reference_answer) >= 3, instance.id
        # the limit, said in docs/reward.md: a frame of its own per criterion still passes
        assert _met(judge, instance, _dressed_varied(texts)) >= 3, instance.id


def test_reward_offline_batched_scores_match_one_by_one(judge: OfflineJudge) -> None:
    pairs = [(i, o.reference_answer) for i in INSTANCES for o in INSTANCES]
    alone = [judge.judge_sync(i, a) for i, a in pairs]
    together = judge.judge_many(pairs)
    assert [[v.passed for v in s] for s, _ in together] == [[v.passed for v in s] for s, _ in alone]
    gathered = RubricReward(judge).score_many(pairs)  # gathered calls: judged as one batch
    assert [s.value for s in gathered] == [
        sum(v.passed is True for v in specific) / len(specific) for specific, _ in alone
    ]
    one = encode_answers([split_sentences(a) for _, a in pairs[:1]])[0].vectors
    many = encode_answers([split_sentences(a) for _, a in pairs])[0].vectors
    assert abs(one - many).max() < 1e-6


def test_reward_offline_pair_vectors_are_unit_sums() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    pairs = pair_vectors(vectors)
    assert pairs.shape == (2, 2)
    assert np.allclose(pairs[0], [2**-0.5, 2**-0.5]) and np.allclose(pairs[1], [0.0, 1.0])
    assert pair_vectors(vectors[:1]).shape == (0, 2)


def test_reward_offline_a_cancelled_first_caller_does_not_strand_its_batch(
    judge: OfflineJudge,
) -> None:
    instance = INSTANCES[0]

    async def go() -> list[object]:
        calls = [asyncio.create_task(judge.judge(instance, instance.reference_answer))]
        await asyncio.sleep(0)  # the first call has opened the batch
        calls += [asyncio.create_task(judge.judge(o, o.reference_answer)) for o in INSTANCES[1:]]
        await asyncio.sleep(0)
        calls[0].cancel()
        return await asyncio.wait_for(asyncio.gather(*calls[1:]), timeout=120)

    judged = asyncio.run(go())
    assert len(judged) == len(INSTANCES) - 1
