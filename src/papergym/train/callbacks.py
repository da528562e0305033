"""The callback every TRL stage logs through: each trainer log as a record of our metrics JSONL.

``transformers.Trainer`` hands every log dict (loss, learning rate, and whatever the TRL trainer
adds: reward, KL, completion lengths, ``num_tokens``...) to its callbacks' ``on_log``.
:class:`MetricsCallback` writes each one as a record of the stage's ``metrics.jsonl``, so every
stage of a run, ours or TRL's, is monitored the same way. Building, resuming and running the
trainers is :mod:`papergym.train.trl_stage`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from papergym.train.evaluation import StepEvaluator, should_evaluate
from papergym.train.run import MetricsLog, StepHook
from papergym.train.watch import WatchTracker, record_evaluation

TOKENS_PER_SECOND = "tokens_per_second"
"""The metric :class:`MetricsCallback` adds where the trainer logs a running token count."""

_END_OF_TRAINING = "train_runtime"
"""A key only the trainer's final summary log has."""


class _StepLogCallback(TrainerCallback):
    """The main process's view of a training run: :meth:`start` when training starts, then
    :meth:`step_log` with each trainer log but the end-of-training summary (not a step).

    Other processes of a distributed run see nothing, so a log is handled once per run."""

    def on_train_begin(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        if state.is_world_process_zero:
            self.start(state)

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not logs or _END_OF_TRAINING in logs or not state.is_world_process_zero:
            return
        self.step_log(state, logs)

    def start(self, state: TrainerState) -> None:
        """Training starts (or resumes: ``state`` is already restored)."""

    def step_log(self, state: TrainerState, logs: dict[str, Any]) -> None:
        raise NotImplementedError


class MetricsCallback(_StepLogCallback):
    """Writes each trainer log (at its global step) to ``metrics``; generic over TRL trainers.

    ``rename`` maps the trainer's metric names to ours (e.g. ``completions/mean_length`` →
    ``completion_length``, as OPSD names it); other keys are written as the trainer named
    them. ``on_step`` sees each record after it is written. Non-finite numbers are written as
    ``null``: TRL reports a mean with no valid values (every reward unscored) as NaN or None,
    and strict JSON readers reject NaN. The trainer's end-of-training log (runtime, mean loss)
    is not a step and is not written; the stage summary covers it.

    When a log holds ``token_key`` (a running token count, as both TRL trainers log it as
    ``num_tokens``), the record also gets ``tokens_per_second``: tokens added since the previous
    log divided by the wall time between the two, so it includes everything the step did
    (generation and judging too, for GRPO). What the count covers is the trainer's choice.
    """

    def __init__(
        self,
        metrics: MetricsLog,
        rename: Mapping[str, str] | None = None,
        token_key: str = "num_tokens",
        on_step: StepHook | None = None,
    ) -> None:
        self.metrics = metrics
        self.rename = dict(rename or {})
        self.token_key = token_key
        self.on_step = on_step
        self._clock = time.perf_counter()
        self._tokens = 0.0

    def start(self, state: TrainerState) -> None:
        # On resume the state is already restored here, so a count that carries across
        # sessions (GRPO's num_input_tokens_seen) starts from its saved value; SFT's count
        # restarts at 0 each session and leaves the state's at 0, which matches too.
        self._clock = time.perf_counter()
        self._tokens = float(state.num_input_tokens_seen or 0)

    def step_log(self, state: TrainerState, logs: dict[str, Any]) -> None:
        values = {self.rename.get(key, key): _finite(value) for key, value in logs.items()}
        rate = self._tokens_per_second(logs.get(self.token_key))
        if rate is not None:
            values[TOKENS_PER_SECOND] = rate
        self.metrics.write(state.global_step, **values)
        if self.on_step is not None:
            self.on_step(state.global_step, values)

    def _tokens_per_second(self, count: Any) -> float | None:
        now = time.perf_counter()
        elapsed, self._clock = now - self._clock, now
        if not isinstance(count, int | float) or not math.isfinite(count):
            return None
        # A count below the previous one restarted (a new session): all of it is new.
        added = count - self._tokens if count >= self._tokens else count
        self._tokens = float(count)
        return round(added / elapsed, 2) if elapsed > 0 else None


class EvalCallback(TrainerCallback):
    """Evaluates the policy on the held-out questions every ``every`` optimiser steps and writes
    the ``eval/*`` values as a record of ``metrics`` at that step.

    It runs at ``on_step_end``, before the trainer logs and saves that step, so a kill between
    the two leaves a record past the last checkpoint, which a resumed stage trims
    (:func:`papergym.train.trl_stage.resume_point`) and writes again: each step is evaluated once
    in the file. ``on_step`` sees each record after it is written. With a ``tracker`` (the
    evaluator has a watch judge), each evaluation also goes through the divergence watch.
    """

    def __init__(
        self,
        evaluator: StepEvaluator,
        metrics: MetricsLog,
        every: int,
        on_step: StepHook | None = None,
        tracker: WatchTracker | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.metrics = metrics
        self.every = every
        self.on_step = on_step
        self.tracker = tracker

    def on_step_end(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        model: Any = None,
        **kwargs: Any,
    ) -> None:
        if model is None or not state.is_world_process_zero:
            return
        if not should_evaluate(state.global_step, self.every):
            return
        values = record_evaluation(
            self.evaluator, self.tracker, self.metrics, state.global_step, model
        )
        if self.on_step is not None:
            self.on_step(state.global_step, values)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class StepHookCallback(_StepLogCallback):
    """Hands each trainer log to a hook made when training starts, for trainers without a
    metrics file (the cycle's rounds): ``make_hook(max_steps)`` is called at
    ``on_train_begin``, then the hook sees ``(global_step, log)`` at each log but the
    end-of-training one."""

    def __init__(self, make_hook: Callable[[int], Callable[[int, dict[str, Any]], None]]) -> None:
        self.make_hook = make_hook
        self._hook: Callable[[int, dict[str, Any]], None] | None = None

    def start(self, state: TrainerState) -> None:
        self._hook = self.make_hook(state.max_steps)

    def step_log(self, state: TrainerState, logs: dict[str, Any]) -> None:
        if self._hook is not None:
            self._hook(state.global_step, logs)
