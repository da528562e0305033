"""Criterion weights (pitfalls included) and the source kind travel through every export."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from export_samples import sample_instances, weighted_instance

from papergym.export.hf import read_hf_instances, write_hf
from papergym.export.parquet import read_parquet_instances, write_parquet
from papergym.export.trl import privileged_context, write_trl
from papergym.export.verl import write_verl
from papergym.records import Instance, Rubric
from papergym.reward.verl import instance_from_ground_truth


def weights(rubric: Rubric) -> list[float]:
    return [c.weight for c in rubric.specific]


def test_verl_ground_truth_and_extra_info_carry_the_weights(tmp_path: Path) -> None:
    inst = weighted_instance()
    write_verl([inst], tmp_path)
    (row,) = pq.read_table(tmp_path / "train.parquet").to_pylist()
    truth = row["reward_model"]["ground_truth"]
    assert [c["weight"] for c in json.loads(truth)["rubric"]["specific"]] == weights(inst.rubric)
    assert Rubric.model_validate_json(row["extra_info"]["rubric"]) == inst.rubric
    # and the reward rebuilds the same rubric from what verl hands it
    assert instance_from_ground_truth(truth, row["extra_info"]).rubric == inst.rubric


def test_trl_rubric_column_keeps_the_weights_and_the_teacher_sees_the_pitfalls(
    tmp_path: Path,
) -> None:
    from datasets import load_from_disk

    inst = weighted_instance()
    write_trl([inst], tmp_path)
    (row,) = load_from_disk(str(tmp_path / "dataset"))["train"].to_list()
    assert Rubric.model_validate_json(row["rubric"]) == inst.rubric
    text = row["privileged_context"]
    criteria, mistakes = text.split("Mistakes to avoid")
    for c in inst.rubric.specific:
        assert f"{c.text} (weight {c.weight:g})" in (mistakes if c.pitfall else criteria)
    assert "makes none of the listed mistakes" in criteria


def test_unweighted_privileged_context_is_unchanged() -> None:
    rubric = sample_instances()[0].rubric
    text = privileged_context(rubric)
    assert "weight" not in text and "Mistakes" not in text
    assert text.startswith(
        "Grading rubric for this task. A strong research plan satisfies every criterion below."
        "\n\nTask-specific criteria, most important first:\n1. The plan for pa states step 1"
    )


def test_parquet_and_hf_round_trip_weights_and_source_kind(tmp_path: Path) -> None:
    instances = [*sample_instances(), weighted_instance()]
    write_parquet(instances, tmp_path / "parquet")
    assert read_parquet_instances(tmp_path / "parquet" / "train.parquet") == instances
    column = pq.read_table(tmp_path / "parquet" / "train.parquet").column("source_kind")
    assert column.to_pylist() == ["paper", "paper", "paper", "document"]
    write_hf(instances, tmp_path / "hf")
    back = read_hf_instances(tmp_path / "hf" / "dataset")
    assert back == instances and weights(back[-1].rubric)[-2:] == [-2.0, -0.5]


def test_parquet_written_before_weights_existed_still_reads(tmp_path: Path) -> None:
    rows = [i.model_dump(mode="json") for i in sample_instances()]
    for row in rows:  # the columns the previous release did not have
        del row["source_kind"]
        for criterion in row["rubric"]["specific"]:
            del criterion["weight"]
    path = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    back = read_parquet_instances(path)
    assert back == sample_instances()
    assert all(isinstance(i, Instance) and not i.rubric.weighted for i in back)
