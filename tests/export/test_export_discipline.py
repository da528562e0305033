"""The discipline (``Instance.domain``) travels into every export format."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from export_samples import sample_instances

from papergym.export.card import card_data
from papergym.export.hf import instances_dataset
from papergym.export.mix_card import mix_lines
from papergym.export.parquet import instances_table, read_parquet_instances, write_parquet
from papergym.export.trl import TRL_SCHEMA, trl_row
from papergym.export.verl import verl_row
from papergym.recipes.mix import achieved_mix, select_mix


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


def test_the_card_shows_target_against_achieved_and_the_shortfall() -> None:
    pool = {f"cs{i}": "computer science" for i in range(3)} | {"ph0": "physics"}
    selection = select_mix(pool, {"cs": 0.5, "physics": 0.5}, 4, seed=0)
    items = [
        i.model_copy(update={"domain": d})
        for i, d in zip(sample_instances(), ["computer science", "physics", "physics"], strict=True)
    ]
    mix = {
        **selection.model_dump(exclude={"selected"}),
        "achieved": achieved_mix(selection, [i.domain for i in items]),
    }
    data = card_data(items, [], config={}, usage=None, builder_note=None, leakage=None, mix=mix)
    assert data["mix"]["achieved"][1]["instances"] == 2
    text = "\n".join(mix_lines(data["mix"]))
    assert "| physics | 50.0% | 2 | 1 | 1 | 33.3% | 2 | 66.7% |" in text
    assert "Short of papers: physics (1 of 2)." in text
    assert mix_lines(None) == []
