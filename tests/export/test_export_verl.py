from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from export_samples import instance, sample_instances

from papergym.export.verl import VERL_SCHEMA, verl_row, write_verl
from papergym.records import Rubric


def test_export_verl_row_carries_everything_the_reward_needs() -> None:
    inst = sample_instances()[0]
    row = verl_row(inst, 0)
    assert row["data_source"] == "papergym/plan"
    assert row["prompt"] == [{"role": "user", "content": inst.question}]
    assert row["ability"] == "research_planning"
    assert row["reward_model"]["style"] == "rubric"
    truth = json.loads(row["reward_model"]["ground_truth"])
    assert truth["question"] == inst.question
    assert truth["reference_answer"] == inst.reference_answer
    assert Rubric.model_validate(truth["rubric"]) == inst.rubric
    extra = row["extra_info"]
    assert Rubric.model_validate_json(extra["rubric"]) == inst.rubric
    assert extra["instance_id"] == inst.id and extra["paper_id"] == inst.paper_id
    assert (extra["recipe"], extra["builder"], extra["index"]) == ("papergym", "llm", 0)
    assert extra["question"] == inst.question
    assert extra["reference_answer"] == inst.reference_answer


def test_export_verl_data_source_per_recipe_and_system_prompt() -> None:
    sources = [verl_row(i, 0)["data_source"] for i in sample_instances()]
    assert sources == ["papergym/plan", "papergym/innov", "papergym/design"]
    row = verl_row(sample_instances()[1], 3, system_prompt="Be concrete.")
    assert row["prompt"][0] == {"role": "system", "content": "Be concrete."}
    assert row["prompt"][1]["role"] == "user"


def test_export_verl_parquet_round_trips_with_a_fixed_schema(tmp_path: Path) -> None:
    instances = sample_instances()
    result = write_verl(instances, tmp_path)
    assert result.rows == {"train": 3}
    assert not (tmp_path / "test.parquet").exists()
    table = pq.read_table(tmp_path / "train.parquet")
    assert table.schema.remove_metadata().equals(VERL_SCHEMA)
    rows = table.to_pylist()
    assert rows == [verl_row(inst, n) for n, inst in enumerate(instances)]
    # A file whose rubrics carry no verdicts has exactly the same schema.
    bare = tmp_path / "bare"
    write_verl([instance("q", verdicts=False)], bare)
    assert pq.read_schema(bare / "train.parquet").remove_metadata().equals(VERL_SCHEMA)


def test_export_verl_split_files_load_together_in_datasets(tmp_path: Path) -> None:
    from datasets import load_dataset

    instances = [instance(f"p{n}", method=n % 11) for n in range(30)]
    result = write_verl(instances, tmp_path, test_fraction=0.3)
    assert result.rows["train"] + result.rows["test"] == 30 and result.rows["test"] > 0
    files = {s: str(tmp_path / f"{s}.parquet") for s in ("train", "test")}
    loaded = load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "cache"))
    test_rows = loaded["test"].to_list()
    assert [r["extra_info"]["index"] for r in test_rows] == list(range(len(test_rows)))
    assert {r["extra_info"]["split"] for r in test_rows} == {"test"}
    # Re-exporting without a split removes the stale test file.
    write_verl(instances, tmp_path)
    assert not (tmp_path / "test.parquet").exists()
