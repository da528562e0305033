"""The run folder: stages chain weights in the configured order, finished stages are skipped on
re-run, a folder from another config is refused, checkpoints are found and pruned."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from papergym.errors import BadInputError
from papergym.settings.train import StageName, TrainConfig
from papergym.train.run import (
    StageContext,
    StageRunner,
    config_changes,
    latest_checkpoint,
    prune_checkpoints,
    run_pipeline,
)


def config(tmp_path: Path, build_dir: Path, **extra: Any) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "model": {"name_or_path": "some/base-model"},
            "data": {"build_dir": str(build_dir)},
            **extra,
        }
    )


class Recorder:
    """Stage runners that record what they were given and write a final folder."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def runners(self) -> dict[StageName, StageRunner]:
        def make(stage: StageName) -> StageRunner:
            def run(ctx: StageContext) -> dict[str, Any]:
                self.calls.append((stage, ctx.init_model, len(ctx.rows["train"])))
                ctx.final_dir.mkdir(parents=True, exist_ok=True)
                return {"steps": 1}

            return run

        return {"opsd": make("opsd"), "grpo": make("grpo"), "sft": make("sft")}


def test_stages_run_in_order_each_from_the_previous_weights(
    tmp_path: Path, build_dir: Path
) -> None:
    recorder = Recorder()
    result = run_pipeline(config(tmp_path, build_dir, stages=["grpo", "opsd"]), recorder.runners())
    run = tmp_path / "run"
    assert recorder.calls == [
        ("grpo", "some/base-model", 2),
        ("opsd", str(run / "1-grpo" / "final"), 2),
    ]
    assert result["final_model"] == str(run / "2-opsd" / "final")
    assert json.loads((run / "summary.json").read_text())["final_model"] == result["final_model"]
    assert (run / "config.yaml").is_file()


def test_a_rerun_skips_finished_stages(tmp_path: Path, build_dir: Path) -> None:
    first = Recorder()
    run_pipeline(config(tmp_path, build_dir), first.runners())
    (tmp_path / "run" / "2-grpo" / "summary.json").unlink()  # as if interrupted in GRPO
    second = Recorder()
    run_pipeline(config(tmp_path, build_dir), second.runners())
    assert [c[0] for c in second.calls] == ["grpo"]


def test_a_folder_from_another_config_is_refused(tmp_path: Path, build_dir: Path) -> None:
    run_pipeline(config(tmp_path, build_dir), Recorder().runners())
    with pytest.raises(BadInputError) as error:
        run_pipeline(
            config(tmp_path, build_dir, opsd={"steps": 7}, lora={"r": 8}), Recorder().runners()
        )
    # each key that differs, with its old and new value
    assert "different configuration (lora.r: 64 → 8; opsd.steps: 200 → 7)" in str(error.value)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x.txt").write_text("mine")
    with pytest.raises(BadInputError, match="holds no PaperGym run"):
        run_pipeline(config(tmp_path, build_dir, output_dir=str(foreign)), Recorder().runners())


def test_keys_that_do_not_change_training_do_not_block_a_resume(
    tmp_path: Path, build_dir: Path
) -> None:
    first = Recorder()
    run_pipeline(config(tmp_path, build_dir), first.runners())
    (tmp_path / "run" / "2-grpo" / "summary.json").unlink()  # as if interrupted in GRPO
    # llm/serve/build/audit are often filled from PAPERGYM_* variables; the name is a label
    other = config(
        tmp_path,
        build_dir,
        name="renamed",
        llm={"default": {"base_url": "http://127.0.0.1:9/v1", "model": "judge"}},
        serve={"port": 9999},
        build={"recipe": "innov"},
        audit={"top": 3},
    )
    second = Recorder()
    run_pipeline(other, second.runners())
    assert [c[0] for c in second.calls] == ["grpo"]  # resumed, not refused
    # the reward does change training: refused, naming the key
    with pytest.raises(BadInputError, match=r"different configuration \(reward.alpha: 0.7 → 0.5\)"):
        run_pipeline(config(tmp_path, build_dir, reward={"alpha": 0.5}), Recorder().runners())


def test_a_run_recorded_before_the_watch_section_resumes_and_a_watch_judge_is_refused(
    tmp_path: Path, build_dir: Path
) -> None:
    import yaml

    run_pipeline(config(tmp_path, build_dir), Recorder().runners())
    record = tmp_path / "run" / "config.yaml"
    recorded = yaml.safe_load(record.read_text())
    del recorded["watch"]  # as an earlier release wrote it
    record.write_text(yaml.safe_dump(recorded, sort_keys=False))
    (tmp_path / "run" / "2-grpo" / "summary.json").unlink()
    second = Recorder()
    run_pipeline(config(tmp_path, build_dir), second.runners())
    assert [c[0] for c in second.calls] == ["grpo"]  # resumed: no watch then, none now
    with pytest.raises(BadInputError, match=r"watch.judge: none → offline"):
        run_pipeline(config(tmp_path, build_dir, watch={"judge": "offline"}), Recorder().runners())


@pytest.mark.parametrize(
    ("section", "key", "other"),
    [("opsd", "loss_reduction", "sequence"), ("grpo", "importance_sampling_level", "sequence")],
)
def test_a_run_recorded_before_a_loss_option_resumes_and_another_value_is_refused(
    tmp_path: Path, build_dir: Path, section: str, key: str, other: str
) -> None:
    import yaml

    run_pipeline(config(tmp_path, build_dir), Recorder().runners())
    record = tmp_path / "run" / "config.yaml"
    recorded = yaml.safe_load(record.read_text())
    assert recorded[section][key] == "token"  # recorded from now on
    del recorded[section][key]  # as an earlier release wrote it
    record.write_text(yaml.safe_dump(recorded, sort_keys=False))
    (tmp_path / "run" / "2-grpo" / "summary.json").unlink()
    second = Recorder()
    run_pipeline(config(tmp_path, build_dir), second.runners())
    assert [c[0] for c in second.calls] == ["grpo"]  # resumed: the token mean then and now
    with pytest.raises(BadInputError, match=rf"{section}.{key}: token → {other}"):
        run_pipeline(config(tmp_path, build_dir, **{section: {key: other}}), Recorder().runners())


def test_config_changes_name_every_differing_key() -> None:
    old = {"output_dir": "a", "opsd": {"steps": 4, "top_k": None}, "stages": ["opsd"]}
    new = {"output_dir": "b", "opsd": {"steps": 4, "beta": 0.1}, "stages": ["grpo", "opsd"]}
    assert config_changes(old, new) == [
        "opsd.beta: (unset) → 0.1",
        "opsd.top_k: (none) → (unset)",
        "stages: ['opsd'] → ['grpo', 'opsd']",
    ]
    assert config_changes(old, {**old, "output_dir": "elsewhere"}) == []


def test_many_changes_are_cut_with_a_count(tmp_path: Path, build_dir: Path) -> None:
    run_pipeline(config(tmp_path, build_dir), Recorder().runners())
    changed = {"steps": 7, "learning_rate": 1.0, "batch_size": 4, "micro_batch_size": 4}
    with pytest.raises(
        BadInputError, match=r"opsd.steps: 200 → 7; … 1 more\); use another output_dir"
    ):
        run_pipeline(
            config(tmp_path, build_dir, opsd=changed, lora={"r": 8}, seed=3), Recorder().runners()
        )


def test_missing_data_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match=r"no instances\.jsonl"):
        run_pipeline(config(tmp_path, tmp_path / "nowhere"), Recorder().runners())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"not": "an instance"}\n')
    with pytest.raises(BadInputError, match=r"bad\.jsonl"):
        run_pipeline(config(tmp_path, bad), Recorder().runners())
    assert not (tmp_path / "run").exists()  # nothing written for a run that cannot start


def test_latest_complete_checkpoint_and_pruning(tmp_path: Path) -> None:
    for step in (2, 10, 4):
        (tmp_path / f"checkpoint-{step}").mkdir()
        (tmp_path / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    (tmp_path / "checkpoint-12").mkdir()  # interrupted while saving: no state file
    assert latest_checkpoint(tmp_path) == tmp_path / "checkpoint-10"
    prune_checkpoints(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "checkpoint-10",
        "checkpoint-12",
        "checkpoint-4",
    ]
    assert latest_checkpoint(tmp_path / "none") is None
