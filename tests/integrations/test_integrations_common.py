"""What runs without verifiers or inspect_ai: the shared adapter code, the verifiers package
writer (`papergym export --format verifiers`) and the cards that mention both frameworks."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from papergym.cli.export import export
from papergym.export.card import card_stats, render_card
from papergym.export.run import ExportFormat, chosen_formats
from papergym.export.trl import trl_row
from papergym.export.verifiers import environment_name, module_name
from papergym.integrations.common import (
    UnscoredAnswer,
    integration_config,
    row_instance,
    score_metrics,
    verdict_rows,
)
from papergym.records import Score, Verdict
from support.plans_server import plan_instances, write_plans_build

runner = CliRunner()
app = typer.Typer()
app.command("export")(export)


@app.command("noop")
def _noop() -> None:
    """A second command, so that Typer keeps ``export`` as a sub-command like the real CLI."""


def test_keyword_arguments_configure_the_reward_like_score_flags(tmp_path: Path) -> None:
    file = tmp_path / "c.yaml"
    file.write_text("reward:\n  alpha: 0.4\n  judge: offline\n", encoding="utf-8")
    assert integration_config(file).reward.alpha == 0.4
    config = integration_config(
        file,
        ["reward.normalisation=absolute"],
        judge="llm",
        alpha=0.9,
        judge_base_url="http://127.0.0.1:9/v1",
        judge_model="judge-m",
        judge_api_key_env="JUDGE_KEY",
    )
    assert (config.reward.judge, config.reward.alpha) == ("llm", 0.9)
    assert config.reward.normalisation == "absolute"
    backend = config.llm.for_role("judge")
    assert (backend.model, backend.base_url, backend.api_key_env) == (
        "judge-m",
        ("http://127.0.0.1:9/v1",),
        "JUDGE_KEY",
    )
    # a second field refines the judge's backend instead of replacing it
    refined = integration_config(
        None, ["llm.roles.judge={model: m1, base_url: [http://a/v1]}"], judge_model="m2"
    )
    assert refined.llm.for_role("judge").base_url == ("http://a/v1",)
    assert refined.llm.for_role("judge").model == "m2"


def test_exported_rows_become_the_same_instances() -> None:
    for instance in plan_instances():
        row = trl_row(instance)
        back = row_instance(row)
        assert (back.id, back.question, back.reference_answer) == (
            instance.id,
            instance.question,
            instance.reference_answer,
        )
        assert back.rubric == instance.rubric
        assert row_instance({**row, "rubric": json.loads(row["rubric"])}).rubric == instance.rubric


def test_metrics_leave_out_unscored_parts_and_verdicts_keep_reasons() -> None:
    verdicts = (
        Verdict(criterion_id="s1", passed=True, reason="met"),
        Verdict(criterion_id="g1", passed=None, kind="general", reason="judge failed"),
    )
    score = Score(
        instance_id="i", value=None, specific=1.0, verdicts=verdicts, unscored_reason="why"
    )
    assert score_metrics(score, "plan") == {
        "rubric_unscored": 1.0,
        "answer_chars": 4.0,
        "rubric_specific": 1.0,
    }
    assert [(v["criterion_id"], v["passed"], v["reason"]) for v in verdict_rows(score)] == [
        ("s1", True, "met"),
        ("g1", None, "judge failed"),
    ]
    error = UnscoredAnswer("i", "why")
    assert str(error) == "instance i: answer unscored: why" and error.reason == "why"


def test_environment_names_follow_the_build_folder(tmp_path: Path) -> None:
    build = tmp_path / "Plans 2026"
    assert environment_name(build / "export" / "verifiers", build) == "papergym-plans-2026"
    assert environment_name(tmp_path / "my-env") == "papergym-my-env"
    assert environment_name(tmp_path / "papergym_cs") == "papergym-cs"
    assert module_name("papergym-plans-2026") == "papergym_plans_2026"


def test_all_formats_are_the_datasets_and_verifiers_is_asked_for() -> None:
    assert "verifiers" not in chosen_formats(None)
    assert chosen_formats([ExportFormat.verifiers, ExportFormat.verl]) == ["verl", "verifiers"]


def test_export_writes_an_environment_package(tmp_path: Path) -> None:
    build = write_plans_build(tmp_path / "plans")
    out = tmp_path / "env"
    result = runner.invoke(
        app,
        ["export", str(build), "-f", "verifiers", "-o", str(out), "--split", "0.5",
         "--system-prompt", "Write a research plan.", "reward.alpha=0.6"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    project = tomllib.loads((out / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == "papergym-env"
    assert any(d.startswith("verifiers>=0.4") for d in project["project"]["dependencies"])
    package = out / "papergym_env"
    compile((package / "__init__.py").read_text(encoding="utf-8"), "__init__.py", "exec")
    shipped = yaml.safe_load((package / "papergym.yaml").read_text(encoding="utf-8"))
    assert shipped["reward"]["alpha"] == 0.6  # the export's configuration: the reward's settings
    rows = [
        json.loads(line)
        for split in ("train", "test")
        for line in (package / "data" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    by_id = {i.id: i for i in plan_instances()}
    assert sorted(r["instance_id"] for r in rows) == sorted(by_id)
    for row in rows:  # the training prompt and the fields the TRL reward reads
        expected = trl_row(by_id[row["instance_id"]], system_prompt="Write a research plan.")
        assert {k: row[k] for k in ("prompt", "question", "reference", "rubric")} == {
            k: expected[k] for k in ("prompt", "question", "reference", "rubric")
        }
    assert "verifiers" in (out / "card.md").read_text(encoding="utf-8")
    assert "vf-eval papergym-env" in (out / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("formats", [(), ("verifiers",)])
def test_cards_show_verifiers_and_inspect(formats: tuple[str, ...]) -> None:
    stats = card_stats(plan_instances(), [])
    card = render_card(
        stats, config={}, usage=None, builder_note=None, leakage=None, formats=formats
    )
    assert "### verifiers" in card and "pip install 'papergym[verifiers]'" in card
    if not formats:  # a build's card: every way in
        assert "inspect eval papergym/papergym -T data=BUILD_DIR" in card
        assert "papergym export BUILD_DIR --format verifiers" in card


def test_ares_rows_are_judged_as_documents_and_paper_rows_as_plans() -> None:
    # the judge's prompt follows the source kind, which an exported row carries only as its recipe
    row = trl_row(plan_instances()[0])
    assert row_instance(row).source_kind == "paper"
    assert row_instance({**row, "recipe": "ares"}).source_kind == "document"
