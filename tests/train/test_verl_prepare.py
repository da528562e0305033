"""``papergym train verl-prepare``: the bundle's files, the launcher's overrides, the reward.

The reward check loads the function the way verl does — by file path and name from the
config — and scores a row read back from the bundle's parquet with the offline judge.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pyarrow.parquet as pq
import pytest
import yaml

from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric
from papergym.reward import runtime
from papergym.reward.verl import KEYS
from papergym.settings.train import TrainConfig, load_config
from papergym.train.verl_prepare import (
    MARKER_FILE,
    SAMPLE_FILE,
    SCRIPT_FILE,
    SPEC_FILE,
    TRAIN_FILE,
    estimate_prompt_length,
    hydra_quote,
    hydra_value,
    launch_overrides,
    prepare_verl,
    reward_module_path,
)

REPO = Path(__file__).resolve().parents[2]
TEMPLATE_README = REPO / "src" / "papergym" / "train" / "templates" / "verl" / "README.md"
SPEC_COLUMNS = {"data_source", "prompt", "ability", "reward_model", "extra_info"}
PAPERS = [f"p{i:02d}" for i in range(12)]


def _instance(paper: str) -> Instance:
    criteria = tuple(
        Criterion(
            id=f"{paper}-c{rank}",
            text=f"The plan for {paper} measures effect {rank} with a held-out benchmark.",
            dimension="method" if rank <= 3 else "experiment",
            origin="answer",
            rank=rank,
        )
        for rank in range(1, 6)
    )
    return Instance(
        id=Instance.make_id("papergym", "extractive", paper),
        recipe="papergym",
        builder="extractive",
        paper_id=paper,
        title=f"Paper {paper}",
        question=f"Current methods miss a gap for {paper}. Propose a research plan.",
        reference_answer=" ".join(  # the criteria's words and more: a copy counts for nothing
            f"The plan for {paper} measures effect {rank} with a held-out benchmark of clinical "
            "notes, reporting a bootstrap interval over five seeds."
            for rank in range(1, 6)
        ),
        rubric=Rubric(specific=criteria, general=GENERAL_CRITERIA),
    )


@pytest.fixture
def papers_build(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "build" / "instances.jsonl", [_instance(p) for p in PAPERS])
    return tmp_path / "build"


def _config(papers_build: Path, tmp_path: Path, *overrides: str) -> TrainConfig:
    return load_config(None, [f"output_dir={tmp_path / 'run'}", *overrides], data=papers_build)


def _spec(out: Path) -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load((out / "grpo.yaml").read_text(encoding="utf-8"))
    return spec


def _launch_env(**extra: str) -> dict[str, str]:
    return {"NNODES": "1", "GPUS_PER_NODE": "8", **extra}


def _as_dict(args: list[str]) -> dict[str, str]:
    return dict(arg.split("=", 1) for arg in args)


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The reward built from the environment, as in a verl worker: the offline judge."""
    monkeypatch.setenv("PAPERGYM_REWARD_JUDGE", "offline")
    for name in ("PAPERGYM_LLM_CONFIG", "PAPERGYM_BASE_URL", "PAPERGYM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    runtime.set_shared_reward(None)
    yield
    runtime.set_shared_reward(None)


def test_bundle_files_rows_and_settings(papers_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    paths = prepare_verl(_config(papers_build, tmp_path), out)
    assert [p.relative_to(out).as_posix() for p in paths] == [
        "data/train.parquet",
        "data/train_sample.parquet",
        "grpo.yaml",
        "config.yaml",
        "run_grpo.sh",
        "README.md",
    ]
    assert all(p.is_file() for p in paths) and (out / MARKER_FILE).is_file()
    train = pq.read_table(out / "data" / "train.parquet")
    assert train.num_rows == len(PAPERS) and set(train.column_names) == SPEC_COLUMNS
    row = train.to_pylist()[0]
    assert set(row["reward_model"]) == {"style", "ground_truth"}
    assert row["prompt"][-1]["role"] == "user"

    spec = _spec(out)
    values = spec["overrides"]
    assert values["algorithm.adv_estimator"] == "grpo"
    assert values["actor_rollout_ref.rollout.n"] == 8
    assert values["actor_rollout_ref.rollout.name"] == "vllm"
    assert values["actor_rollout_ref.actor.use_kl_loss"] is True
    assert values["actor_rollout_ref.actor.kl_loss_coef"] == 0.01
    assert values["actor_rollout_ref.actor.kl_loss_type"] == "low_var_kl"
    assert values["algorithm.use_kl_in_reward"] is False
    assert values["actor_rollout_ref.actor.optim.lr"] == 1e-5
    assert values["actor_rollout_ref.actor.loss_agg_mode"] == "token-mean"
    assert values["actor_rollout_ref.actor.clip_ratio_low"] == 0.2
    assert values["actor_rollout_ref.actor.clip_ratio_high"] == 0.2
    assert values["actor_rollout_ref.model.path"] == "Qwen/Qwen3-8B"
    assert values["actor_rollout_ref.model.lora_rank"] == 64
    assert values["actor_rollout_ref.model.lora_alpha"] == 128
    assert values["actor_rollout_ref.rollout.load_format"] == "safetensors"
    assert values["trainer.total_training_steps"] == 200
    assert values["trainer.total_epochs"] * len(PAPERS) >= 200  # one prompt per step
    assert values["trainer.save_freq"] == 50
    assert values["data.val_files"] == "data/train_sample.parquet"
    assert (values["trainer.test_freq"], values["trainer.val_before_train"]) == (-1, False)
    assert pq.read_table(out / "data" / "train_sample.parquet").num_rows == 8
    assert spec["papergym"]["rows"] == {"train": len(PAPERS), "val": 8}


def test_both_reward_key_styles_name_the_installed_reward(
    papers_build: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bundle"
    prepare_verl(_config(papers_build, tmp_path), out)
    keys = _spec(out)["reward_keys"]
    path = str(reward_module_path())
    assert Path(path).is_absolute() and path.endswith(os.path.join("papergym", "reward", "verl.py"))
    assert keys["current"] == {
        "reward.custom_reward_function.path": path,
        "reward.custom_reward_function.name": "compute_score",
        "reward.reward_manager.name": "naive",
    }
    assert keys["legacy"] == {
        "custom_reward_function.path": path,
        "custom_reward_function.name": "compute_score",
        "reward_model.reward_manager": "naive",
    }
    readme = (out / "README.md").read_text(encoding="utf-8")
    for key in [*keys["current"], *keys["legacy"]]:
        assert f"`{key}`" in readme


def test_reward_module_imports_from_its_path_and_scores_a_parquet_row(
    papers_build: Path, tmp_path: Path, offline_env: None
) -> None:
    out = tmp_path / "bundle"
    prepare_verl(_config(papers_build, tmp_path), out)
    current = _spec(out)["reward_keys"]["current"]
    spec = importlib.util.spec_from_file_location(
        "verl_custom_reward", current["reward.custom_reward_function.path"]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function = getattr(module, current["reward.custom_reward_function.name"])

    row = pq.read_table(out / "data" / "train.parquet").to_pylist()[0]
    truth, info = row["reward_model"]["ground_truth"], row["extra_info"]
    good = function(row["data_source"], info["reference_answer"], truth, info)
    bad = function(row["data_source"], "I would think about it.", truth, info)
    for result in (good, bad):
        assert set(result) == set(KEYS)
        assert isinstance(result["score"], float) and 0.0 <= result["score"] <= 1.0
    assert good["score"] > bad["score"] and good["unscored"] == 0.0


def test_test_split_becomes_the_validation_file(papers_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    paths = prepare_verl(_config(papers_build, tmp_path, "data.test_fraction=0.4"), out)
    assert out / "data" / "test.parquet" in paths
    assert not (out / "data" / "train_sample.parquet").exists()
    spec = _spec(out)
    values, rows = spec["overrides"], spec["papergym"]["rows"]
    assert values["data.val_files"] == "data/test.parquet"
    assert (values["trainer.test_freq"], values["trainer.val_before_train"]) == (50, True)
    test = pq.read_table(out / "data" / "test.parquet")
    assert test.num_rows == rows["val"] > 0 and rows["train"] + rows["val"] == len(PAPERS)
    assert {r["split"] for r in test.column("extra_info").to_pylist()} == {"test"}


def test_config_settings_reach_verl_keys(papers_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    config = _config(
        papers_build,
        tmp_path,
        "grpo.loss_type=grpo",
        "grpo.epsilon_high=0.28",
        "grpo.scale_rewards=none",
        "grpo.beta=0",
        "grpo.prompts_per_step=2",
        "grpo.gradient_accumulation_steps=2",
        "lora.enabled=false",
        "data.system_prompt=You plan research.",
    )
    prepare_verl(config, out)
    values = _spec(out)["overrides"]
    assert values["actor_rollout_ref.actor.loss_agg_mode"] == "seq-mean-token-mean"
    assert values["actor_rollout_ref.actor.clip_ratio_high"] == 0.28
    assert values["algorithm.norm_adv_by_std_in_grpo"] is False
    assert values["actor_rollout_ref.actor.use_kl_loss"] is False
    assert values["data.train_batch_size"] == values["actor_rollout_ref.actor.ppo_mini_batch_size"]
    assert values["data.train_batch_size"] == 4
    assert values["trainer.total_epochs"] == 67  # 12 rows // 4 = 3 steps an epoch
    assert values["actor_rollout_ref.model.lora_rank"] == 0
    assert "actor_rollout_ref.rollout.load_format" not in values
    prompt = pq.read_table(out / "data" / "train.parquet").column("prompt").to_pylist()[0]
    assert prompt[0] == {"role": "system", "content": "You plan research."}


def test_launcher_script_runs_dry_with_current_and_legacy_keys(
    papers_build: Path, tmp_path: Path
) -> None:
    out = tmp_path / "my bundle"  # a space: arguments must survive the shell intact
    prepare_verl(_config(papers_build, tmp_path), out)
    script = out / "run_grpo.sh"
    assert script.stat().st_mode & stat.S_IXUSR
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    assert "verl.trainer.main_ppo" in script.read_text(encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PAPERGYM_", "VERL_"))}
    env = {**base, "DRY_RUN": "1", "PYTHON": sys.executable, "NNODES": "2", "TRAIN_BATCH_SIZE": "2"}

    def dry_run(**extra: str) -> list[str]:
        result = subprocess.run(
            ["bash", str(script), "trainer.logger=[console,wandb]"],
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()

    current = dry_run()
    assert current[:3] == [sys.executable, "-m", "verl.trainer.main_ppo"]
    assert current[-1] == "trainer.logger=[console,wandb]"
    args = _as_dict(current[3:])
    assert args["trainer.nnodes"] == "2" and args["trainer.n_gpus_per_node"] == "8"
    assert args["data.train_files"] == hydra_quote(str(out / "data" / "train.parquet"))
    assert args["reward.custom_reward_function.name"] == "'compute_score'"
    assert "custom_reward_function.path" not in args
    # reward.judge's default is auto (llm when the config names an LLM, else offline)
    assert args["++ray_kwargs.ray_init.runtime_env.env_vars.PAPERGYM_REWARD_JUDGE"] == "'auto'"
    # every worker reads the bundle's resolved configuration
    assert args["++ray_kwargs.ray_init.runtime_env.env_vars.PAPERGYM_CONFIG"] == hydra_quote(
        str((out / "config.yaml").resolve())
    )

    legacy = _as_dict(dry_run(VERL_REWARD_KEYS="legacy", PAPERGYM_REWARD_JUDGE="llm")[3:])
    assert legacy["custom_reward_function.path"] == hydra_quote(str(reward_module_path()))
    assert legacy["reward_model.reward_manager"] == "'naive'"
    assert not any(key.startswith("reward.") for key in legacy)
    assert legacy["++ray_kwargs.ray_init.runtime_env.env_vars.PAPERGYM_REWARD_JUDGE"] == "'llm'"


def test_launch_refuses_what_verl_would_reject(papers_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    prepare_verl(_config(papers_build, tmp_path), out)
    with pytest.raises(BadInputError, match="VERL_REWARD_KEYS"):
        launch_overrides(out, _launch_env(VERL_REWARD_KEYS="newest"))
    with pytest.raises(BadInputError, match="TRAIN_BATCH_SIZE"):
        launch_overrides(out, _launch_env(NNODES="2"))  # 1 prompt x 8 answers on 16 GPUs
    with pytest.raises(BadInputError, match="GPUS_PER_NODE"):
        launch_overrides(out, _launch_env(GPUS_PER_NODE="0"))
    args = _as_dict(launch_overrides(out, _launch_env(NNODES="2", TRAIN_BATCH_SIZE="4")))
    assert (
        args["data.train_batch_size"] == "4" == args["actor_rollout_ref.actor.ppo_mini_batch_size"]
    )
    assert args["trainer.total_epochs"] == "67"


def test_out_dir_rules_and_no_partial_bundle(papers_build: Path, tmp_path: Path) -> None:
    config = _config(papers_build, tmp_path)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(BadInputError, match="not written by verl-prepare"):
        prepare_verl(config, foreign)
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "mine"

    out = tmp_path / "bundle"
    prepare_verl(config, out)
    (out / "stale.txt").write_text("old", encoding="utf-8")
    prepare_verl(config, out)  # a bundle is replaced whole
    assert not (out / "stale.txt").exists() and (out / "grpo.yaml").is_file()

    empty = tmp_path / "empty"
    empty.mkdir()
    prepare_verl(config, empty)
    assert (empty / MARKER_FILE).is_file()


def test_bad_input_is_refused_before_writing(papers_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    with pytest.raises(BadInputError, match="no training data"):
        prepare_verl(load_config(None), out)
    (tmp_path / "none").mkdir()
    with pytest.raises(BadInputError, match=r"no instances\.jsonl"):
        prepare_verl(load_config(None, data=tmp_path / "none"), out)
    with pytest.raises(BadInputError, match="scale_rewards"):
        prepare_verl(_config(papers_build, tmp_path, "grpo.scale_rewards=batch"), out)
    with pytest.raises(BadInputError, match="fewer than one step"):
        prepare_verl(_config(papers_build, tmp_path, "grpo.prompts_per_step=64"), out)
    assert not out.exists()
    not_dir = tmp_path / "file"
    not_dir.write_text("x", encoding="utf-8")
    with pytest.raises(BadInputError, match="not a folder"):
        prepare_verl(_config(papers_build, tmp_path), not_dir)


def test_hydra_values_and_prompt_estimate() -> None:
    assert hydra_value(True) == "true" and hydra_value(None) == "null"
    assert hydra_value(1e-5) == "1e-05" and hydra_value(8) == "8"
    assert hydra_value(["q_proj", "v_proj"]) == "['q_proj','v_proj']"
    assert hydra_quote("/a b/c") == "'/a b/c'"
    assert hydra_quote("it's") == r"'it\'s'"
    assert hydra_quote("end\\") == "'end\\\\'"
    assert estimate_prompt_length(["x" * 10], None) == 512
    assert estimate_prompt_length(["x" * 2000], "s" * 100) == 1280  # 1050 + 64 -> 5 x 256


def test_docs_page_is_the_bundled_readme() -> None:
    """docs/verl.md is a copy of the template the bundle's README comes from."""
    assert (REPO / "docs" / "verl.md").read_text(encoding="utf-8") == TEMPLATE_README.read_text(
        encoding="utf-8"
    )


def _verl_missing(reason: str) -> NoReturn:
    """Skip, except where CI installed verl on purpose (``PAPERGYM_REQUIRE_VERL=1``): there a
    missing verl or Hydra is a failure, so that this check cannot silently stop running."""
    if os.environ.get("PAPERGYM_REQUIRE_VERL") == "1":
        pytest.fail(f"PAPERGYM_REQUIRE_VERL=1 but {reason}")
    pytest.skip(reason)


def test_overrides_compose_with_an_installed_verl(papers_build: Path, tmp_path: Path) -> None:
    """Where verl and Hydra are installed (``pip install -e '.[verl]'``; CI does): every
    override names a key verl's own config has. verl's wheel carries its config files; only
    Hydra is needed to compose them, not verl's heavy dependencies."""
    if importlib.util.find_spec("hydra") is None:
        _verl_missing("hydra-core is not installed")
    import hydra

    verl = importlib.util.find_spec("verl")
    if verl is None or not verl.submodule_search_locations:
        _verl_missing("verl is not installed")
    config_dir = Path(next(iter(verl.submodule_search_locations))) / "trainer" / "config"
    style = "current" if (config_dir / "reward").is_dir() else "legacy"
    out = tmp_path / "bundle"
    prepare_verl(_config(papers_build, tmp_path), out)
    overrides = launch_overrides(out, _launch_env(VERL_REWARD_KEYS=style))
    with hydra.initialize_config_dir(config_dir=str(config_dir), version_base=None):
        composed = hydra.compose("ppo_trainer", overrides=overrides)
    assert composed.actor_rollout_ref.rollout.n == 8


def test_the_tiny_model_travels_inside_the_bundle(papers_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    prepare_verl(_config(papers_build, tmp_path, "model.name_or_path=tiny"), out)
    spec = yaml.safe_load((out / "grpo.yaml").read_text(encoding="utf-8"))
    model_path = Path(spec["overrides"]["actor_rollout_ref.model.path"])
    assert model_path == out.resolve() / "tiny-model"
    assert (model_path / "config.json").is_file() and (model_path / "tokenizer.json").is_file()


def test_the_command_prints_its_files_and_no_library_progress_bar(
    papers_build: Path, tmp_path: Path
) -> None:
    """Saving the tiny model drew transformers' "Writing model shards" bar into the output."""
    from transformers.utils import logging as hf_logging
    from typer.testing import CliRunner

    from papergym.cli import app

    hf_logging.enable_progress_bar()  # as in a fresh process (another test may have hidden bars)
    out = tmp_path / "bundle"
    args = ["train", "verl-prepare", str(out), "--data", str(papers_build)]
    result = CliRunner().invoke(app, [*args, "model.name_or_path=tiny"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    names = (TRAIN_FILE, SAMPLE_FILE, SPEC_FILE, "config.yaml", SCRIPT_FILE, "README.md")
    assert result.stdout.splitlines()[:6] == [str(out / name) for name in names]
    assert " ".join(result.stdout.splitlines()[6:]).startswith("verl bundle written to")
