"""Stage 2 of SPEC §4: GRPO with the rubric reward, on TRL's ``GRPOTrainer``.

Each step samples ``num_generations`` answers per question, scores them with
:func:`papergym.reward.trl.rubric_reward` (``α·specific + (1−α)·general`` from the configured
judge), normalises rewards within each question's group, and takes a clipped policy-gradient
step with a KL penalty (``beta``) to the starting policy. With LoRA the reference policy is the
same model with the adapter disabled, so no second copy is held.

Batch sizes, as TRL 1.16 counts them: ``per_device_train_batch_size`` counts *completions*
(TRL's sampler repeats each prompt ``num_generations`` times), so it is
``prompts_per_step × num_generations``. One generation batch spans the
``gradient_accumulation_steps`` micro-batches of an optimiser step (TRL's default
``steps_per_generation``), so each optimiser step samples and judges
``prompts_per_step × gradient_accumulation_steps`` questions once, then updates once.

An answer the judge could not score gets ``None``; TRL turns it into NaN, leaves it out of the
group mean and standard deviation and gives it a zero advantage, so it neither helps nor hurts
(SPEC §3: unscored is never a silent 0). The per-step ``unscored`` metric counts them.

Each group's per-criterion verdicts go to the stage's ``rollouts.jsonl``
(:mod:`papergym.train.rollouts`), which ``papergym audit --usefulness`` reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from datasets import Dataset
from transformers import TrainerCallback
from trl.trainer.grpo_config import GRPOConfig
from trl.trainer.grpo_trainer import GRPOTrainer

from papergym.adapters import loop
from papergym.adapters.trl import score_completions
from papergym.reward import runtime
from papergym.reward.factory import make_reward
from papergym.reward.reward import RubricReward
from papergym.reward.runtime import set_shared_reward
from papergym.train.callbacks import MetricsCallback
from papergym.train.config import TrainConfig
from papergym.train.grpo_signal import TIED_KEY, signal_summary, tied_share
from papergym.train.rollouts import ROLLOUTS_FILE, RolloutLog
from papergym.train.run import StageContext, StepHook
from papergym.train.trl_stage import (
    eval_callbacks,
    last_of,
    mean_of,
    resume_point,
    stage_summary,
    train_and_save,
    trainer_args,
    trainer_inputs,
    without_console_logs,
)

GRPO_METRICS = {
    "rubric/specific_mean": "reward_specific",
    "rubric/general_mean": "reward_general",
    "rubric/unscored": "unscored",
    "rubric/unbacked_rate": "unbacked_rate",
    f"rubric/{TIED_KEY}": TIED_KEY,
    "completions/mean_length": "completion_length",
    "step_time": "step_seconds",
}
"""TRL's names → ours in ``metrics.jsonl`` (OPSD's where it logs the same thing). ``reward``,
``kl``, ``loss`` and ``learning_rate`` keep TRL's names; ``tied_groups`` is the step's share of
groups without reward spread (:mod:`papergym.train.grpo_signal`; TRL's own ``frac_reward_zero_std``
is kept beside it, and undercounts); ``unbacked_rate`` is the step's share of the LLM judge's
"met" verdicts whose quote was not in the answer (absent for a judge that quotes nothing);
``tokens_per_second`` counts prompt plus completion tokens of the sampled answers (TRL's
``num_tokens``) per wall second of the whole step: generation, judging and the update."""


def run_grpo(
    ctx: StageContext,
    on_step: StepHook | None = None,
    *,
    reward: RubricReward | None = None,
    watch: RubricReward | None = None,
) -> dict[str, Any]:
    """Train ``ctx.init_model`` with GRPO, save it merged to ``ctx.final_dir``, summarise.

    ``reward`` replaces the one built from ``config.reward`` (tests, a custom judge), ``watch``
    the watch judge built from ``config.watch``. Resumes from the stage's last checkpoint when
    there is one.
    """
    callback = MetricsCallback(ctx.metrics, rename=GRPO_METRICS, on_step=on_step)
    resume = resume_point(ctx)
    rollouts = RolloutLog(ctx.stage_dir / ROLLOUTS_FILE)
    rollouts.trim(checkpoint_step(resume))
    reward = reward or build_reward(ctx.config)
    # the held-out evaluation scores with the very reward GRPO trains on (and shares its cache)
    trainer = grpo_trainer(
        ctx, callbacks=[callback, *eval_callbacks(ctx, reward, watch)], rollouts=rollouts
    )
    # The reward function reads the process-wide reward; it is ours only while we train.
    set_shared_reward(reward)
    try:
        steps = train_and_save(trainer, ctx, resume)
    finally:
        set_shared_reward(None)
    return grpo_summary(ctx, steps, resume)


def grpo_trainer(
    ctx: StageContext,
    callbacks: Sequence[TrainerCallback] = (),
    *,
    rollouts: RolloutLog | None = None,
) -> GRPOTrainer:
    """The ``GRPOTrainer`` for this stage: model, tokenizer, data, reward function, LoRA;
    ``rollouts`` records each group's verdicts."""
    trainer = GRPOTrainer(
        **trainer_inputs(ctx, callbacks),
        reward_funcs=[grouped_rubric_reward(ctx.config.grpo.num_generations, rollouts)],
        args=grpo_config(ctx),
        train_dataset=Dataset.from_list(ctx.rows["train"]),
    )
    return without_console_logs(trainer)


def grouped_rubric_reward(
    group_size: int, rollouts: RolloutLog | None = None
) -> Callable[..., list[float | None]]:
    """The rubric reward function TRL calls (the process's shared reward), which also logs the
    share of tied groups (``rubric/tied_groups``) among the ``group_size`` answers of each
    question and, with ``rollouts``, each group's per-criterion verdicts.

    TRL lays each question's answers out consecutively, and every batch a process judges holds
    whole groups (its batch is a multiple of ``num_generations``), so consecutive runs of
    ``group_size`` are the groups.
    """

    def rubric_reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        log_metric: Callable[[str, float], None] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        reward = runtime.shared_reward()
        results = loop.run(score_completions(reward, completions, kwargs))
        rewards: list[float | None] = [r.value for r in results]
        if log_metric is not None:
            for name, value in reward.trl_logs(results).items():
                log_metric(name, value)
            log_metric(f"rubric/{TIED_KEY}", tied_share(rewards, group_size))
        if rollouts is not None:
            state = kwargs.get("trainer_state")
            rollouts.append(getattr(state, "global_step", 0), results, group_size)
        return rewards

    return rubric_reward


def grpo_config(ctx: StageContext) -> GRPOConfig:
    """Every setting that matters spelled out, so a TRL default change cannot move a run."""
    settings = ctx.config.grpo
    return GRPOConfig(
        **trainer_args(ctx, settings),
        num_generations=settings.num_generations,
        per_device_train_batch_size=settings.prompts_per_step * settings.num_generations,
        gradient_accumulation_steps=settings.gradient_accumulation_steps,
        beta=settings.beta,
        loss_type=settings.loss_type,
        importance_sampling_level=settings.importance_sampling_level,
        epsilon=settings.epsilon,
        epsilon_high=settings.epsilon_high or settings.epsilon,
        scale_rewards=settings.scale_rewards,
        max_completion_length=settings.max_completion_length,
        temperature=settings.temperature,
        # The reward reads question/reference/rubric: keep every dataset column.
        remove_unused_columns=False,
    )


def checkpoint_step(checkpoint: Path | None) -> int:
    """The optimiser steps a checkpoint holds (0 for a fresh start)."""
    if checkpoint is None:
        return 0
    state = json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
    return int(state["global_step"])


def build_reward(config: TrainConfig) -> RubricReward:
    """The rubric reward of ``config.reward`` (its judge, α, limits; the judge's LLM from
    ``reward.llm_config`` or ``llm``), built from the config itself, not the environment."""
    return make_reward(config.reward, config.llm)


def grpo_summary(ctx: StageContext, steps: int, resumed: Path | None) -> dict[str, Any]:
    """The common summary plus rewards, answer lengths, the unscored answers' total and the
    learning signal (:func:`papergym.train.grpo_signal.signal_summary`)."""
    records = ctx.metrics.read()
    unscored = [r["unscored"] for r in records if isinstance(r.get("unscored"), int | float)]
    return {
        **stage_summary(ctx, steps, resumed),
        "mean_reward": mean_of(records, "reward"),
        "last_reward": last_of(records, "reward"),
        "mean_completion_length": mean_of(records, "completion_length"),
        "unscored": round(sum(unscored)),
        **signal_summary(records),
    }
