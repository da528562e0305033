"""The adapters called the way verl, TRL and OpenRLHF call them, with the real offline judge."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.export.trl import trl_row
from papergym.export.verl import verl_row
from papergym.jsonl import read_jsonl
from papergym.records import Instance
from papergym.reward import runtime
from papergym.reward.offline import OfflineJudge
from papergym.reward.reward import RubricReward

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers"
runner = CliRunner()


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> list[Instance]:
    out = tmp_path_factory.mktemp("env")
    assert (
        runner.invoke(
            app, ["build", str(EXAMPLE), "-o", str(out), "--builder", "extractive"]
        ).exit_code
        == 0
    )
    return read_jsonl(out / "instances.jsonl", Instance)


@pytest.fixture(autouse=True)
def offline_reward() -> Iterator[RubricReward]:
    reward = RubricReward(OfflineJudge())
    runtime.set_shared_reward(reward)
    yield reward
    runtime.set_shared_reward(None)


def test_verl_compute_score_sync_async_and_batch_share_one_key_set(
    instances: list[Instance],
) -> None:
    from papergym.reward import verl

    row = verl_row(instances[0], 0)
    truth, info = row["reward_model"]["ground_truth"], row["extra_info"]
    good = verl.compute_score(
        row["data_source"],
        instances[0].reference_answer,
        truth,
        extra_info=info,
        step=3,
        reward_router_address=None,
    )  # verl passes extra keywords
    empty = asyncio.run(verl.compute_score_async(row["data_source"], "", truth, extra_info=info))
    batch = verl.compute_score_batch(
        [row["data_source"]] * 2, [instances[0].reference_answer, ""], [truth] * 2, [info] * 2
    )
    assert set(good) == set(empty) == set(batch[0]) == set(verl.KEYS)
    assert good["score"] > 0.8 and empty["score"] == 0.0
    assert batch[0] == good and batch[1] == empty
    assert good["unscored"] == 0.0 and good["num_criteria"] == float(
        len(instances[0].rubric.specific)
    )


def test_verl_unscored_gets_the_fallback_and_a_flag(
    instances: list[Instance], monkeypatch: pytest.MonkeyPatch
) -> None:
    from papergym.records import Verdict
    from papergym.reward import verl

    class Unscoring:
        name = "always-unscored"

        async def judge(
            self, instance: Instance, answer: str
        ) -> tuple[list[Verdict], list[Verdict]]:
            return [
                Verdict(criterion_id=c.id, passed=None, reason="judge failed")
                for c in instance.rubric.specific
            ], []

    runtime.set_shared_reward(RubricReward(Unscoring()))
    monkeypatch.setenv("PAPERGYM_REWARD_UNSCORED", "-1")
    row = verl_row(instances[0], 0)
    result = verl.compute_score(
        row["data_source"], "anything", row["reward_model"]["ground_truth"], row["extra_info"]
    )
    assert result["unscored"] == 1.0 and result["score"] == -1.0 and set(result) == set(verl.KEYS)


def test_trl_reward_plain_and_chat_completions_return_values_and_log(
    instances: list[Instance],
) -> None:
    from papergym.reward.trl import rubric_reward, rubric_reward_async

    row = trl_row(instances[0])
    columns = {
        "question": [row["question"]] * 2,
        "reference": [row["reference"]] * 2,
        "rubric": [row["rubric"]] * 2,
        "instance_id": [row["instance_id"]] * 2,
    }
    logged: dict[str, float] = {}
    plain = rubric_reward(
        prompts=[row["prompt"]] * 2,
        completions=[instances[0].reference_answer, ""],
        log_metric=logged.__setitem__,
        trainer_state=None,
        **columns,
    )
    chat = asyncio.run(
        rubric_reward_async(
            prompts=[row["prompt"]] * 2,
            completions=[
                [{"role": "assistant", "content": instances[0].reference_answer}],
                [{"role": "assistant", "content": ""}],
            ],
            **columns,
        )
    )
    assert plain == chat
    assert plain[0] is not None and plain[0] > 0.8 and plain[1] == 0.0
    assert "rubric/specific_mean" in logged and logged["rubric/unscored"] == 0.0


def test_openrlhf_reward_func_and_server(
    instances: list[Instance], offline_reward: RubricReward
) -> None:
    from fastapi.testclient import TestClient

    from papergym.reward.openrlhf import reward_func
    from papergym.reward.server import create_app

    label = verl_row(instances[0], 0)["reward_model"]["ground_truth"]
    prompt = "Question: ...\n"
    result = reward_func(
        [prompt + instances[0].reference_answer, prompt], [prompt, prompt], [label, label]
    )
    assert result["rewards"].shape == (2,) and float(result["rewards"][0]) > 0.8
    short = " ".join(instances[0].reference_answer.split(". ")[:2])
    with TestClient(create_app(offline_reward)) as client:
        assert client.get("/health").json()["status"] == "ok"

        def request(batch: int) -> list[float]:
            body = {
                "query": [f"{prompt}{short} variant {batch}-{i}" for i in range(3)],
                "prompts": [prompt] * 3,
                "labels": [label] * 3,
            }
            return list(client.post("/get_reward", json=body).json()["rewards"])

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=8) as pool:  # concurrent clients: nothing may be lost
            results = list(pool.map(request, range(8)))
        assert [len(r) for r in results] == [3] * 8
        assert all(isinstance(v, float) for r in results for v in r)
        bad = client.post("/get_reward", json={"query": ["a"], "prompts": [], "labels": []})
        assert bad.status_code == 422
        scored = client.post(
            "/score", json={"items": [{"ground_truth": label, "answer": ""}]}
        ).json()
        assert scored["scores"][0]["value"] == 0.0


def test_same_answer_is_judged_once(instances: list[Instance]) -> None:
    calls = 0

    class Counting(OfflineJudge):
        async def judge(self, instance: Instance, answer: str):  # type: ignore[no-untyped-def]
            nonlocal calls
            calls += 1
            return await super().judge(instance, answer)

    reward = RubricReward(Counting())
    scores = reward.score_many([(instances[0], "same answer")] * 5 + [(instances[0], "other")])
    assert calls == 2 and scores[0] == scores[4]


def test_score_command_writes_scores(instances: list[Instance], tmp_path: Path) -> None:
    built = tmp_path / "instances.jsonl"
    built.write_text("\n".join(i.model_dump_json() for i in instances) + "\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        json.dumps({"instance_id": instances[0].id, "answer": instances[0].reference_answer}) + "\n"
    )
    result = runner.invoke(
        app,
        [
            "score",
            str(built),
            str(answers),
            "-o",
            str(tmp_path / "s.jsonl"),
            "--judge",
            "offline",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["scored"] == 1 and summary["mean"] > 0.8
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({"instance_id": "nope", "answer": "x"}) + "\n")
    assert (
        runner.invoke(app, ["score", str(built), str(unknown), "--judge", "offline"]).exit_code == 2
    )


def test_check_reward_reports_probes_auc_and_flags(
    instances: list[Instance], tmp_path: Path
) -> None:
    from papergym.reward.check import auc

    assert auc([0.9, 0.8], [0.1, 0.8]) == 0.875 and auc([], [1.0]) is None
    two = [
        instances[0],
        instances[0].model_copy(
            update={"id": "other", "reference_answer": "Unrelated text about bees."}
        ),
    ]
    built = tmp_path / "instances.jsonl"
    built.write_text("\n".join(i.model_dump_json() for i in two) + "\n")
    result = runner.invoke(app, ["check-reward", str(built), "--judge", "offline", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    means = {p["probe"]: p["mean"] for p in report["probes"]}
    assert set(means) == {
        "reference",
        "empty",
        "restated_question",
        "other_reference",
        "padded_reference",
        "criteria_list",
        "criteria_words_shuffled",
        "criteria_dressed",
        "criteria_dressed_varied",
        "reference_words_shuffled",
        "half_criteria",
        "judge_injection",
    }
    assert means["empty"] == 0.0
    # a bare list of the criteria, or their words shuffled, is no plan (issue 23)
    assert means["criteria_list"] == 0.0 and means["criteria_words_shuffled"] == 0.0


@pytest.mark.slow
def test_check_reward_on_the_offline_build_of_the_real_papers(tmp_path: Path) -> None:
    from support.papers import SHARED_PAPERS

    if not SHARED_PAPERS.is_dir():
        pytest.skip("../shared/papers is not available")
    out = tmp_path / "env"
    assert runner.invoke(app, ["build", str(SHARED_PAPERS), "-o", str(out)]).exit_code == 0
    result = runner.invoke(
        app, ["check-reward", str(out / "instances.jsonl"), "--judge", "offline", "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    means = {p["probe"]: p["mean"] for p in report["probes"]}
    assert report["own_vs_other_auc"] > 0.9
    assert means["reference"] > means["other_reference"] + 0.5
    assert means["empty"] == 0.0
