"""The one configuration: precedence, override errors, env read in one place, shipped configs,
flags as shorthands for keys, config.yaml in output folders, judge modes, the verl adapter."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible_judge import first_span
from papergym.records import Criterion, GeneralCriterion, Instance, Rubric
from papergym.reward import runtime, verl
from papergym.reward.judge import RubricJudge
from papergym.settings import PaperGymConfig, load_config
from papergym.settings.load import is_override
from papergym.settings.reference import descriptions_missing, reference_markdown

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_precedence_override_over_file_over_env_over_default(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("reward: {alpha: 0.4}\n")
    env = {"PAPERGYM_REWARD_ALPHA": "0.3", "PAPERGYM_REWARD_CACHE_SIZE": "7"}
    assert load_config(None, env={}).reward.alpha == 0.7  # default
    assert load_config(None, env=env).reward.alpha == 0.3  # env over default
    assert load_config(path, env=env).reward.alpha == 0.4  # file over env
    assert load_config(path, ["reward.alpha=0.5"], env=env).reward.alpha == 0.5  # override
    assert load_config(path, env=env).reward.cache_size == 7  # env fills what the file lacks


def test_llm_file_and_env_layers(tmp_path: Path) -> None:
    llm = tmp_path / "llm.yaml"
    llm.write_text("default: {model: from-file, base_url: http://file/v1}\n")
    config = tmp_path / "c.yaml"
    config.write_text("llm: llm.yaml\n")  # a path, relative to the config file
    env = {"PAPERGYM_BASE_URL": "http://env/v1", "PAPERGYM_MODEL": "from-env"}
    assert load_config(config, env=env).llm.for_role("judge").model == "from-file"
    assert load_config(None, env=env).llm.for_role("judge").model == "from-env"
    assert load_config(None, env={"PAPERGYM_LLM_CONFIG": str(llm)}).llm.configured
    flagged = load_config(config, ["llm.default.model=over"], env=env)
    assert flagged.llm.for_role("judge").model == "over"


def test_override_typo_names_the_override_and_the_closest_key(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("reward: {alpha: 0.4}\n")
    with pytest.raises(BadInputError) as error:
        load_config(path, ["reward.alpah=0.5"], env={})
    assert str(error.value) == (
        "override 'reward.alpah=0.5': reward.alpah: unknown key (did you mean reward.alpha?)"
    )
    with pytest.raises(BadInputError, match=r"^\$PAPERGYM_REWARD_ALPHA: reward.alpha"):
        load_config(None, env={"PAPERGYM_REWARD_ALPHA": "abc"})
    with pytest.raises(BadInputError, match=r"llm.default.modle: unknown key \(did you mean"):
        load_config(None, ["llm.default.modle=x"], env={})


def test_environment_is_read_only_in_one_module() -> None:
    allowed = ROOT / "src" / "papergym" / "environment.py"
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "src" / "papergym").rglob("*.py"))
        if path != allowed
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"os\.environ|getenv|putenv", line)
    ]
    assert offenders == []


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads(path: Path) -> None:
    config = load_config(path, env={})
    assert isinstance(config, PaperGymConfig)


def test_reference_is_complete_and_committed() -> None:
    assert descriptions_missing() == []
    committed = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert committed == reference_markdown(), "run: papergym config reference > docs/config.md"
    result = runner.invoke(app, ["config", "reference"], env={"COLUMNS": "300"})
    assert result.exit_code == 0 and "| `reward.criteria_per_call` |" in result.output


def test_override_rule_for_positional_arguments(tmp_path: Path) -> None:
    assert is_override("reward.alpha=0.5") and is_override("stages=[grpo]")
    assert not is_override("papers/") and not is_override("../a.tex=x")
    (tmp_path / "x=1").mkdir()
    assert not is_override(str(tmp_path / "x=1"))  # an existing path is a path


def _show(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["config", "show", *args], env={"PAPERGYM_BASE_URL": ""})
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = yaml.safe_load(result.output)
    return data


def test_config_show_applies_file_and_overrides_and_masks_secrets(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("llm: {default: {model: m, base_url: 'http://user:sekrit@h/v1'}}\n")
    shown = _show("-c", str(path), "reward.criteria_per_call=3")
    assert shown["reward"]["criteria_per_call"] == 3
    assert shown["llm"]["default"]["base_url"] == ["http://***@h/v1"]


# --- flags are shorthands for keys ---------------------------------------------------------------


def _instance(specific: int = 5, general: int = 3) -> Instance:
    return Instance(
        id="i1",
        recipe="papergym",
        builder="llm",
        paper_id="p",
        title="t",
        question="How would you study X?",
        reference_answer="We would measure X with Y.",
        rubric=Rubric(
            specific=[
                Criterion(
                    id=f"s{n}",
                    text=f"Specific criterion {n}.",
                    dimension="method",
                    origin="extractive",
                    rank=n,
                )
                for n in range(1, specific + 1)
            ],
            general=[
                GeneralCriterion(id=f"g{n}", text=f"General criterion {n}.")
                for n in range(1, general + 1)
            ],
        ),
    )


def _score_files(tmp_path: Path) -> tuple[Path, Path]:
    instances, answers = tmp_path / "instances.jsonl", tmp_path / "answers.jsonl"
    instances.write_text(_instance().model_dump_json() + "\n")
    answers.write_text(json.dumps({"instance_id": "i1", "answer": "We would measure X."}) + "\n")
    return instances, answers


def test_score_flag_and_key_give_the_same_config_saved_beside_the_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instances, answers = _score_files(tmp_path)
    saved: list[dict[str, Any]] = []

    class NoJudge(Exception):
        pass

    def stop(config: PaperGymConfig, judge: object = None) -> Any:
        saved.append(config.resolved())
        raise NoJudge  # the resolved config is all this test needs

    monkeypatch.setattr("papergym.cli.score.make_reward", stop)
    base = ["score", str(instances), str(answers), "-o", str(tmp_path / "s.jsonl")]
    for extra in (
        ["--judge", "offline", "--alpha", "0.25", "--max-answer-chars", "9"],
        ["reward.judge=offline", "reward.alpha=0.25", "reward.max_answer_chars=9"],
    ):
        runner.invoke(app, [*base, *extra], env={"PAPERGYM_REWARD_ALPHA": ""})
    assert len(saved) == 2 and saved[0] == saved[1]
    assert saved[0]["reward"]["alpha"] == 0.25


def test_serve_reward_flags_are_serve_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[PaperGymConfig] = []

    def stop(config: PaperGymConfig, judge: object = None) -> Any:
        seen.append(config)
        raise KeyboardInterrupt

    monkeypatch.setattr("papergym.cli.serve_reward.make_reward", stop)
    runner.invoke(app, ["serve-reward", "--port", "0", "--host", "0.0.0.0", "--docs"])
    runner.invoke(app, ["serve-reward", "serve.port=0", "serve.host=0.0.0.0", "serve.docs=true"])
    assert len(seen) == 2 and seen[0] == seen[1] and seen[0].serve.port == 0


@pytest.mark.slow
def test_score_writes_its_config_beside_the_scores(tmp_path: Path) -> None:
    instances, answers = _score_files(tmp_path)
    out = tmp_path / "s.jsonl"
    result = runner.invoke(
        app, ["score", str(instances), str(answers), "-o", str(out), "--judge", "offline"]
    )
    assert result.exit_code == 0, result.output
    saved = yaml.safe_load((tmp_path / "s.config.yaml").read_text())
    assert saved["reward"]["judge"] == "offline"


# --- the LLM judge's criteria per call, set from the config ------------------------------------


def _verdicts(request: dict[str, Any]) -> dict[str, Any]:
    prompt = str(request["messages"][0]["content"])
    listed = prompt.split("Criteria (", 1)[1].split("Plan to grade:", 1)[0]
    ids = re.findall(r"^(\d+)\. ", listed, re.MULTILINE)
    return {
        "verdicts": [
            {"criterion_id": int(n), "reason": "r", "quote": first_span(request), "verdict": 1}
            for n in ids
        ]
    }


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.responder = _verdicts
        yield running


@pytest.mark.parametrize(("per_call", "calls"), [("all", 2), (1, 8), (2, 5)])
def test_criteria_per_call_is_settable_and_effective(
    fake_llm: FakeOpenAIServer, per_call: object, calls: int
) -> None:
    config = load_config(
        None,
        [
            "reward.judge=llm",
            f"reward.criteria_per_call={per_call}",
            f"llm.default.base_url={fake_llm.base_url}",
            "llm.default.model=judge",
            "llm.cache=false",
        ],
        env={},
    )
    reward = runtime.make_reward(config)
    assert isinstance(reward.judge, RubricJudge)
    score = reward.score(_instance(), "We would measure X.")
    assert score.value == 1.0
    assert fake_llm.request_count == calls  # 5 specific + 3 general criteria


# --- the verl adapter reads $PAPERGYM_CONFIG ---------------------------------------------------


@pytest.fixture
def fresh_runtime() -> Iterator[None]:
    runtime.set_shared_reward(None)
    yield
    runtime.set_shared_reward(None)


def test_verl_adapter_reads_the_config_named_by_papergym_config(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_llm: FakeOpenAIServer,
    fresh_runtime: None,
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "reward: {judge: llm, criteria_per_call: 1, alpha: 0.5, unscored: -1.0}\n"
        f"llm: {{default: {{model: judge, base_url: '{fake_llm.base_url}'}}, cache: false}}\n"
    )
    for name in ("PAPERGYM_REWARD_JUDGE", "PAPERGYM_BASE_URL", "PAPERGYM_LLM_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PAPERGYM_CONFIG", str(path))
    instance = _instance()
    truth = json.dumps(
        {
            "question": instance.question,
            "reference_answer": instance.reference_answer,
            "rubric": instance.rubric.model_dump(mode="json"),
        }
    )
    result = verl.compute_score("papergym", "We would measure X.", truth)
    assert result["score"] == 1.0 and fake_llm.request_count == 8  # one criterion per call
    assert runtime.shared_reward().alpha == 0.5 and runtime.unscored_fallback() == -1.0
