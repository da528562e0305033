"""TRL reward functions of the review reward for ``GRPOTrainer`` over generated papers
(:mod:`papergym.adapters.trl` over this process's review reward).

Each completion (plain or chat format) is reviewed as a paper; the reward is its mean simulated
rating on [0, 1], or ``None`` when no review could be scored (TRL turns that into NaN and leaves
it out of the mean instead of counting a 0). No dataset column is needed. The mean rating, the
unscored count and the count of texts scored from fewer reviews than asked (``review.partial``)
are logged through TRL's ``log_metric`` hook when the trainer offers it::

    from papergym.review.trl import review_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[review_reward], train_dataset=dataset, ...)

The reviewer comes from the config file ``$PAPERGYM_CONFIG`` names (its ``review`` and ``llm``
sections; see :mod:`papergym.review.runtime`).
"""

from __future__ import annotations

from papergym.adapters.trl import async_reward_function, reward_function
from papergym.review.runtime import shared_review_reward

review_reward = reward_function(shared_review_reward, "review_reward")
"""The review reward for a batch of completions (sync)."""

review_reward_async = async_reward_function(shared_review_reward, "review_reward_async")
"""The review reward for a batch of completions (async; TRL gathers async reward functions)."""
