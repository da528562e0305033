from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from export_samples import sample_instances
from pydantic import BaseModel

from papergym.errors import BadInputError
from papergym.export.hf import read_hf_instances, write_hf
from papergym.export.parquet import arrow_type, read_parquet_instances, write_parquet
from papergym.export.trl import TRL_SCHEMA, privileged_context, write_trl
from papergym.export.verl import write_verl
from papergym.records import Rubric


def test_export_trl_dataset_and_parquet_hold_the_same_rows(tmp_path: Path) -> None:
    from datasets import load_from_disk

    instances = sample_instances()
    result = write_trl(instances, tmp_path, system_prompt="You plan research.")
    assert result.rows == {"train": 3}
    train = load_from_disk(str(tmp_path / "dataset"))["train"]
    assert train.column_names == TRL_SCHEMA.names
    rows: list[dict[str, Any]] = train.to_list()
    assert rows == pq.read_table(tmp_path / "train.parquet").to_pylist()
    for row, inst in zip(rows, instances, strict=True):
        assert row["prompt"] == [
            {"role": "system", "content": "You plan research."},
            {"role": "user", "content": inst.question},
        ]
        assert row["question"] == inst.question
        assert row["reference"] == inst.reference_answer
        assert Rubric.model_validate_json(row["rubric"]) == inst.rubric
        assert row["privileged_context"] == privileged_context(inst.rubric)
        assert (row["instance_id"], row["paper_id"], row["recipe"]) == (
            inst.id,
            inst.paper_id,
            inst.recipe,
        )


def test_export_trl_privileged_context_numbers_specific_criteria_by_rank() -> None:
    rubric = sample_instances()[0].rubric
    text = privileged_context(rubric)
    for rank in range(1, 11):
        assert f"\n{rank}. The plan for pa states step {rank} —" in text
    assert text.index("\n1. ") < text.index("\n2. ") < text.index("\n10. ")
    assert "General criteria:" in text and rubric.general[0].text in text
    assert "leak" not in text.lower()  # verdicts and scores are not teacher context


def test_export_hf_keeps_nested_records_and_round_trips(tmp_path: Path) -> None:
    from datasets import load_from_disk

    instances = sample_instances()
    write_hf(instances, tmp_path)
    train = load_from_disk(str(tmp_path / "dataset"))["train"]
    first = train[0]
    verdict = first["rubric"]["specific"][0]["leakage"][1]
    assert verdict == instances[0].rubric.specific[0].leakage[1].model_dump()
    assert first["rubric"]["general"][0]["id"] == "general-requirements"
    assert read_hf_instances(tmp_path / "dataset") == instances
    with pytest.raises(BadInputError, match="no 'test' split"):
        read_hf_instances(tmp_path / "dataset", split="test")
    with pytest.raises(BadInputError, match="not a saved Hugging Face dataset"):
        read_hf_instances(tmp_path)


def test_export_parquet_round_trips_to_equal_instances(tmp_path: Path) -> None:
    instances = sample_instances()
    write_parquet(instances, tmp_path)
    back = read_parquet_instances(tmp_path / "train.parquet")
    assert back == instances
    # Nested fields stay structs, so query engines can reach into them.
    column = pq.read_table(tmp_path / "train.parquet").column("rubric")
    assert str(column.type).startswith("struct<specific: list<element: struct<id: string")


def test_export_parquet_reader_refuses_other_files(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file"):
        read_parquet_instances(tmp_path / "missing.parquet")
    write_verl(sample_instances(), tmp_path / "verl")
    with pytest.raises(BadInputError, match="holds the verl export"):
        read_parquet_instances(tmp_path / "verl" / "train.parquet")
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(BadInputError, match="not a parquet file"):
        read_parquet_instances(tmp_path / "junk.parquet")


def test_export_schema_derivation_fails_loudly_on_unmapped_types() -> None:
    class Odd(BaseModel):
        mapping: dict[str, int]

    with pytest.raises(TypeError, match=r"odd\.mapping"):
        arrow_type(Odd, "odd")


def test_an_empty_split_is_left_out_of_the_dataset_and_the_rest_loads(tmp_path: Path) -> None:
    """A one-paper build split 50/50 leaves one split empty: the export must still load."""
    from datasets import load_from_disk

    from papergym.export.hf import save_splits

    rows = write_trl(sample_instances(), tmp_path / "full")
    assert rows.rows == {"train": 3}
    train = load_from_disk(str(tmp_path / "full" / "dataset"))["train"].to_list()
    save_splits(tmp_path / "dataset", {"train": train, "test": []}, TRL_SCHEMA)
    loaded = load_from_disk(str(tmp_path / "dataset"))
    assert list(loaded) == ["train"]
    assert loaded["train"].to_list() == train
