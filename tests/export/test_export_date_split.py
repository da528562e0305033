"""Splits by date (``--split-by date --test-after YYYY-MM``): the rule, undated papers, the card
and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from export_samples import instance
from typer.testing import CliRunner

from papergym.cli.export import export
from papergym.errors import BadInputError
from papergym.export.common import split_instances
from papergym.export.datesplit import (
    DateSplit,
    date_ranges,
    instance_month,
    split_by_date,
)
from papergym.export.month import parse_month
from papergym.jsonl import write_jsonl
from papergym.records import Instance
from papergym.train.settings import DataSettings

runner = CliRunner()
app = typer.Typer()
app.command("export")(export)


@app.command("noop")
def _noop() -> None:
    """A second command, so that Typer keeps ``export`` as a sub-command like the real CLI."""


def dated(paper: str, date: str | None, arxiv_id: str | None = None) -> Instance:
    return instance(paper).model_copy(update={"date": date, "arxiv_id": arxiv_id})


def test_parse_month_accepts_only_year_dash_month() -> None:
    assert parse_month("2024-06") == "2024-06"
    for bad in ("2024-6", "2024-13", "2024-00", "24-06", "2024-06-01", "June 2024", ""):
        with pytest.raises(ValueError, match="YYYY-MM"):
            parse_month(bad)


def test_instance_month_prefers_the_date_then_the_arxiv_id() -> None:
    assert instance_month(dated("a", "2023-11-30")) == "2023-11"
    assert instance_month(dated("b", "2023-11", arxiv_id="2401.00001")) == "2023-11"
    # files written before Instance.date existed: the month in the arXiv id
    assert instance_month(dated("c", None, arxiv_id="2401.00001")) == "2024-01"
    assert instance_month(dated("d", None, arxiv_id="hep-th/9901001")) == "1999-01"
    assert instance_month(dated("e", None)) is None
    assert instance_month(dated("f", "sometime")) is None


def test_date_split_puts_papers_after_the_month_in_test_keeping_order() -> None:
    items = [
        dated("p1", "2024-07"),
        dated("p2", "2024-06-30"),  # the cut-off month itself is train
        dated("p3", "2023-01"),
        dated("p4", "2025-02-01"),
    ]
    splits = split_by_date(items, DateSplit("2024-06"))
    assert [i.paper_id for i in splits["train"]] == ["p2", "p3"]
    assert [i.paper_id for i in splits["test"]] == ["p1", "p4"]
    assert date_ranges(splits) == {
        "train": {"first": "2023-01", "last": "2024-06", "undated": 0},
        "test": {"first": "2024-07", "last": "2025-02", "undated": 0},
    }
    # the shared entry point every format calls takes the rule instead of the hash
    assert split_instances(items, None, DateSplit("2024-06")) == splits


def test_undated_papers_are_refused_or_placed_as_asked() -> None:
    items = [dated("p1", "2024-07"), dated("undated-one", None)]
    with pytest.raises(BadInputError, match=r"undated-one.*no date.*--undated") as error:
        split_by_date(items, DateSplit("2024-06"), "b/instances.jsonl")
    assert str(error.value).startswith("b/instances.jsonl: instance ")
    assert "\n" not in str(error.value)
    train = split_by_date(items, DateSplit("2024-06", "train"))
    assert [i.paper_id for i in train["train"]] == ["undated-one"]
    test = split_by_date(items, DateSplit("2024-06", "test"))
    assert [i.paper_id for i in test["test"]] == ["p1", "undated-one"]
    assert date_ranges(test)["test"] == {"first": "2024-07", "last": "2024-07", "undated": 1}
    dropped = split_by_date(items, DateSplit("2024-06", "drop"))
    assert dropped == {"train": [], "test": [items[0]]}
    with pytest.raises(ValueError, match="YYYY-MM"):
        DateSplit("2024/06")


def test_data_settings_check_the_date_split_keys() -> None:
    assert DataSettings(split_by="date", test_after="2024-06").undated == "refuse"
    for bad, message in (
        ({"split_by": "date"}, "needs test_after"),
        ({"split_by": "date", "test_after": "2024-6"}, "YYYY-MM"),
        ({"split_by": "date", "test_after": "2024-06", "test_fraction": 0.2}, "both set"),
        ({"test_after": "2024-06"}, "split_by is hash"),
    ):
        with pytest.raises(ValueError, match=message):
            DataSettings(**bad)


@pytest.fixture
def dated_build(tmp_path: Path) -> Path:
    build = tmp_path / "build"
    items = [
        dated("old", "2022-03"),
        dated("mid", "2024-06-15"),
        dated("new", None, arxiv_id="2501.00002"),  # dated by its arXiv id only
        dated("nodate", None),
    ]
    write_jsonl(build / "instances.jsonl", items)
    return build


def test_export_command_splits_by_date_and_the_card_states_the_rule(
    dated_build: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["export", str(dated_build), "-f", "parquet", "-o", str(out), "--json"]
    date_args = ["--split-by", "date", "--test-after", "2024-06", "--undated", "train"]
    result = runner.invoke(app, [*args, *date_args])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["exports"][0]["rows"] == {"train": 3, "test": 1}
    test_ids = pq.read_table(out / "test.parquet").column("paper_id").to_pylist()
    assert test_ids == ["new"]
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    rule = card["split_rule"]
    assert rule["split_by"] == "date" and rule["test_after"] == "2024-06"
    assert rule["date_ranges"]["train"] == {"first": "2022-03", "last": "2024-06", "undated": 1}
    assert rule["date_ranges"]["test"] == {"first": "2025-01", "last": "2025-01", "undated": 0}
    text = (out / "card.md").read_text(encoding="utf-8")
    assert "papers dated after 2024-06 are test" in text
    assert "| train | 2022-03 | 2024-06 | 1 |" in text


def test_export_command_refuses_an_undated_paper_and_writes_nothing(
    dated_build: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["export", str(dated_build), "-o", str(out), "--split-by", "date", "--test-after"]
    result = runner.invoke(app, [*args, "2024-06"])
    assert result.exit_code == 2
    assert "instances.jsonl: instance" in result.output and "nodate" in result.output
    assert not out.exists()
    bad_month = runner.invoke(app, [*args, "2024-13"])
    assert bad_month.exit_code == 2 and "YYYY-MM" in bad_month.output
    assert not out.exists()


def test_export_hash_split_card_states_its_rule(dated_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["export", str(dated_build), "-f", "parquet", "-o", str(out), "--split", "0.5"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["split_rule"]["split_by"] == "hash"
    assert card["split_rule"]["test_fraction"] == 0.5
    assert "stable hash" in (out / "card.md").read_text(encoding="utf-8")


def test_training_and_eval_hold_out_the_same_papers_by_date(dated_build: Path) -> None:
    from papergym.eval.data import load_eval_data
    from papergym.export.datesplit import date_rule
    from papergym.train.data import load_instances

    settings = DataSettings(
        build_dir=dated_build, split_by="date", test_after="2024-06", undated="drop"
    )
    splits = load_instances(settings)
    assert [i.paper_id for i in splits["train"]] == ["old", "mid"]
    assert [i.paper_id for i in splits["test"]] == ["new"]
    rule = date_rule(settings.split_by, settings.test_after, settings.undated)
    held_out = load_eval_data(dated_build, "auto", None, date_split=rule)
    assert held_out.split == "test" and [i.paper_id for i in held_out.instances] == ["new"]
    with pytest.raises(BadInputError, match="nodate"):
        load_instances(settings.model_copy(update={"undated": "refuse"}))
