"""The ARES ablation rewards (holistic, reference_similarity, generic_only): their pure rules,
their records and cache keys, and each through ``papergym score`` and an adapter."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.export.trl import trl_row
from papergym.export.verl import verl_row
from papergym.fakellm.plausible import responder as plausible
from papergym.fakellm.server import FakeOpenAIServer
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.records import Instance, Score, Verdict
from papergym.reward import runtime
from papergym.reward.ablations import answer_score
from papergym.reward.factory import make_reward
from papergym.reward.holistic import HolisticJudge
from papergym.reward.offline import OfflineJudge
from papergym.reward.reward import RubricReward, score_key
from papergym.reward.settings import RewardSection
from papergym.reward.similarity import ReferenceSimilarity, reference_similarity, text_vector
from support.instances import rubric_instance

runner = CliRunner()

INSTANCE = rubric_instance(
    "p",
    ["The plan measures pulsar timing residuals with radio telescopes."],
    question="How would you detect gravitational waves?",
    reference_answer="Measure pulsar timing residuals with radio telescopes over many years.",
    title="PTA",
    general="The plan states its pulsar noise assumptions.",
)
GOOD = "We measure pulsar timing residuals with radio telescopes and model the noise."
POOR = "I would think about it carefully."


def letters(sentences: Sequence[str]) -> npt.NDArray[np.float32]:
    """A tiny stand-in embedder: each sentence's letter counts, unit length."""
    rows = np.zeros((len(sentences), 26), dtype=np.float32)
    for i, text in enumerate(sentences):
        for ch in text.lower():
            if "a" <= ch <= "z":
                rows[i, ord(ch) - 97] += 1
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)


def test_reference_similarity_is_the_clipped_cosine_of_mean_sentence_vectors() -> None:
    answer = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert reference_similarity(answer, np.array([[1.0, 0.0]], np.float32)) == pytest.approx(
        1 / np.sqrt(2)
    )
    assert reference_similarity(answer, np.array([[-1.0, -1.0]], np.float32)) == 0.0
    assert reference_similarity(np.zeros((0, 2), np.float32), answer) == 0.0
    assert reference_similarity(answer, np.zeros((0, 2), np.float32)) is None
    assert text_vector(np.array([[1.0, 0.0], [-1.0, 0.0]], np.float32)) is None


def test_answer_scores_say_their_mode_and_unscored_is_not_zero() -> None:
    held = answer_score("i", 0.4, mode="holistic", judge="h")
    assert held.value == 0.4 and held.mode == "holistic" and held.verdicts == ()
    lost = answer_score("i", None, mode="reference_similarity", judge="s", reason="no reference")
    assert (
        lost.value is None and lost.unscored_reason == "reference_similarity unscored: no reference"
    )
    with pytest.raises(ValueError):
        answer_score("i", 0.4, mode="rubric", judge="h")
    with pytest.raises(ValueError):
        answer_score("i", 1.2, mode="holistic", judge="h")


def test_cache_keys_tell_modes_apart_and_a_rubric_key_is_unchanged() -> None:
    keys = {m: score_key(INSTANCE, GOOD, "j", 0.7, "positive", m) for m in
            ("rubric", "holistic", "reference_similarity", "generic_only")}  # fmt: skip
    assert len(set(keys.values())) == 4
    assert keys["rubric"] == score_key(INSTANCE, GOOD, "j", 0.7, "positive")


def test_similarity_reward_ranks_the_good_answer_first_and_caches_per_mode() -> None:
    reward = RubricReward(ReferenceSimilarity(letters), mode="reference_similarity")
    good, poor = reward.score_many([(INSTANCE, GOOD), (INSTANCE, POOR)])
    assert good.mode == "reference_similarity" and good.value is not None
    assert poor.value is not None and good.value > poor.value
    assert reward.cached == 2


class SeeingJudge:
    """A scripted rubric judge: every general criterion met; records what it was shown."""

    name = "seeing"

    def __init__(self, general: bool = True) -> None:
        self.shown: list[Instance] = []
        self.general = general

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        self.shown.append(instance)
        specific = [Verdict(criterion_id=c.id, passed=False) for c in instance.rubric.specific]
        general = [
            Verdict(criterion_id=c.id, passed=True, kind="general")
            for c in instance.rubric.general
            if self.general
        ]
        return specific, general


def test_generic_only_judges_the_general_criteria_alone() -> None:
    judge = SeeingJudge()
    score = RubricReward(judge, mode="generic_only").score(INSTANCE, GOOD)
    assert judge.shown[0].rubric.specific == () and judge.shown[0].rubric.general
    assert score.value == 1.0 and score.alpha == 0.0 and score.specific is None
    assert score.mode == "generic_only"
    rubric = RubricReward(SeeingJudge()).score(INSTANCE, GOOD)
    assert rubric.value == pytest.approx(0.3) and rubric.mode == "rubric"
    blind = RubricReward(SeeingJudge(general=False), mode="generic_only").score(INSTANCE, GOOD)
    assert blind.value is None and "no general criterion" in (blind.unscored_reason or "")


def test_a_mode_is_refused_with_a_judge_that_cannot_produce_it() -> None:
    with pytest.raises(ValueError, match="needs its own judge"):
        RubricReward(SeeingJudge(), mode="holistic")
    with pytest.raises(ValueError, match="needs a rubric judge"):
        RubricReward(ReferenceSimilarity(letters), mode="rubric")
    offline = LLMConfig()
    for section in (
        RewardSection(judge="offline", verdict="graded"),
        RewardSection(judge="offline", mode="generic_only"),
        RewardSection(judge="offline", mode="holistic"),
    ):
        with pytest.raises(BadInputError):
            make_reward(section, offline)
    made = make_reward(RewardSection(mode="reference_similarity"), offline)
    assert isinstance(made.judge, ReferenceSimilarity) and made.mode == "reference_similarity"


def _llm(server: FakeOpenAIServer, **extra: Any) -> LLMConfig:
    judge = {"model": "m", "base_url": [server.base_url], "max_retries": 0, **extra}
    return LLMConfig.model_validate({"roles": {"judge": judge}, "cache": False})


def test_holistic_scores_whole_answers_and_a_bad_score_is_unscored() -> None:
    with FakeOpenAIServer(responder=plausible) as server:
        reward = RubricReward(HolisticJudge(LLMClient(_llm(server))), mode="holistic")
        good, poor, empty = asyncio.run(
            reward.ascore_many([(INSTANCE, GOOD), (INSTANCE, POOR), (INSTANCE, "")])
        )
        shown = str(server.requests[0]["messages"][0]["content"])
    assert good.mode == "holistic" and good.value is not None and poor.value is not None
    assert good.value > poor.value and empty.value == 0.0
    assert INSTANCE.reference_answer in shown  # the reference is shown ...
    assert INSTANCE.rubric.specific[0].text not in shown  # ... the rubric never
    out_of_range = json.dumps({"reason": "r", "score": 11})
    with FakeOpenAIServer(responder=lambda body: out_of_range) as server:
        judge = HolisticJudge(LLMClient(_llm(server, repair_attempts=1)))
        lost = RubricReward(judge, mode="holistic").score(INSTANCE, GOOD)
        assert server.request_count == 2  # asked again once, then given up
    assert lost.value is None and (lost.unscored_reason or "").startswith("holistic unscored")


@pytest.fixture
def instances_file(tmp_path: Path) -> Path:
    path = tmp_path / "instances.jsonl"
    path.write_text(INSTANCE.model_dump_json() + "\n")
    return path


def _score(instances: Path, tmp_path: Path, *args: str) -> tuple[Any, list[Score]]:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(json.dumps({"instance_id": "p", "answer": a, "sample": n}) + "\n"
                for n, a in enumerate((GOOD, POOR)))
    )  # fmt: skip
    out = tmp_path / "scores.jsonl"
    result = runner.invoke(
        app, ["score", str(instances), str(answers), "-o", str(out), "--json", *args]
    )
    if result.exit_code != 0:
        return result, []
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return result, [
        Score.model_validate({k: v for k, v in r.items() if k != "sample"}) for r in rows
    ]


@pytest.mark.parametrize(
    ("mode", "verdict"), [("holistic", "binary"), ("generic_only", "binary"), ("rubric", "graded")]
)
def test_score_command_runs_each_llm_mode(
    instances_file: Path, tmp_path: Path, mode: str, verdict: str
) -> None:
    with FakeOpenAIServer(responder=plausible) as server:
        result, scores = _score(
            instances_file, tmp_path, "--judge", "llm", "--mode", mode, "--verdict", verdict,
            f"llm.default.base_url={server.base_url}", "llm.default.model=m", "llm.cache=false",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["mode"] == mode
    assert [s.mode for s in scores] == [mode, mode]
    assert all(s.value is not None for s in scores)
    if verdict == "graded":
        assert all(v.grade is not None for s in scores for v in s.verdicts)


def test_score_command_refuses_graded_offline_in_one_line(
    instances_file: Path, tmp_path: Path
) -> None:
    result, _ = _score(instances_file, tmp_path, "--judge", "offline", "--verdict", "graded")
    assert result.exit_code == 2
    assert "reward.verdict graded needs an LLM judge" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "scores.jsonl").exists()


@pytest.mark.slow
def test_score_command_reference_similarity_with_the_real_embedder(
    instances_file: Path, tmp_path: Path
) -> None:
    result, scores = _score(instances_file, tmp_path, "--mode", "reference_similarity")
    assert result.exit_code == 0, result.output
    good, poor = scores
    assert good.mode == "reference_similarity" and good.value is not None
    assert poor.value is not None and good.value > poor.value


@pytest.fixture
def shared() -> Iterator[None]:
    yield
    runtime.set_shared_reward(None)


def test_trl_adapter_with_the_holistic_reward(shared: None) -> None:
    from papergym.reward.trl import rubric_reward

    row = trl_row(INSTANCE)
    columns = {k: [row[k]] * 2 for k in ("question", "reference", "rubric", "instance_id")}
    logged: dict[str, float] = {}
    with FakeOpenAIServer(responder=plausible) as server:
        runtime.set_shared_reward(
            RubricReward(HolisticJudge(LLMClient(_llm(server))), mode="holistic")
        )
        values = rubric_reward(
            prompts=[row["prompt"]] * 2, completions=[GOOD, POOR],
            log_metric=logged.__setitem__, **columns,
        )  # fmt: skip
    assert values[0] is not None and values[1] is not None and values[0] > values[1]
    assert logged["rubric/unscored"] == 0.0


def test_verl_adapter_with_the_similarity_reward(shared: None) -> None:
    from papergym.reward import verl

    runtime.set_shared_reward(
        RubricReward(ReferenceSimilarity(letters), mode="reference_similarity")
    )
    row = verl_row(INSTANCE, 0)
    truth, info = row["reward_model"]["ground_truth"], row["extra_info"]
    good = verl.compute_score(row["data_source"], GOOD, truth, extra_info=info)
    poor = verl.compute_score(row["data_source"], POOR, truth, extra_info=info)
    assert good["unscored"] == 0.0 and good["score"] > poor["score"] >= 0.0
    assert good.keys() == poor.keys()


def test_offline_rubric_default_is_unchanged() -> None:
    reward = RubricReward(OfflineJudge())
    assert reward.mode == "rubric"
    assert make_reward(RewardSection(judge="offline"), LLMConfig()).mode == "rubric"
