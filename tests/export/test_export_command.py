from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from export_samples import sample_drops, sample_instances
from typer.testing import CliRunner

from papergym.cli.export import export
from papergym.export.card import write_card
from papergym.export.parquet import read_parquet_instances
from papergym.jsonl import write_jsonl

runner = CliRunner()
app = typer.Typer()
app.command("export")(export)


@app.command("noop")
def _noop() -> None:
    """A second command, so that Typer keeps ``export`` as a sub-command like the real CLI."""


@pytest.fixture
def build_dir(tmp_path: Path) -> Path:
    build = tmp_path / "build"
    write_jsonl(build / "instances.jsonl", sample_instances())
    write_jsonl(build / "dropped.jsonl", sample_drops())
    usage = {"usage": [{"stage": "judge", "role": "judge", "model": "m", "calls": 6,
                        "prompt_tokens": 60, "completion_tokens": 6, "cost_usd": 0.03}]}  # fmt: skip
    (build / "usage.json").write_text(json.dumps(usage), encoding="utf-8")
    (build / "config.yaml").write_text("recipe: papergym\nalpha: 0.7\n", encoding="utf-8")
    return build


def test_export_command_writes_every_format_with_a_card(build_dir: Path) -> None:
    result = runner.invoke(app, ["export", str(build_dir)])
    assert result.exit_code == 0, result.output
    assert "Exported 3 instance(s)" in result.output
    root = build_dir / "export"
    for name in ("verl", "trl", "hf", "parquet"):
        assert name in result.output
        assert (root / name / "card.md").is_file()
    assert pq.read_table(root / "verl" / "train.parquet").num_rows == 3
    assert (root / "trl" / "dataset" / "dataset_dict.json").is_file()
    assert read_parquet_instances(root / "parquet" / "train.parquet") == sample_instances()
    card = json.loads((root / "verl" / "card.json").read_text(encoding="utf-8"))
    assert card["stats"]["drops"]["total"] == 4
    assert card["usage"]["per_instance"]["cost_usd"] == 0.01
    assert card["config"] == {"recipe": "papergym", "alpha": 0.7}
    assert "### verl" in (root / "verl" / "card.md").read_text(encoding="utf-8")
    assert "### TRL" not in (root / "verl" / "card.md").read_text(encoding="utf-8")


def test_export_command_json_with_split_and_out(build_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["export", str(build_dir), "-f", "verl", "-o", str(out), "--split", "0.5", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    [entry] = data["exports"]
    assert entry["format"] == "verl" and entry["path"] == str(out)
    assert sum(entry["rows"].values()) == 3 and set(entry["rows"]) == {"train", "test"}
    assert data["instances"] == 3 and data["split"] == 0.5
    assert (out / "train.parquet").is_file() and (out / "test.parquet").is_file()


def test_export_command_several_formats_under_out(build_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "many"
    result = runner.invoke(
        app, ["export", str(build_dir), "-f", "parquet", "-f", "hf", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["hf", "parquet"]


def test_export_command_missing_instances_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty-build").mkdir()
    result = runner.invoke(app, ["export", str(tmp_path / "empty-build")])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "instances.jsonl: no such file" in result.output
    assert "Traceback" not in result.output


def test_export_command_bad_input_names_the_file(build_dir: Path) -> None:
    with (build_dir / "instances.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "broken"}\n')
    result = runner.invoke(app, ["export", str(build_dir), "-f", "verl"])
    assert result.exit_code == 2
    assert "instances.jsonl:4: not a valid Instance" in result.output
    bad_split = runner.invoke(app, ["export", str(build_dir), "--split", "1.5"])
    assert bad_split.exit_code == 2 and "--split" in bad_split.output
    unknown = runner.invoke(app, ["export", str(build_dir), "-f", "csv"])
    assert unknown.exit_code == 2


def test_export_command_takes_usage_note_and_audit_from_the_build(tmp_path: Path) -> None:
    build = tmp_path / "build"
    instances = sample_instances()
    write_jsonl(build / "instances.jsonl", instances)
    usage = [{"stage": "map", "role": "extractor", "model": "m", "calls": 9, "cost_usd": None}]
    write_card(build, instances, [], config={}, usage=usage, builder_note="From the build.",
               leakage=None)  # fmt: skip
    report = {
        "rates": [
            {"dataset": "instances.jsonl", "by": "dataset", "value": "instances.jsonl",
             "criteria": 30, "judge": {"leaked": 1, "scored": 20, "unscored": 0, "rate": 0.05}},
            {"dataset": "instances.jsonl", "by": "dimension", "value": "method",
             "criteria": 16, "overlap": {"leaked": 0, "scored": 16, "unscored": 0, "rate": 0.0}},
        ]
    }  # fmt: skip
    (build / "leakage_report.json").write_text(json.dumps(report), encoding="utf-8")
    result = runner.invoke(app, ["export", str(build), "-f", "parquet"])
    assert result.exit_code == 0, result.output
    card = json.loads((build / "export" / "parquet" / "card.json").read_text(encoding="utf-8"))
    assert card["usage"]["calls"] == 9 and card["usage"]["cost_usd"] is None
    assert card["builder_note"] == "From the build."
    assert card["leakage_audit"] == {
        "instances.jsonl": {"criteria": 30, "judge_rate": 0.05},
        "instances.jsonl [dimension=method]": {"criteria": 16, "overlap_rate": 0.0},
    }
    text = (build / "export" / "parquet" / "card.md").read_text(encoding="utf-8")
    assert "5.0%" in text and "From the build." in text
    # The build's own card points at every export folder.
    assert "export/verl/train.parquet" in (build / "card.md").read_text(encoding="utf-8")


def test_export_command_bad_side_file_is_exit_2(build_dir: Path) -> None:
    (build_dir / "usage.json").write_text("{not json", encoding="utf-8")
    result = runner.invoke(app, ["export", str(build_dir), "-f", "verl"])
    assert result.exit_code == 2 and "usage.json: not valid JSON" in result.output


def test_export_command_reads_bom_and_refuses_invalid_utf8_in_one_line(build_dir: Path) -> None:
    instances = build_dir / "instances.jsonl"
    instances.write_bytes(b"\xef\xbb\xbf" + instances.read_bytes())  # Windows editors add one
    for side in ("usage.json", "config.yaml"):
        (build_dir / side).write_bytes(b"\xef\xbb\xbf" + (build_dir / side).read_bytes())
    result = runner.invoke(app, ["export", str(build_dir), "-f", "parquet"])
    assert result.exit_code == 0, result.output
    assert len(read_parquet_instances(build_dir / "export" / "parquet" / "train.parquet")) == 3

    for name, line in (("instances.jsonl", ":2"), ("dropped.jsonl", ":1"), ("usage.json", "")):
        broken = build_dir.parent / f"broken-{name}"
        shutil.copytree(build_dir, broken)
        path = broken / name
        data = path.read_bytes().splitlines(keepends=True)
        data[int(line[1:]) - 1 if line else 0] = b'{"text": "caf\xe9"}\n'  # latin-1, not UTF-8
        path.write_bytes(b"".join(data))
        result = runner.invoke(app, ["export", str(broken), "-f", "parquet"])
        assert result.exit_code == 2, result.output
        assert f"{name}{line}: not UTF-8 text" in result.output
        assert "Traceback" not in result.output and "internal error" not in result.output


def test_export_command_exports_identical_copies_once_with_a_warning(build_dir: Path) -> None:
    instances = build_dir / "instances.jsonl"
    lines = instances.read_bytes().splitlines(keepends=True)
    instances.write_bytes(b"".join([*lines, lines[0], b"\n", lines[0]]))  # two builds concatenated
    result = runner.invoke(app, ["export", str(build_dir), "-f", "parquet"])
    assert result.exit_code == 0, result.output
    rows = read_parquet_instances(build_dir / "export" / "parquet" / "train.parquet")
    assert [r.id for r in rows] == [i.id for i in sample_instances()]
    first = sample_instances()[0].id
    assert "1 instance(s) repeated with identical content" in result.output
    assert f"{first} on lines 1, 4, 6" in result.output


def test_export_command_refuses_an_id_repeated_with_different_content(build_dir: Path) -> None:
    instances = build_dir / "instances.jsonl"
    changed = sample_instances()[1].model_copy(update={"question": "Another question?"})
    with instances.open("a", encoding="utf-8") as handle:
        handle.write(changed.model_dump_json(exclude_computed_fields=True) + "\n")
    result = runner.invoke(app, ["export", str(build_dir), "-f", "parquet"])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert f"instance id {changed.id} is on lines 2 and 4 with different content" in result.output
    assert not (build_dir / "export").exists()  # nothing written


def test_export_refuses_a_folder_of_something_else_and_writes_nothing(
    build_dir: Path, tmp_path: Path
) -> None:
    review = tmp_path / "reviews"  # another command's output: its config.yaml must survive
    review.mkdir()
    (review / "config.yaml").write_text("review: {}\n", encoding="utf-8")
    (review / "reviews.jsonl").write_text("", encoding="utf-8")
    for name in ("trl", "verl", "verifiers"):
        result = runner.invoke(app, ["export", str(build_dir), "-f", name, "-o", str(review)])
        assert result.exit_code == 2, result.output
        assert "not a PaperGym export" in result.output and str(review) in result.output
    assert sorted(p.name for p in review.iterdir()) == ["config.yaml", "reviews.jsonl"]
    assert (review / "config.yaml").read_text(encoding="utf-8") == "review: {}\n"


def test_export_over_an_earlier_export_is_allowed(build_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "verl"
    for _ in range(2):
        result = runner.invoke(app, ["export", str(build_dir), "-f", "verl", "-o", str(out)])
        assert result.exit_code == 0, result.output
