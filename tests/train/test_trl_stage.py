"""What the TRL stages share (papergym.train.trl_stage): resume point, trimmed metrics, summary.

No model is trained here: the checkpoint folders are written by hand, as a trainer leaves them.
"""

from __future__ import annotations

import json
from pathlib import Path

from papergym.settings.train import TrainConfig
from papergym.train.callbacks import TOKENS_PER_SECOND
from papergym.train.run import StageContext
from papergym.train.trl_stage import resume_point, stage_summary


def _context(tmp_path: Path) -> StageContext:
    config = TrainConfig.model_validate({"output_dir": str(tmp_path / "run"), "stages": ["sft"]})
    return StageContext(config, "sft", tmp_path / "run" / "1-sft", "unused-model", {"train": []})


def _checkpoint(ctx: StageContext, step: int) -> None:
    folder = ctx.checkpoints_dir / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    (folder / "trainer_state.json").write_text(json.dumps({"global_step": step}))


def test_resume_point_is_the_last_checkpoint_and_drops_metrics_logged_after_it(
    tmp_path: Path,
) -> None:
    ctx = _context(tmp_path)
    for step in range(1, 6):  # the crash came after step 5 was logged, before its save
        ctx.metrics.write(step, loss=1.0 / step, **{TOKENS_PER_SECOND: 10.0 * step})
    _checkpoint(ctx, 2)
    _checkpoint(ctx, 4)
    (ctx.checkpoints_dir / "checkpoint-9").mkdir()  # incomplete: no trainer_state.json

    resumed = resume_point(ctx)

    assert resumed == ctx.checkpoints_dir / "checkpoint-4"
    assert [r["step"] for r in ctx.metrics.read()] == [1, 2, 3, 4]
    summary = stage_summary(ctx, 6, resumed)
    assert summary == {
        "steps": 6,
        "mean_loss": (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4,
        "last_loss": 1 / 4,
        "tokens_per_second": 25.0,
        "resumed_from": "checkpoint-4",
    }


def test_a_fresh_start_drops_the_records_of_an_attempt_without_a_checkpoint(
    tmp_path: Path,
) -> None:
    ctx = _context(tmp_path)
    ctx.metrics.write(1, loss=0.5)
    assert resume_point(ctx) is None
    assert ctx.metrics.read() == []
    assert stage_summary(ctx, 0, None)["resumed_from"] is None
