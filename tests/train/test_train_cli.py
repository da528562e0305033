"""``papergym train``: help for every option, one-line errors with exit 2, and a real OPSD run
on the tiny model through the command line, resumed by running the same command again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
TINY = [
    "opsd.steps=2",
    "opsd.batch_size=2",
    "opsd.micro_batch_size=2",
    "opsd.max_new_tokens=8",
    "opsd.save_every=1",
]


@pytest.mark.parametrize("command", ["opsd", "grpo", "sft", "pipeline", "verl-prepare"])
def test_every_train_command_explains_its_options(command: str) -> None:
    result = CliRunner().invoke(app, ["train", command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--data", "--json", "--debug"):
        assert option in result.output
    assert "key=value" in result.output


def test_opsd_from_the_command_line_then_resume(tmp_path: Path, build_dir: Path) -> None:
    run = tmp_path / "run"
    args = ["train", "opsd", str(CONFIGS / "tiny-cpu.yaml"), "--data", str(build_dir)]
    args += ["-o", str(run), "--json", *TINY]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["final_model"] == str(run / "1-opsd" / "final")
    assert summary["stages"][0]["steps"] == 2
    # off a terminal, progress is a plain line per step on stderr (the JSON stays clean)
    steps = [line for line in result.stderr.splitlines() if line.startswith("opsd: step")]
    assert [line.split(" · ")[:2][0] for line in steps] == ["opsd: step 1/2", "opsd: step 2/2"]
    assert all(" · loss " in line and " elapsed" in line for line in steps)
    assert "ETA" in steps[0]
    records = [json.loads(x) for x in (run / "1-opsd" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]

    again = CliRunner().invoke(app, args)  # finished: skipped, same answer, no new metrics
    assert again.exit_code == 0
    assert json.loads(again.stdout)["final_model"] == summary["final_model"]
    assert len((run / "1-opsd" / "metrics.jsonl").read_text().splitlines()) == 2


def test_an_interrupted_stage_resumes_from_its_last_checkpoint(
    tmp_path: Path, build_dir: Path
) -> None:
    run = tmp_path / "run"
    args = ["train", "opsd", str(CONFIGS / "tiny-cpu.yaml"), "--data", str(build_dir)]
    args += ["-o", str(run), "--json", *TINY]
    assert CliRunner().invoke(app, args).exit_code == 0
    # simulate a kill after checkpoint-1: no summary, no final, no checkpoint-2
    import shutil

    (run / "1-opsd" / "summary.json").unlink()
    shutil.rmtree(run / "1-opsd" / "final")
    shutil.rmtree(run / "1-opsd" / "checkpoints" / "checkpoint-2")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stages"][0]["resumed_from"] == "checkpoint-1"
    assert (run / "1-opsd" / "final" / "model.safetensors").is_file()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["opsd.steps=0"], "opsd.steps"),
        (["nonsense"], "not key=value"),
        (
            ["opsd.stepz=3"],
            "error: override 'opsd.stepz=3': opsd.stepz: unknown key (did you mean opsd.steps?)",
        ),
        (["--data", "/nonexistent/build"], "no instances.jsonl"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, extra: list[str], message: str) -> None:
    args = ["train", "opsd", str(CONFIGS / "tiny-cpu.yaml"), "-o", str(tmp_path / "r"), *extra]
    if "--data" not in extra:
        args += ["--data", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_a_grpo_run_whose_groups_all_tie_warns_that_it_learned_nothing(
    tmp_path: Path, build_dir: Path
) -> None:
    args = ["train", "grpo", str(CONFIGS / "tiny-cpu.yaml"), "--data", str(build_dir)]
    args += ["-o", str(tmp_path / "run"), "--log-every", "1", "grpo.steps=2"]
    args += ["grpo.num_generations=2", "grpo.max_completion_length=8", "grpo.save_every=2"]
    args += ["model.tiny.answer_tokens=4", "eval.steps=0", "eval.final=false"]

    result = CliRunner().invoke(app, args, env={"COLUMNS": "300"})

    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert any(line.startswith("grpo: step 1/2 · ") for line in lines)
    assert any("tied groups 100%" in line for line in lines)
    per_step = [line for line in lines if line.startswith("grpo: warning: step")]
    assert [line.split(": ")[2] for line in per_step] == ["step 1", "step 2"]
    (final,) = [line for line in lines if line.startswith("grpo: warning: 100% of the groups")]
    assert "(in 2 of 2 steps all of them)" in final and "grpo learned nothing" in final
    assert "every answer scored 0 (no rubric criterion met)" in final
    assert "tied groups" in result.stdout and "100%" in result.stdout
