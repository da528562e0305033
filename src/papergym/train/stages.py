"""The trainer of each stage, by name: what :func:`papergym.train.run.run_pipeline` runs."""

from __future__ import annotations

from typing import Any

from papergym.train.config import StageName
from papergym.train.progress import ProgressReport
from papergym.train.run import StageContext, StageRunner, StepHook


def stage_runners(report: ProgressReport | None = None) -> dict[StageName, StageRunner]:
    """Each stage's trainer, imported on use (TRL is slow to import and OPSD needs none of it);
    with ``report``, each shows its steps (loss, reward, ETA) through it."""

    def hook(stage: StageName, total: int) -> StepHook | None:
        return report.phase(stage, total) if report is not None else None

    def opsd(ctx: StageContext) -> dict[str, Any]:
        from papergym.train.opsd import run_opsd

        return run_opsd(ctx, on_step=hook("opsd", ctx.config.opsd.steps))

    def grpo(ctx: StageContext) -> dict[str, Any]:
        from papergym.train.grpo import run_grpo

        return run_grpo(ctx, on_step=hook("grpo", ctx.config.grpo.steps))

    def sft(ctx: StageContext) -> dict[str, Any]:
        from papergym.train.sft import run_sft

        return run_sft(ctx, on_step=hook("sft", ctx.config.sft.steps))

    return {"opsd": opsd, "grpo": grpo, "sft": sft}
