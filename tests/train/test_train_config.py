"""Training configs: every shipped file validates, the paper's settings are what SPEC §4 says,
overrides and ``extends`` work, and bad input fails in one line naming the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.settings.train import TrainConfig, apply_overrides, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SHIPPED = sorted(CONFIGS.glob("*.yaml"))


def test_configs_are_shipped() -> None:
    names = {p.name for p in SHIPPED}
    assert {"qwen3-8b.yaml", "qwen3-1.7b.yaml", "tiny-cpu.yaml"} <= names


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_config_loads_and_validates(path: Path) -> None:
    config = load_config(path)
    assert isinstance(config, TrainConfig)
    assert config.stages
    # every stage block is complete and positive
    assert config.opsd.steps > 0 and config.grpo.steps > 0 and config.sft.steps > 0


def test_the_paper_settings() -> None:
    config = load_config(CONFIGS / "qwen3-8b.yaml")
    assert config.stages == ["opsd", "grpo"]
    assert (config.lora.r, config.lora.alpha) == (64, 128)
    assert config.opsd.beta == 0.5 and config.opsd.learning_rate == 5e-6
    assert config.opsd.batch_size == 8 and config.opsd.steps == 400
    assert config.opsd.teacher == "frozen" and config.opsd.teacher_context == "rubric"
    assert config.grpo.num_generations == 8 and config.grpo.beta == 0.01
    assert config.grpo.learning_rate == 1e-5
    small = load_config(CONFIGS / "qwen3-1.7b.yaml")
    assert small.model.name_or_path == "Qwen/Qwen3-1.7B" and small.opsd.steps == 200
    assert small.grpo == config.grpo  # inherited through `extends`


def test_tiny_cpu_needs_nothing_from_the_network() -> None:
    config = load_config(CONFIGS / "tiny-cpu.yaml")
    assert config.model.name_or_path == "tiny"
    assert config.reward.judge == "offline"


def test_overrides_reach_nested_keys_and_parse_yaml_values(tmp_path: Path) -> None:
    config = load_config(
        CONFIGS / "tiny-cpu.yaml",
        ["opsd.steps=3", "stages=[grpo, opsd]", "lora.enabled=false", "model.tiny.layers=1"],
        data=tmp_path,
    )
    assert config.opsd.steps == 3
    assert config.stages == ["grpo", "opsd"]
    assert config.lora.enabled is False
    assert config.model.tiny.layers == 1
    assert config.data.build_dir == tmp_path
    assert apply_overrides({"a": {"b": 1}}, ["a.c=x"]) == {"a": {"b": 1, "c": "x"}}


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        ("opsd: {steps: 0}\n", [], "opsd.steps"),
        ("opsd: {stepz: 3}\n", [], "opsd.stepz"),
        ("stages: [opsd, opsd]\n", [], "must not repeat"),
        ("stages: [ppo]\n", [], "stages"),
        ("opsd: {batch_size: 6, micro_batch_size: 4}\n", [], "multiple of micro_batch_size"),
        ("opsd: [1, 2\n", [], "not valid YAML"),
        ("- a\n- b\n", [], "YAML mapping"),
        ("{}\n", ["grpo.num_generations=1"], "grpo.num_generations"),
        ("{}\n", ["novalue"], "not key=value"),
    ],
)
def test_bad_configs_fail_in_one_line(
    tmp_path: Path, text: str, overrides: list[str], message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInputError, match=message) as error:
        load_config(path, overrides)
    assert "\n" not in str(error.value)


def test_missing_file_and_extends_cycle(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")
    (tmp_path / "a.yaml").write_text("extends: b.yaml\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("extends: a.yaml\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="cycle"):
        load_config(tmp_path / "a.yaml")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["opsd.stepz=3"],
            "override 'opsd.stepz=3': opsd.stepz: unknown key (did you mean opsd.steps?)",
        ),
        (
            ["opsd.steps=abc"],
            "override 'opsd.steps=abc': opsd.steps: Input should be a valid integer",
        ),
        (["opsdd.steps=3"], "override 'opsdd.steps=3': opsdd: unknown key (did you mean opsd?)"),
        (["model.tiny.layerz=1"], "did you mean model.tiny.layers?"),
        (["stages=[opsd, opsd]"], "override 'stages=[opsd, opsd]': stages: "),
        # the last override of a key is the one that counts, and the one named
        (["opsd.steps=abc", "opsd.steps=0"], "override 'opsd.steps=0': opsd.steps: "),
    ],
)
def test_a_bad_override_is_named_with_the_closest_key(overrides: list[str], message: str) -> None:
    """The file is fine: the error is the override's, and says what was probably meant."""
    with pytest.raises(BadInputError) as error:
        load_config(CONFIGS / "tiny-cpu.yaml", overrides)
    assert message in str(error.value)
    assert "tiny-cpu.yaml" not in str(error.value)


def test_file_errors_name_the_file_and_suggest_too(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("opsd: {stepz: 3}\n", encoding="utf-8")
    with pytest.raises(BadInputError) as error:
        load_config(path, ["opsd.steps=4"])  # an unrelated override is not blamed
    assert str(error.value) == f"{path}: opsd.stepz: unknown key (did you mean opsd.steps?)"
    path.write_text("opsd: {micro_batch_size: 4}\n", encoding="utf-8")
    with pytest.raises(
        BadInputError, match=r"multiple of .* \(with override 'opsd.batch_size=6'\)"
    ):
        load_config(path, ["opsd.batch_size=6"])
    with pytest.raises(BadInputError, match=r"opsd.zzz: unknown key \(valid keys in opsd: steps, "):
        load_config(None, ["opsd.zzz=1"])
