"""The reward's score cache is keyed by content, bounded, and cannot cross rubrics; over-long
answers are cut and flagged.

The judge here is a real, deterministic one (a criterion is met when its text appears in the
answer), so two rubrics give visibly different scores without loading an embedding model.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator

import pytest

from papergym.records import Instance, Verdict
from papergym.reward import runtime
from papergym.reward.reward import RubricReward, judge_identity, limit_answer
from support.instances import rubric_instance


class ContainsJudge:
    """Met when the criterion's text occurs in the answer; counts its judgements."""

    def __init__(self, name: str = "contains") -> None:
        self._name = name
        self.calls = 0
        self.seen: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        self.calls += 1
        self.seen.append(answer)
        await asyncio.sleep(0.01)  # let concurrent duplicates overlap
        specific = [
            Verdict(criterion_id=c.id, passed=c.text in answer) for c in instance.rubric.specific
        ]
        general = [
            Verdict(criterion_id=g.id, passed=True, kind="general") for g in instance.rubric.general
        ]
        return specific, general


def make_instance(ident: str, topic: str) -> Instance:
    return rubric_instance(
        ident,
        [f"{topic} step {n}" for n in (1, 2)],
        question=f"How would you study {topic}?",
        reference_answer=f"We will do {topic} step 1 and then {topic} step 2.",
        title=topic,
        builder="llm",
    )


A = make_instance("paper-a", "sparse attention")
B = make_instance("paper-b", "gravitational waves")


def truth(instance: Instance) -> str:
    """The verl ``ground_truth`` the README tells OpenRLHF users to send: no instance id."""
    return json.dumps(
        {
            "question": instance.question,
            "reference_answer": instance.reference_answer,
            "rubric": instance.rubric.model_dump(mode="json"),
        }
    )


@pytest.fixture
def judge() -> Iterator[ContainsJudge]:
    judge = ContainsJudge()
    runtime.set_shared_reward(RubricReward(judge, alpha=1.0))
    yield judge
    runtime.set_shared_reward(None)


def test_same_instance_id_different_rubrics_get_their_own_scores(judge: ContainsJudge) -> None:
    reward = RubricReward(judge, alpha=1.0)
    same_id_b = B.model_copy(update={"id": A.id})  # a client naming B's rubric "paper-a"
    first, second = reward.score_many([(A, A.reference_answer), (same_id_b, A.reference_answer)])
    assert first.value == 1.0 and second.value == 0.0
    assert first.instance_id == second.instance_id == "paper-a"
    # the same content under another id shares the judgement but keeps the caller's id
    renamed = reward.score(A.model_copy(update={"id": "renamed"}), A.reference_answer)
    assert renamed.value == 1.0 and renamed.instance_id == "renamed" and judge.calls == 2


def test_verl_compute_score_with_the_same_instance_id(judge: ContainsJudge) -> None:
    from papergym.reward import verl

    answer = A.reference_answer
    info = {"instance_id": "verl"}
    own = verl.compute_score("papergym", answer, truth(A), extra_info=info)
    other = verl.compute_score("papergym", answer, truth(B), extra_info=info)
    bare = verl.compute_score("papergym", answer, truth(B))  # no extra_info at all
    batch = verl.compute_score_batch(["papergym"] * 2, [answer] * 2, [truth(A), truth(B)])
    assert (own["score"], other["score"], bare["score"]) == (1.0, 0.0, 0.0)
    assert [b["score"] for b in batch] == [1.0, 0.0]


def test_openrlhf_score_batch_without_instance_ids(judge: ContainsJudge) -> None:
    from papergym.reward.openrlhf import score_batch

    prompt = "Question: ...\n"
    answer = A.reference_answer
    scores = asyncio.run(score_batch([prompt + answer] * 2, [prompt] * 2, [truth(A), truth(B)]))
    assert [s.value for s in scores] == [1.0, 0.0]
    # the ids are meaningful: one per rubric, stable, never a shared placeholder
    assert scores[0].instance_id != scores[1].instance_id
    assert all(s.instance_id.startswith("rubric-") for s in scores)
    again = asyncio.run(score_batch([prompt + answer], [prompt], [truth(B)]))
    assert again[0].instance_id == scores[1].instance_id


def test_trl_rows_without_ids(judge: ContainsJudge) -> None:
    from papergym.reward.trl import rubric_reward

    columns = {
        "question": [A.question, B.question],
        "reference": [A.reference_answer, B.reference_answer],
        "rubric": [A.rubric.model_dump_json(), B.rubric.model_dump_json()],
    }
    answer = A.reference_answer
    first = rubric_reward(prompts=["p", "p"], completions=[answer, answer], **columns)
    # second batch: B's row now sits where A's was (row-0 under the old position ids)
    swapped = {k: list(reversed(v)) for k, v in columns.items()}
    second = rubric_reward(prompts=["p", "p"], completions=[answer, answer], **swapped)
    assert first == [1.0, 0.0] and second == [0.0, 1.0]


def test_judge_identity_and_alpha_are_part_of_the_key() -> None:
    judge = ContainsJudge()
    reward = RubricReward(judge, alpha=1.0)
    half = A.reference_answer.split(" and ")[0]  # meets c1 only
    assert reward.score(A, half).value == 1.0 * 0.5
    reward.alpha = 0.5
    assert reward.score(A, half).value == pytest.approx(0.5 * 0.5 + 0.5 * 1.0)
    reward.judge = ContainsJudge("another")
    reward.score(A, half)
    assert judge.calls == 2  # the new judge judged again instead of reusing the old verdicts
    assert judge_identity(judge) == "contains"


def test_criteria_weights_or_text_change_the_key(judge: ContainsJudge) -> None:
    reward = RubricReward(judge, alpha=1.0)
    edited = A.model_copy(
        update={
            "rubric": A.rubric.model_copy(
                update={
                    "specific": (
                        A.rubric.specific[0],
                        A.rubric.specific[1].model_copy(update={"text": "something else"}),
                    )
                }
            )
        }
    )
    assert reward.score(A, A.reference_answer).value == 1.0
    assert reward.score(edited, A.reference_answer).value == 0.5


def test_cache_is_bounded_and_least_recently_used_goes_first() -> None:
    judge = ContainsJudge()
    reward = RubricReward(judge, cache_size=2)
    reward.score_many([(A, "one"), (A, "two")])
    reward.score(A, "one")  # "one" is now the most recently used
    reward.score(A, "three")  # evicts "two"
    assert reward.cached == 2 and judge.calls == 3
    reward.score(A, "one")
    assert judge.calls == 3
    reward.score(A, "two")
    assert judge.calls == 4
    uncached = RubricReward(ContainsJudge(), cache_size=0)
    uncached.score_many([(A, "same")] * 3)  # concurrent duplicates still judged once
    uncached.score(A, "same")
    assert uncached.cached == 0 and isinstance(uncached.judge, ContainsJudge)
    assert uncached.judge.calls == 2
    with pytest.raises(ValueError):
        RubricReward(judge, cache_size=-1)


def test_over_long_answer_is_cut_and_flagged() -> None:
    judge = ContainsJudge()
    reward = RubricReward(judge, alpha=1.0, max_answer_chars=100)
    long = A.reference_answer + " filler" * 100
    short = reward.score(A, A.reference_answer)
    cut = reward.score(A, long)
    assert not short.answer_truncated and cut.answer_truncated
    assert len(judge.seen[-1]) == 100 and long.startswith(judge.seen[-1])
    # a long <think> does not count against the plan
    thinking = "<think>" + "hmm " * 100 + "</think>" + A.reference_answer
    assert limit_answer(thinking, 100) == (A.reference_answer, False)
    assert limit_answer("x" * 10, None) == ("x" * 10, False)
    with pytest.raises(ValueError):
        RubricReward(judge, max_answer_chars=0)


@pytest.mark.slow
def test_a_huge_answer_is_judged_in_bounded_time_by_the_offline_judge() -> None:
    from papergym.reward.offline import OfflineJudge

    reward = RubricReward(OfflineJudge())
    reward.score(A, A.reference_answer)  # load the embedding model outside the timing
    # ~1 MB of distinct sentences (repetition would be deduplicated by the judge)
    huge = " ".join(
        f"Step {n} measures quantity {n * 7} on dataset {n % 13}." for n in range(20_000)
    )
    start = time.perf_counter()
    score = reward.score(A, huge)
    assert score.answer_truncated and score.value is not None
    assert time.perf_counter() - start < 60  # was minutes without the limit


def test_repeated_passages_are_embedded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from papergym.reward import offline

    embedded: list[int] = []
    real = offline.embed

    def counting(texts: list[str]) -> object:
        embedded.append(len(texts))
        return real(texts)

    monkeypatch.setattr(offline, "embed", counting)
    plan = (  # the criteria's words and more: a bare copy of the rubric counts for nothing
        "We will run sparse attention step 1 on long documents, and then sparse attention step 2 "
        "with a larger corpus."
    )
    specific, _ = offline.OfflineJudge().judge_sync(A, (plan + " ") * 200)
    assert all(v.passed for v in specific)
    assert max(embedded) <= 4  # two criteria; the answer's sentence, the pair, and its repeat


def test_shared_reward_reads_the_limits_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PAPERGYM_REWARD_JUDGE", "offline")
    monkeypatch.setenv("PAPERGYM_REWARD_CACHE_SIZE", "7")
    monkeypatch.setenv("PAPERGYM_REWARD_MAX_ANSWER_CHARS", "0")
    runtime.set_shared_reward(None)
    try:
        reward = runtime.shared_reward()
        assert reward.cache_size == 7 and reward.max_answer_chars is None
    finally:
        runtime.set_shared_reward(None)
