"""verl entry points of the review reward: ``compute_score``, ``compute_score_async`` and
``compute_score_batch`` for a policy that writes papers (:mod:`papergym.adapters.verl` over
this process's review reward).

The decoded response is reviewed as a paper; ``ground_truth`` and ``extra_info`` are not read
(a row needs no rubric). Every call returns the same keys, so verl can stack them into metrics:
``score`` (the mean rating on [0, 1], or ``reward.unscored`` — default 0.0 — when no review was
scored), ``rating`` (the mean rating on the venue's scale, -1.0 when unscored), ``reviews``
(reviews scored), ``unscored`` (1.0/0.0), ``partial`` (1.0 when fewer reviews were scored than
asked; see ``review.partial``).

Point verl at it with ``reward.custom_reward_function.path=<this file>`` and
``.name=compute_score`` (before verl 0.7.1: ``custom_reward_function.path/name``). The reviewer
comes from the config file ``$PAPERGYM_CONFIG`` names (see :mod:`papergym.review.runtime`).
"""

from __future__ import annotations

from papergym.adapters.verl import VerlFunctions
from papergym.review.reward import ReviewScore, verl_metrics
from papergym.review.runtime import shared_review_reward
from papergym.reward import runtime

KEYS = ("score", "rating", "reviews", "unscored", "partial")

_functions = VerlFunctions(shared_review_reward, runtime.unscored_fallback)
compute_score = _functions.compute_score
compute_score_async = _functions.compute_score_async
compute_score_batch = _functions.compute_score_batch


def review_score_dict(score: ReviewScore) -> dict[str, float]:
    """The fixed key set verl aggregates; an unscored text gets the configured fallback."""
    value = score.value if score.value is not None else runtime.unscored_fallback()
    return {"score": value, **verl_metrics(score)}
