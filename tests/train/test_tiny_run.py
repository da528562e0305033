"""The README's tiny run, end to end: ``papergym build examples/papers`` (offline) then
``papergym train pipeline configs/tiny-cpu.yaml``. Its GRPO stage must get a learning signal:
groups whose answers scored differently, not the 100% of tied groups (loss 0, reward 0) that a
freshly built tiny model gives. A few minutes on 2 CPU cores, so kept out of the default run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.reward import runtime

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_readme_tiny_run_gives_grpo_a_learning_signal(tmp_path: Path) -> None:
    out = tmp_path / "out"
    build = CliRunner().invoke(app, ["build", str(ROOT / "examples" / "papers"), "-o", str(out)])
    assert build.exit_code == 0, build.output
    args = ["train", "pipeline", str(ROOT / "configs" / "tiny-cpu.yaml"), "--data", str(out)]
    try:
        result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "run"), "--json"])
    finally:
        runtime.set_shared_reward(None)

    assert result.exit_code == 0, result.output
    # one paper: nothing held out, and the run says so before it trains
    assert result.stderr.startswith("eval: no held-out split")
    stages = {s["stage"]: s for s in json.loads(result.stdout)["stages"]}
    grpo = stages["grpo"]
    assert grpo["tied_share"] < 0.5 and grpo["tied_steps"] < grpo["steps"]
    assert grpo["mean_reward"] > 0 and grpo["constant_reward"] is None
