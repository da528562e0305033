"""verl entry points of the rubric reward: ``compute_score`` (sync), ``compute_score_async`` and
``compute_score_batch`` (:mod:`papergym.adapters.verl` over this process's rubric reward).

verl passes only the decoded response; the question, reference and rubric travel in
``ground_truth`` (a JSON string, as ``papergym export --format verl`` writes it) and
``extra_info``. Every call returns the same keys, so verl can stack them into metrics:
``score`` (the reward, or ``reward.unscored`` — default 0.0 — when unscored), ``specific``,
``general`` (-1.0 when unscored), ``unscored`` (1.0/0.0) and ``num_criteria``.

Point verl at it with ``reward.custom_reward_function.path=<this file>`` and ``.name=compute_score``
(before verl 0.7.1: ``custom_reward_function.path/name``). The judge, α and the rest come from the
config file ``$PAPERGYM_CONFIG`` names (see :mod:`papergym.reward.runtime`).
"""

from __future__ import annotations

from papergym.adapters.verl import VerlFunctions
from papergym.reward import runtime
from papergym.reward.labels import anonymous_id as anonymous_id
from papergym.reward.labels import instance_from_ground_truth as instance_from_ground_truth

KEYS = ("score", "specific", "general", "unscored", "num_criteria")

_functions = VerlFunctions(runtime.shared_reward, runtime.unscored_fallback)
compute_score = _functions.compute_score
compute_score_async = _functions.compute_score_async
compute_score_batch = _functions.compute_score_batch
