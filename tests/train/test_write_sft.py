"""``papergym train write-sft``: the writer's SFT on write prepare's sft.jsonl through the command
line, a rerun that skips the finished stage, and ``train cycle --init-from`` starting round 1 from
its weights; bad input is one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cycle_samples import WordCountReviewer, write_data
from typer.testing import CliRunner

from papergym.cli import app
from papergym.review.reward import ReviewReward
from papergym.settings.train import load_config
from papergym.train.cycle.run import run_cycle
from papergym.train.write_sft import write_sft_rows

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
TINY = str(CONFIGS / "cycle-tiny-cpu.yaml")
runner = CliRunner()


def one_error_line(output: str) -> str:
    lines = output.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_rows_are_the_cycle_prompt_and_the_paper_and_skip_test_papers(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", count=2, test=1)
    config = load_config(CONFIGS / "cycle-tiny-cpu.yaml", [f"cycle.data={data}"])
    rows = write_sft_rows(config)
    assert len(rows) == 2  # the test paper is not trained on
    first = rows[0]
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert first["prompt"][1]["content"].startswith("Write a paper about")
    assert "\\cite{key0a}" in first["reference"]


@pytest.mark.slow
def test_write_sft_through_the_cli_then_the_cycle_starts_from_it(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", count=4)
    out = tmp_path / "sft"
    args = ["train", "write-sft", TINY, "--data", str(data), "-o", str(out), "--json"]
    first = runner.invoke(app, [*args, "sft.steps=2"])
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)
    final = out.resolve() / "write-sft" / "final"
    assert result["final_model"] == str(final) and (final / "config.json").is_file()
    assert result["stage"]["steps"] == 2 and result["stage"]["examples"] == 4
    metrics = (out / "write-sft" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in metrics] == [1, 2]
    again = runner.invoke(app, [*args, "sft.steps=2"])  # finished: skipped, nothing retrained
    assert again.exit_code == 0 and json.loads(again.stdout)["stage"]["skipped"] is True

    config = load_config(
        CONFIGS / "cycle-tiny-cpu.yaml",
        [
            f"cycle.data={data}",
            f"cycle.init_from={out.resolve()}",
            f"output_dir={tmp_path / 'cycle'}",
            "cycle.rounds=1",
            "cycle.input_fraction=0.5",
            "cycle.max_new_tokens=16",
            "cycle.steps=1",
        ],
    )
    summary = run_cycle(config, ReviewReward(WordCountReviewer()), None)
    assert summary["rounds"][0]["init_model"] == str(final)  # round 1 starts from the SFT
    assert not (tmp_path / "cycle" / "tiny-model").exists()  # the base model is not built
    recorded = (tmp_path / "cycle" / "config.yaml").read_text()
    assert f"init_from: {out.resolve()}" in recorded  # part of the run's identity


def test_cycle_with_an_init_from_that_is_no_model_is_one_line_exit_2(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", count=2)
    empty = tmp_path / "nothing"
    empty.mkdir()
    run = tmp_path / "run"
    args = ["train", "cycle", TINY, "--data", str(data), "-o", str(run), "--init-from"]
    result = runner.invoke(app, [*args, str(empty)])
    assert result.exit_code == 2, result.output
    assert "neither a `papergym train write-sft` run folder" in one_error_line(result.output)
    unfinished = tmp_path / "unfinished"
    (unfinished / "write-sft").mkdir(parents=True)
    result = runner.invoke(app, [*args, str(unfinished)])
    assert result.exit_code == 2 and "has not finished" in one_error_line(result.output)
    assert not run.exists()


def test_write_sft_refuses_other_data_and_another_commands_folder(tmp_path: Path) -> None:
    build = tmp_path / "build"
    build.mkdir()
    (build / "instances.jsonl").write_text("{}\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["train", "write-sft", TINY, "--data", str(build), "-o", str(out)])
    assert result.exit_code == 2 and str(build) in one_error_line(result.output)
    assert not out.exists()
    data = write_data(tmp_path / "data", count=2)
    cycle_run = tmp_path / "cycle-run"
    (cycle_run / "round-1").mkdir(parents=True)
    result = runner.invoke(
        app, ["train", "write-sft", TINY, "--data", str(data), "-o", str(cycle_run)]
    )
    assert result.exit_code == 2
    assert "not a `papergym train write-sft` run folder" in one_error_line(result.output)
    assert sorted(p.name for p in cycle_run.iterdir()) == ["round-1"]


def test_write_sft_help_explains_every_option() -> None:
    result = runner.invoke(app, ["train", "write-sft", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--data", "-o", "--json", "--log-every", "--debug", "key=value", "init-from"):
        assert option in result.output
    cycle = runner.invoke(app, ["train", "cycle", "--help"], env={"COLUMNS": "200"})
    assert "--init-from" in cycle.output and "write-sft" in cycle.output


def test_shipped_configs_have_a_writer_sft_section() -> None:
    tiny = load_config(CONFIGS / "cycle-tiny-cpu.yaml")
    paper = load_config(CONFIGS / "cycle-12b.yaml")
    assert tiny.sft.steps <= 10 and tiny.sft.max_length <= 2048  # CPU-sized
    assert paper.sft.max_length == paper.cycle.max_length  # the cycle's papers fit
    assert tiny.cycle.init_from is None and paper.cycle.init_from is None
