"""Weighted rubrics with pitfalls through every reward path, with both normalisations.

The expected numbers are worked out by hand in ``weighted_samples`` (its docstring has the
table); unweighted rubrics, old instance files included, must score exactly as before.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_reward_server import call, served
from typer.testing import CliRunner
from weighted_samples import EXPECTED, MET, OFFLINE_EXPECTED, MarkerJudge, answer, weighted_instance

from papergym.cli import app
from papergym.export.trl import trl_row
from papergym.export.verl import ground_truth, verl_row
from papergym.jsonl import read_jsonl
from papergym.records import Instance, Normalisation, Verdict
from papergym.reward import openrlhf, runtime, trl, verl
from papergym.reward.check import check_reward, probe_answers
from papergym.reward.offline import OfflineJudge
from papergym.reward.reward import RubricReward, score_key
from papergym.reward.scoring import alpha_mix, pass_rate, rubric_score
from papergym.reward.server import create_app

OLD_FORMAT = Path(__file__).parent / "data" / "instance_v0.jsonl"
"""One instance as `papergym build` wrote it before criteria had weights (no weight, no
source_kind): committed so that the current release's files keep loading."""

NORMALISATIONS: tuple[Normalisation, ...] = ("positive", "absolute")
ANSWERS = tuple(MET)
runner = CliRunner()


@pytest.fixture(params=NORMALISATIONS)
def normalisation(request: pytest.FixtureRequest) -> Iterator[Normalisation]:
    norm: Normalisation = request.param
    runtime.set_shared_reward(RubricReward(MarkerJudge(), normalisation=norm))
    yield norm
    runtime.set_shared_reward(None)


def expected(norm: Normalisation, name: str) -> tuple[float, float]:
    return EXPECTED[norm][name]


# --- the scoring rule -------------------------------------------------------------------------


@pytest.mark.parametrize("norm", NORMALISATIONS)
def test_unweighted_rubrics_score_exactly_the_old_mean(norm: Normalisation) -> None:
    for n in range(1, 8):
        for flags in itertools.product([True, False], repeat=n):
            specific = [Verdict(criterion_id=f"s{i}", passed=f) for i, f in enumerate(flags)]
            general = [Verdict(criterion_id="g", passed=flags[0], kind="general")]
            score = rubric_score("i", specific, general, normalisation=norm)
            old = pass_rate(specific)
            assert score.specific == old  # exact, not approx
            assert score.value == alpha_mix(old, pass_rate(general))


def test_only_pitfalls_cannot_be_normalised_by_positive_weights() -> None:
    verdicts = [Verdict(criterion_id="h", passed=True, weight=-2.0)]
    positive = rubric_score("i", verdicts, [])
    assert positive.value is None
    assert positive.unscored_reason is not None and "no positive weight" in positive.unscored_reason
    assert rubric_score("i", verdicts, [], normalisation="absolute").value == 0.0  # −1, clipped


def test_reward_applies_the_rubric_weights_not_the_judges() -> None:
    reward = RubricReward(MarkerJudge())
    score = reward.score(weighted_instance(), answer("partial"))
    assert {v.criterion_id: v.weight for v in score.verdicts if v.kind == "specific"} == {
        "a": 3.0,
        "b": 2.0,
        "c": 1.0,
        "h1": -2.0,
        "h2": -4.0,
    }
    assert score.normalisation == "positive"
    with pytest.raises(ValueError, match="normalisation"):
        RubricReward(MarkerJudge(), normalisation="sum")  # type: ignore[arg-type]


def test_cache_key_changes_with_a_weight_and_with_the_normalisation() -> None:
    instance = weighted_instance()
    specific = list(instance.rubric.specific)
    specific[3] = specific[3].model_copy(update={"weight": -3.0})
    heavier = instance.model_copy(
        update={"rubric": instance.rubric.model_copy(update={"specific": tuple(specific)})}
    )
    base = score_key(instance, "x", "judge", 0.7)
    assert score_key(heavier, "x", "judge", 0.7) != base
    assert score_key(instance, "x", "judge", 0.7, "absolute") != base
    # and a cached score of one weighting is never served for the other
    reward = RubricReward(MarkerJudge())
    first = reward.score(instance, answer("partial")).value
    second = reward.score(heavier, answer("partial")).value
    assert (first, second) == (0.5, pytest.approx(0.7 * (2 / 6) + 0.3 * 0.5))


# --- every path, both normalisations -----------------------------------------------------------


def test_trl_reward_scores_the_weighted_rubric(normalisation: Normalisation) -> None:
    row = trl_row(weighted_instance())
    values = trl.rubric_reward(
        prompts=[row["prompt"]] * 3,
        completions=[[{"role": "assistant", "content": answer(n)}] for n in ANSWERS],
        question=[row["question"]] * 3,
        reference=[row["reference"]] * 3,
        rubric=[row["rubric"]] * 3,
        instance_id=[row["instance_id"]] * 3,
    )
    assert values == [pytest.approx(expected(normalisation, n)[1]) for n in ANSWERS]


def test_verl_scores_the_weighted_rubric(normalisation: Normalisation) -> None:
    row = verl_row(weighted_instance(), 0)
    truth, info = row["reward_model"]["ground_truth"], row["extra_info"]
    one = [verl.compute_score(row["data_source"], answer(n), truth, info) for n in ANSWERS]
    batch = verl.compute_score_batch(
        [row["data_source"]] * 3, [answer(n) for n in ANSWERS], [truth] * 3, [info] * 3
    )
    assert one == batch
    for name, result in zip(ANSWERS, one, strict=True):
        specific, value = expected(normalisation, name)
        assert result["score"] == pytest.approx(value)
        assert result["specific"] == pytest.approx(specific)
        assert result["num_criteria"] == 5.0


def test_openrlhf_function_scores_the_weighted_rubric(normalisation: Normalisation) -> None:
    label = ground_truth(weighted_instance())
    prompt = "Q: how?\nA: "
    result = openrlhf.reward_func([prompt + answer(n) for n in ANSWERS], [prompt] * 3, [label] * 3)
    assert result["rewards"].tolist() == [
        pytest.approx(expected(normalisation, n)[1]) for n in ANSWERS
    ]
    assert result["extra_logs"]["rubric_specific"].tolist() == [
        pytest.approx(expected(normalisation, n)[0]) for n in ANSWERS
    ]


@pytest.mark.parametrize("norm", NORMALISATIONS)
def test_server_scores_the_weighted_rubric(norm: Normalisation) -> None:
    label = json.loads(ground_truth(weighted_instance()))
    prompt = "Q: how?\nA: "
    values = [pytest.approx(EXPECTED[norm][n][1]) for n in ANSWERS]
    with served(create_app(RubricReward(MarkerJudge(), normalisation=norm))) as address:
        status, rewards = call(
            address,
            "POST",
            "/get_reward",
            {
                "query": [prompt + answer(n) for n in ANSWERS],
                "prompts": [prompt] * 3,
                "labels": [label] * 3,
            },
        )
        assert status == 200 and rewards["rewards"] == values
        status, scores = call(
            address,
            "POST",
            "/score",
            {"items": [{"ground_truth": label, "answer": answer(n)} for n in ANSWERS]},
        )
    assert status == 200 and [s["value"] for s in scores["scores"]] == values
    assert {s["normalisation"] for s in scores["scores"]} == {norm}
    pitfall = next(v for v in scores["scores"][0]["verdicts"] if v["criterion_id"] == "h1")
    assert pitfall["passed"] is True and pitfall["weight"] == -2.0  # met = the mistake was made


@pytest.mark.parametrize("norm", NORMALISATIONS)
def test_score_command_scores_the_weighted_rubric_with_the_offline_judge(
    norm: Normalisation, tmp_path: Path
) -> None:
    instances, answers = tmp_path / "instances.jsonl", tmp_path / "answers.jsonl"
    instances.write_text("".join(weighted_instance(f"w-{n}").model_dump_json() + "\n" for n in MET))
    answers.write_text(
        "".join(json.dumps({"instance_id": f"w-{n}", "answer": answer(n)}) + "\n" for n in MET)
    )
    out = tmp_path / "scores.jsonl"
    result = runner.invoke(
        app,
        [
            *("score", str(instances), str(answers), "-o", str(out), "--judge", "offline"),
            *(f"reward.normalisation={norm}", "--json"),
        ],
    )
    assert result.exit_code == 0, result.output
    written = {s["instance_id"]: s for s in map(json.loads, out.read_text().splitlines())}
    for name, value in OFFLINE_EXPECTED[norm].items():
        assert written[f"w-{name}"]["value"] == pytest.approx(value), name
        assert written[f"w-{name}"]["normalisation"] == norm


# --- check-reward's pitfall probe --------------------------------------------------------------


def test_check_reward_probe_commits_the_pitfalls_and_scores_below_the_reference() -> None:
    instance = weighted_instance()
    probe = probe_answers(instance, None)["committed_pitfalls"]
    assert probe.startswith(instance.reference_answer)
    assert all(c.text in probe for c in instance.rubric.pitfalls)
    report = asyncio.run(check_reward(RubricReward(OfflineJudge()), [instance]))
    means = {p.probe: p.mean for p in report.probes}
    assert means["reference"] == 1.0 and means["committed_pitfalls"] == 0.0  # (6 − 6) / 6
    # the only flag the offline judge earns here is its known limit (docs/reward.md)
    assert all("criteria_dressed_varied" in str(f["reason"]) for f in report.flagged)


def test_check_reward_flags_a_judge_that_misses_the_pitfalls() -> None:
    class Blind:
        """Meets every desired criterion, never sees a mistake."""

        name = "blind"

        async def judge(
            self, instance: Instance, answer: str
        ) -> tuple[list[Verdict], list[Verdict]]:
            return [
                Verdict(criterion_id=c.id, passed=bool(answer) and not c.pitfall)
                for c in instance.rubric.specific
            ], []

    report = asyncio.run(check_reward(RubricReward(Blind()), [weighted_instance()]))
    reasons = " ".join(str(f["reason"]) for f in report.flagged)
    assert "committing the pitfalls scores 1.000, not below the reference's 1.000" in reasons


def test_check_reward_has_no_pitfall_probe_for_unweighted_rubrics() -> None:
    old = read_jsonl(OLD_FORMAT, Instance)[0]
    assert "committed_pitfalls" not in probe_answers(old, None)


# --- old files ---------------------------------------------------------------------------------


def test_old_instance_file_loads_and_scores() -> None:
    raw = OLD_FORMAT.read_text()
    assert '"weight"' not in raw and '"source_kind"' not in raw  # truly the old format
    (old,) = read_jsonl(OLD_FORMAT, Instance)
    assert old.source_kind == "paper" and not old.rubric.weighted
    assert all(c.weight == 1.0 and c.polarity == "desired" for c in old.rubric.specific)
    ids = [c.id for c in old.rubric.specific[:3]] + [g.id for g in old.rubric.general[:2]]
    for norm in NORMALISATIONS:
        score = RubricReward(MarkerJudge(), normalisation=norm).score(
            old, "A plan. [" + " ".join(ids) + "]"
        )
        n_general = len(old.rubric.general)
        assert score.specific == 3 / 10 and score.value == alpha_mix(3 / 10, 2 / n_general)
        # The old extractive criteria are copies of reference sentences, the gameable form
        # (issue 23): the offline judge no longer counts a passage that only restates the
        # rubric, so the old reference still scores, but not in full; rebuild to get today's.
        offline = RubricReward(OfflineJudge(), normalisation=norm).score(old, old.reference_answer)
        assert offline.scored and offline.value is not None and 0.0 < offline.value < 1.0


# --- the judges and pitfalls -------------------------------------------------------------------


def test_llm_judge_is_told_which_criteria_are_pitfalls_and_what_met_means() -> None:
    from test_reward_judge import _client, _criteria_in, _prompt

    from papergym.fakellm import FakeOpenAIServer
    from papergym.reward.judge import (
        DOCUMENT_PITFALL_RULES,
        PITFALL_RULES,
        PITFALL_TAG,
        RubricJudge,
    )

    def judge_reads_tags(request: dict[str, object]) -> dict[str, object]:
        # a pitfall is "met" when the plan makes the mistake; desired ones when the plan has them
        plan = _prompt(request).rsplit("Answer to grade:", 1)[1]  # a document's prompt
        verdicts = []
        for n, text in _criteria_in(request):
            core = text.removeprefix(PITFALL_TAG + " ").rstrip(".")  # the plan says more after
            met = core in plan
            verdicts.append(
                {
                    "criterion_id": n,
                    "reason": "r",
                    "quote": core if met else None,
                    "verdict": int(met),
                }
            )
        return {"verdicts": verdicts}

    instance = weighted_instance()
    with FakeOpenAIServer() as server:
        server.responder = judge_reads_tags
        judge = RubricJudge(_client(server), mode="one")
        reward = RubricReward(judge, normalisation="absolute")
        score = asyncio.run(reward.ascore(instance, answer("partial")))
        prompts = [_prompt(r) for r in server.requests]
    # partial states a, b and h1 (no general criterion's text): (3 + 2 − 2) / 12 = 0.25
    assert score.specific == pytest.approx(0.25) and score.general == 0.0
    assert score.value == pytest.approx(0.7 * 0.25)
    tagged = [p for p in prompts if PITFALL_TAG in p]
    assert len(tagged) == 2  # one call per criterion: h1 and h2
    assert all(DOCUMENT_PITFALL_RULES in p for p in tagged)  # the instance is a document's
    assert all("PITFALL" not in p for p in prompts if p not in tagged)  # others unchanged
    assert "1 only when the plan clearly and explicitly makes it" in PITFALL_RULES


def test_offline_judge_counts_a_pitfall_only_when_the_plan_states_it() -> None:
    instance = weighted_instance()
    judge = OfflineJudge()
    stated = "We report accuracy figures before any experiment has been run."
    avoided = "We never report accuracy figures before any experiment has been run."
    two_negations = avoided + " We do not tune the hyperparameters on the held-out test fields."
    for plan, met in ((stated, True), (avoided, False), (two_negations, False)):
        specific, _ = judge.judge_sync(instance, plan)
        h1 = next(v for v in specific if v.criterion_id == "h1")
        assert h1.passed is met, (plan, h1.reason)
    specific, _ = judge.judge_sync(instance, avoided)
    assert "opposite negation" in next(v.reason for v in specific if v.criterion_id == "h1")
