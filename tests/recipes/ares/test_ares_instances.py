"""ARES instances downstream: the exports carry their weights, the reward scores them, and
check-reward's pitfall probe costs them reward."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from ares_support import run_documents
from ares_texts import SWITCH, document
from typer.testing import CliRunner

from papergym.cli import app
from papergym.export.parquet import read_parquet_instances, write_parquet
from papergym.export.verl import write_verl
from papergym.recipes.ares.pipeline import to_instance
from papergym.records import Instance
from papergym.reward.check import probe_answers
from papergym.reward.offline import OfflineJudge
from papergym.reward.reward import RubricReward
from papergym.reward.verl import instance_from_ground_truth


@pytest.fixture(scope="module")
def instances(tmp_path_factory: pytest.TempPathFactory) -> list[Instance]:
    folder = tmp_path_factory.mktemp("ares")
    outcomes, _ = run_documents([document(), document(SWITCH, "switch")], folder)
    assert all(o.kept for o in outcomes), [o.reject for o in outcomes]
    return [to_instance(o.draft) for o in outcomes]


def test_the_two_documents_get_their_domains(instances: list[Instance]) -> None:
    assert [i.domain for i in instances] == ["medicine", "engineering"]
    assert all(i.rubric.pitfalls for i in instances)


def test_verl_and_parquet_round_trip_the_weights(instances: list[Instance], tmp_path: Path) -> None:
    write_verl(instances, tmp_path / "verl")
    rows = pq.read_table(tmp_path / "verl" / "train.parquet").to_pylist()
    assert [r["data_source"] for r in rows] == ["papergym/ares"] * 2
    for row, instance in zip(rows, instances, strict=True):
        back = instance_from_ground_truth(row["reward_model"]["ground_truth"], row["extra_info"])
        assert back.rubric == instance.rubric
    write_parquet(instances, tmp_path / "parquet")
    assert read_parquet_instances(tmp_path / "parquet" / "train.parquet") == instances


def test_the_reward_weights_criteria_and_a_pitfall_lowers_it(instances: list[Instance]) -> None:
    reward = RubricReward(OfflineJudge())
    instance = instances[0]
    answers = probe_answers(instance, None)
    reference = asyncio.run(reward.ascore(instance, answers["reference"]))
    committed = asyncio.run(reward.ascore(instance, answers["committed_pitfalls"]))
    assert reference.value is not None and committed.value is not None
    assert committed.value < reference.value
    pitfalls = {c.id for c in instance.rubric.pitfalls}
    weights = {v.criterion_id: v.weight for v in committed.verdicts}
    assert all(weights[i] < 0 for i in pitfalls)


def test_check_reward_runs_the_pitfall_probe_on_ares_instances(
    instances: list[Instance], tmp_path: Path
) -> None:
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(i.model_dump_json() + "\n" for i in instances))
    result = CliRunner().invoke(app, ["check-reward", str(path), "--judge", "offline", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    probes = {p["probe"]: p for p in report["probes"]}
    assert probes["committed_pitfalls"]["scored"] == 2
    assert probes["committed_pitfalls"]["mean"] < probes["reference"]["mean"]
    assert not [f for f in report["flagged"] if "committing the pitfalls" in f["reason"]]
