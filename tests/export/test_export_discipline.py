"""The discipline (``Instance.domain``) travels into every export format."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from export_samples import sample_instances

from papergym.export.hf import instances_dataset
from papergym.export.parquet import instances_table, read_parquet_instances, write_parquet
from papergym.export.trl import TRL_SCHEMA, trl_row
from papergym.export.verl import verl_row


def test_every_export_row_carries_the_discipline(tmp_path: Path) -> None:
    items = [
        i.model_copy(update={"domain": d})
        for i, d in zip(sample_instances(), ["computer science", "physics", ""], strict=True)
    ]
    assert "domain" in TRL_SCHEMA.names
    assert [trl_row(i)["domain"] for i in items] == ["computer science", "physics", ""]
    assert [verl_row(i, n)["extra_info"]["domain"] for n, i in enumerate(items)] == [
        "computer science",
        "physics",
        "",
    ]
    assert instances_table(items).column("domain").to_pylist() == [i.domain for i in items]
    assert instances_dataset(items)["domain"] == [i.domain for i in items]
    write_parquet(items, tmp_path)
    [path] = sorted(tmp_path.rglob("*.parquet"))
    assert "domain" in pq.read_schema(path).names
    assert [i.domain for i in read_parquet_instances(path)] == [i.domain for i in items]
