"""TRL reward functions of the rubric reward for ``GRPOTrainer`` (plain and chat completions,
sync and async): :mod:`papergym.adapters.trl` over this process's rubric reward.

They read the ``question``, ``reference`` and ``rubric`` columns of ``papergym export --format trl``
(TRL passes dataset columns as keyword arguments), return one value per completion — ``None`` when
the judge could not score it, which TRL turns into NaN and leaves out of the mean instead of
counting a 0 — and log the specific and general means and the unscored count through TRL's
``log_metric`` hook when the trainer offers it::

    from papergym.reward.trl import rubric_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[rubric_reward], train_dataset=dataset, ...)
"""

from __future__ import annotations

from papergym.adapters.trl import async_reward_function, reward_function
from papergym.adapters.trl import completion_text as completion_text
from papergym.reward import runtime

rubric_reward = reward_function(runtime.shared_reward, "rubric_reward")
"""The rubric reward for a batch of completions (sync)."""

rubric_reward_async = async_reward_function(runtime.shared_reward, "rubric_reward_async")
"""The rubric reward for a batch of completions (async; TRL gathers async reward functions)."""
