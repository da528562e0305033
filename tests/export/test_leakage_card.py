"""The card's leakage before/after the build's action and its comparison with audited datasets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from export_samples import sample_instances
from typer.testing import CliRunner

from papergym.audit.report import AuditReport, DatasetSummary, MethodRate, RateRow
from papergym.cli.export import export
from papergym.errors import BadInputError
from papergym.export.card import card_data, write_card
from papergym.export.leakage_card import AUDIT_REPORT, action_stats, read_comparison
from papergym.jsonl import write_jsonl
from papergym.records import Criterion, Drop, Instance, LeakageVerdict


def judged(cid: str, leaked: bool | None, replaces: str | None = None) -> Criterion:
    verdict = LeakageVerdict(method="judge", leaked=leaked, reason="r")
    return Criterion(id=cid, text=f"The plan {cid}.", dimension="method", origin="answer",
                     rank=1, leakage=(verdict,), replaces=replaces)  # fmt: skip


def acted(base: Instance) -> Instance:
    """An instance whose build replaced one leaked criterion and removed another."""
    specific = (judged("a", False), judged("r", False, replaces="x"), judged("u", None))
    out = (judged("x", True), judged("y", True))
    rubric = base.rubric.model_copy(update={"specific": specific, "leaked_out": out})
    return base.model_copy(update={"rubric": rubric})


def test_before_counts_what_the_action_took_out_and_not_the_replacements() -> None:
    instance = acted(sample_instances()[0])
    stats = action_stats([instance], [Drop(source="s", step="leakage", reason="too few")])
    assert stats is not None
    # before: a, u, x, y (r replaced x); u is unscored, so 2 leaked of 3 scored
    assert stats["before"] == {"criteria": 4, "scored": 3, "leaked": 2, "unscored": 1,
                               "rate": round(2 / 3, 6)}  # fmt: skip
    assert stats["after"]["leaked"] == 0 and stats["after"]["scored"] == 2
    assert (stats["replaced"], stats["removed"]) == (1, 1)
    assert (stats["instances_changed"], stats["instances_dropped"]) == (1, 1)


def test_no_judge_verdicts_no_action_stats() -> None:
    bare = sample_instances()[0]
    rubric = bare.rubric.model_copy(
        update={"specific": tuple(c.model_copy(update={"leakage": ()})
                                  for c in bare.rubric.specific)})  # fmt: skip
    assert action_stats([bare.model_copy(update={"rubric": rubric})], []) is None


def test_only_a_build_that_recorded_an_action_gets_the_section() -> None:
    plain = sample_instances()  # judge verdicts, but no action recorded: an earlier build
    common = {"usage": None, "builder_note": None, "leakage": None}
    assert "leakage_action" not in card_data(plain, [], config={}, **common)["stats"]
    recorded = card_data(plain, [], config={"leakage_action": "keep"}, **common)["stats"]
    assert recorded["leakage_action"]["before"] == recorded["leakage_action"]["after"]
    assert "leakage_action" in card_data([acted(plain[0])], [], config={}, **common)["stats"]


def audit_folder(root: Path, name: str, judge: bool) -> Path:
    rate = MethodRate(leaked=3, scored=10, unscored=0, rate=0.3)
    report = AuditReport(
        datasets=[DatasetSummary(path=name, format="researchqa", items=2, criteria=10)],
        methods=["overlap", "judge"] if judge else ["overlap"],
        rates=[RateRow(dataset=name, by="dataset", value=name, criteria=10, overlap=rate,
                       judge=rate if judge else None),
               RateRow(dataset=name, by="dimension", value="method", criteria=5,
                       overlap=rate)],
        top=[],
    )  # fmt: skip
    folder = root / name
    folder.mkdir()
    (folder / AUDIT_REPORT).write_text(report.model_dump_json(), encoding="utf-8")
    return folder


def test_comparison_rows_name_dataset_method_and_denominator(tmp_path: Path) -> None:
    rows = read_comparison([audit_folder(tmp_path, "rqa.jsonl", judge=True)])
    assert [(r["dataset"], r["method"], r["leaked"], r["scored"]) for r in rows] == [
        ("rqa.jsonl", "judge", 3, 10), ("rqa.jsonl", "overlap", 3, 10)]  # fmt: skip
    assert rows[0]["format"] == "researchqa"


def test_a_folder_without_an_audit_report_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="not a papergym audit output folder"):
        read_comparison([tmp_path])
    (tmp_path / AUDIT_REPORT).write_text("{}", encoding="utf-8")
    with pytest.raises(BadInputError, match="no per-dataset rates"):
        read_comparison([tmp_path])


def test_card_shows_before_after_and_the_comparison_by_method(tmp_path: Path) -> None:
    instances = [acted(sample_instances()[0])]
    rows = read_comparison([audit_folder(tmp_path, "rqa.jsonl", judge=False)])
    write_card(tmp_path / "card", instances, [], config={"leakage_action": "replace"},
               usage=None, builder_note=None, leakage=None, comparison=rows)  # fmt: skip
    text = (tmp_path / "card" / "card.md").read_text(encoding="utf-8")
    assert "Build action on judge-leaked criteria: replace (1 replaced, 1 removed" in text
    assert "| before the action | judge | 2 / 3 | 1 | 66.67% |" in text
    assert "| as published | judge | 0 / 2 | 1 | 0.00% |" in text
    assert "compare rates within one method only" in text
    judge_row = text.index("| this dataset (published) | judge |")
    assert judge_row < text.index("| rqa.jsonl | overlap | 3 / 10 | 0 | 30.00% |")
    data = json.loads((tmp_path / "card" / "card.json").read_text(encoding="utf-8"))
    assert data["leakage_comparison"] == rows
    assert data["stats"]["leakage_action"]["after"]["scored"] == 2


def test_export_compare_leakage_option(tmp_path: Path) -> None:
    app = typer.Typer()
    app.command("export")(export)
    app.command("noop")(lambda: None)
    build = tmp_path / "build"
    write_jsonl(build / "instances.jsonl", [acted(sample_instances()[0])])
    audit = audit_folder(tmp_path, "rubrichub.jsonl", judge=True)
    args = ["export", str(build), "-f", "verl", "--compare-leakage", str(audit)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    card = (build / "export" / "verl" / "card.md").read_text(encoding="utf-8")
    assert "| rubrichub.jsonl | judge | 3 / 10 | 0 | 30.00% |" in card
    bad = CliRunner().invoke(app, ["export", str(build), "--compare-leakage", str(build)])
    assert bad.exit_code == 2 and "not a papergym audit output folder" in bad.output
    assert bad.output.strip().count("\n") == 0
