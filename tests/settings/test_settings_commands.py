"""Every command reads the one configuration: ``-c``, ``key=value`` arguments, flags that set the
same keys, and the resolved configuration saved in its output folder. Build, audit, export,
llm-check and train (score and serve-reward: test_settings.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl
from papergym.llm.config import LLMConfig
from papergym.recipes.output import BuildSettings, check_output, settings_for, start_output
from papergym.records import Instance
from papergym.settings.load import config_yaml
from papergym.settings.models import PaperGymConfig
from support.instances import rubric_instance

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "papers"
runner = CliRunner()
NO_ENV = {
    "PAPERGYM_BASE_URL": "",
    "PAPERGYM_MODEL": "",
    "PAPERGYM_LLM_CONFIG": "",
    "PAPERGYM_CONFIG": "",
}


class Stop(Exception):
    """Raised by a stand-in for a command's work (the command reports it as an internal error):
    the resolved configuration is what is tested."""


def _instance() -> Instance:
    return rubric_instance(
        "i1",
        [f"Uses a sliding window of size {n} with global tokens." for n in (1, 2)],
        question="How would you study sparse attention for long documents?",
        reference_answer="We would measure recall with a sliding window and global tokens.",
        title="t",
        paper_id="p",
        criterion_prefix="s",
        general="The plan is specific.",
    )


def _build_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "built"
    folder.mkdir()
    (folder / "instances.jsonl").write_text(_instance().model_dump_json() + "\n")
    return folder


# --- build ----------------------------------------------------------------------------------------


def _captured_build(monkeypatch: pytest.MonkeyPatch, *args: str) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []

    async def stop(out: Path, settings: BuildSettings, saved: str, *_: Any) -> Any:
        seen.append({"settings": settings.model_dump(), "config": yaml.safe_load(saved)})
        raise Stop

    monkeypatch.setattr("papergym.recipes.run._run", stop)
    result = runner.invoke(app, ["build", *args], env=NO_ENV)
    assert len(seen) == 1, result.output
    return seen[0]


def test_build_flags_and_keys_give_the_same_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = [str(EXAMPLES), "-o", str(tmp_path / "out")]
    flagged = _captured_build(
        monkeypatch,
        *base,
        "--recipe",
        "innov",
        "--builder",
        "extractive",
        "--limit",
        "3",
        "--no-leakage-judge",
        "--paper-concurrency",
        "2",
        "--no-cache",
    )
    keyed = _captured_build(
        monkeypatch,
        *base,
        "build.recipe=innov",
        "build.builder=extractive",
        "build.limit=3",
        "build.leakage_judge=false",
        "build.paper_concurrency=2",
        "llm.cache=false",
    )
    assert flagged == keyed
    assert flagged["settings"]["recipe"] == "innov" and flagged["settings"]["limit"] == 3
    assert flagged["config"]["build"]["paper_concurrency"] == 2


def test_build_reads_the_build_section_of_a_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("build: {recipe: design, limit: 5, max_unit_words: 300}\n")
    seen = _captured_build(monkeypatch, str(EXAMPLES), "-o", str(tmp_path / "o"), "-c", str(path))
    assert (seen["settings"]["recipe"], seen["settings"]["limit"]) == ("design", 5)
    assert seen["settings"]["max_unit_words"] == 300  # no flag: only the file sets it
    # a flag beats the file, and a key=value argument beats both
    seen = _captured_build(
        monkeypatch, str(EXAMPLES), "-o", str(tmp_path / "o"), "-c", str(path), "--limit", "2"
    )
    assert seen["settings"]["limit"] == 2
    seen = _captured_build(
        monkeypatch,
        str(EXAMPLES),
        "build.limit=1",
        "-o",
        str(tmp_path / "o"),
        "-c",
        str(path),
        "--limit",
        "2",
    )
    assert seen["settings"]["limit"] == 1


def test_build_llm_flags_are_llm_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = [str(EXAMPLES), "-o", str(tmp_path / "o"), "--builder", "llm"]
    url = "http://127.0.0.1:9/v1"
    flagged = _captured_build(monkeypatch, *base, "--base-url", url, "--model", "m")
    keyed = _captured_build(
        monkeypatch, *base, f"llm.default.base_url={url}", "llm.default.model=m"
    )
    assert flagged == keyed and flagged["settings"]["models"]["judge"] == "openai:m"


def test_a_source_named_like_an_override_is_a_source_when_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[list[Path]] = []

    class Listing:
        """The build's first look at its sources (SourceReader.discover), stopped there."""

        @staticmethod
        def discover(sources: list[Path], out: Path) -> Any:
            seen.append(sources)
            raise Stop

    monkeypatch.setattr("papergym.recipes.run.SourceReader", Listing)
    monkeypatch.chdir(tmp_path)
    Path("build.recipe=innov").mkdir()  # a folder of that name: a path, not an override
    result = runner.invoke(app, ["build", "build.recipe=innov", "-o", "o"], env=NO_ENV)
    assert seen == [[Path("build.recipe=innov")]], result.output
    only = runner.invoke(app, ["build", "build.limit=2", "-o", "o"], env=NO_ENV)
    assert only.exit_code == 2 and "no paper sources given" in only.output


@pytest.mark.slow
def test_build_with_a_key_writes_settings_and_config_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", str(EXAMPLES), "-o", str(out), "build.recipe=innov"])
    assert result.exit_code == 0, result.output
    [instance] = read_jsonl(out / "instances.jsonl", Instance)
    assert instance.recipe == "innov"
    assert yaml.safe_load((out / "build.yaml").read_text())["recipe"] == "innov"
    saved = yaml.safe_load((out / "config.yaml").read_text())
    assert saved["build"]["recipe"] == "innov" and saved["build"]["builder"] == "extractive"
    # the saved config is a config file: the same build, given with -c, resumes
    again = runner.invoke(
        app, ["build", str(EXAMPLES), "-o", str(out), "-c", str(out / "config.yaml"), "--json"]
    )
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["resumed_papers"] == 1


def test_resume_reads_build_yaml_and_the_previous_releases_config_yaml(tmp_path: Path) -> None:
    innov = settings_for("innov", "extractive", None)
    design = settings_for("design", "extractive", None)
    # this release: build.yaml beside a whole-config config.yaml
    new = tmp_path / "new"
    start_output(new, innov, config_yaml(PaperGymConfig()))
    assert check_output(new, innov) is True
    with pytest.raises(BadInputError, match=r"recipe: innov → design"):
        check_output(new, design)
    # the previous release: config.yaml is the flat BuildSettings, there is no build.yaml
    old = tmp_path / "old"
    old.mkdir()
    (old / "config.yaml").write_text(yaml.safe_dump(innov.model_dump()))
    (old / "instances.jsonl").write_text("")
    assert check_output(old, innov) is True
    with pytest.raises(BadInputError, match=r"recipe: innov → design"):
        check_output(old, design)
    # resumed: build.yaml written, config.yaml new
    start_output(old, innov, config_yaml(PaperGymConfig()))
    assert yaml.safe_load((old / "build.yaml").read_text())["recipe"] == "innov"
    assert check_output(old, innov) is True
    # a whole config alone says nothing of the build's settings: not silently the defaults
    (old / "build.yaml").unlink()
    with pytest.raises(BadInputError, match=r"holds no PaperGym build \(build.yaml\)"):
        check_output(old, settings_for("papergym", "extractive", None))


# --- audit ----------------------------------------------------------------------------------------


def test_audit_flags_and_keys_give_the_same_saved_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _build_dir(tmp_path) / "instances.jsonl"
    screened: list[dict[str, float]] = []

    def screen(items: list[Any], **thresholds: float) -> list[Any]:
        screened.append(thresholds)  # the embedding model's load is not what is tested here
        return items

    monkeypatch.setattr("papergym.audit.run.screen_items", screen)
    saved = []
    for name, extra in (
        ("flags", ["--lexical-threshold", "0.5", "--embedding-threshold", "0.9", "--top", "1"]),
        ("keys", ["audit.lexical_threshold=0.5", "audit.embedding_threshold=0.9", "audit.top=1"]),
    ):
        out = tmp_path / name
        result = runner.invoke(app, ["audit", str(source), *extra, "-o", str(out), "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert report["thresholds"] == {"lexical": 0.5, "embedding": 0.9}
        saved.append(yaml.safe_load((out / "audit.config.yaml").read_text()))
    assert saved[0] == saved[1] and saved[0]["audit"]["top"] == 1
    assert screened == [{"lexical_threshold": 0.5, "embedding_threshold": 0.9}] * 2


def test_audit_judge_from_the_config_file_needs_an_llm(tmp_path: Path) -> None:
    source = _build_dir(tmp_path) / "instances.jsonl"
    path = tmp_path / "c.yaml"
    path.write_text("audit: {judge: true}\n")
    result = runner.invoke(app, ["audit", str(source), "-c", str(path)], env=NO_ENV)
    assert result.exit_code == 2 and "--judge needs an LLM" in result.output


# --- export ---------------------------------------------------------------------------------------


def test_export_flags_and_keys_give_the_same_config_in_each_folder(tmp_path: Path) -> None:
    build = _build_dir(tmp_path)
    saved = []
    for name, extra in (
        ("flags", ["--system-prompt", "Plan.", "--split", "0.5"]),
        ("keys", ["data.system_prompt=Plan.", "data.test_fraction=0.5"]),
    ):
        out = tmp_path / name
        args = [
            "export",
            str(build),
            *extra,
            "-f",
            "verl",
            "-f",
            "parquet",
            "-o",
            str(out),
            "--json",
        ]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["split"] == 0.5
        for fmt in ("verl", "parquet"):
            saved.append(yaml.safe_load((out / fmt / "config.yaml").read_text()))
    assert all(s == saved[0] for s in saved) and saved[0]["data"]["system_prompt"] == "Plan."


def test_export_card_shows_the_build_settings_not_the_whole_config(tmp_path: Path) -> None:
    build = _build_dir(tmp_path)
    start_output(build, settings_for("innov", "extractive", None), config_yaml(PaperGymConfig()))
    result = runner.invoke(app, ["export", str(build), "-f", "trl", "-o", str(tmp_path / "x")])
    assert result.exit_code == 0, result.output
    card = json.loads((tmp_path / "x" / "card.json").read_text())
    assert card["config"]["recipe"] == "innov" and "reward" not in card["config"]


# --- llm-check ------------------------------------------------------------------------------------


def test_llm_check_flags_keys_and_file_give_the_same_llm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[LLMConfig] = []

    async def stop(config: LLMConfig, roles: Any, max_tokens: int) -> Any:
        seen.append(config)
        raise Stop

    monkeypatch.setattr("papergym.cli.llm_check.check_backends", stop)
    url = "http://127.0.0.1:9/v1"
    path = tmp_path / "c.yaml"
    path.write_text(f"llm: {{default: {{base_url: '{url}', model: m}}}}\n")
    for args in (
        ["--base-url", url, "--model", "m"],
        [f"llm.default.base_url={url}", "llm.default.model=m"],
        ["-c", str(path)],
    ):
        result = runner.invoke(app, ["llm-check", *args], env=NO_ENV)
        assert "Stop" in result.output, result.output  # reached the check, reported as internal
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]
    assert seen[0].for_role("judge").model == "m"


# --- train ----------------------------------------------------------------------------------------


def test_train_takes_its_config_as_argument_or_with_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[PaperGymConfig] = []

    def stop(config: PaperGymConfig, as_json: bool, log_every: int | None = None) -> None:
        seen.append(config)

    monkeypatch.setattr("papergym.cli.train._run", stop)
    path = tmp_path / "t.yaml"
    path.write_text("model: {name_or_path: tiny}\nopsd: {steps: 5}\n")
    for args in (
        [str(path), "opsd.steps=3"],
        ["-c", str(path), "opsd.steps=3"],
        ["opsd.steps=3", "--config", str(path)],
    ):
        result = runner.invoke(app, ["train", "opsd", *args], env=NO_ENV)
        assert result.exit_code == 0, result.output
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]
    assert seen[0].opsd.steps == 3 and seen[0].stages == ["opsd"]
    both = runner.invoke(app, ["train", "opsd", str(path), "-c", str(path)], env=NO_ENV)
    assert both.exit_code == 2 and "give the config once" in both.output
    none = runner.invoke(app, ["train", "opsd", "opsd.steps=3"], env=NO_ENV)
    assert none.exit_code == 2 and "no training config" in none.output


# --- help -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["build"],
        ["audit"],
        ["export"],
        ["llm-check"],
        ["score"],
        ["serve-reward"],
        ["check-reward"],
        ["train", "opsd"],
        ["train", "pipeline"],
    ],
    ids=" ".join,
)
def test_help_mentions_c_and_overrides(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "-c, --config" in result.output
    assert "key=value" in result.output


@pytest.mark.parametrize(
    ("command", "what"),
    [("build", "paper sources"), ("audit", "dataset"), ("compare", "EVAL_DIR")],
)
def test_only_overrides_and_no_path_is_one_line_exit_2(
    command: str, what: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = [command, "reward.alpha=0.5", *(["-o", str(out)] if command != "audit" else [])]
    result = runner.invoke(app, args, env=NO_ENV)
    assert result.exit_code == 2, result.output
    assert f"no {what} given (every argument was a key=value)" in result.output
    assert not out.exists()
