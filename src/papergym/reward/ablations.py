"""Scoring rules of ARES's ablation rewards (SPEC §6) and of the graded verdict, as pure
functions.

* **graded verdicts**: the judge answers 0 (not met), 1 (partly met) or 2 (fully met) per
  criterion; :func:`grade_value` maps that to 0, ½, 1. Three levels, not a 1–5 scale: 0 stays
  exactly the binary "not met" (so the quote rule and pitfalls read the same way), and a small
  judge uses three anchored levels far more consistently than five unanchored ones.
* **holistic**: a judge that sees no rubric gives the answer 0–10 points;
  :func:`holistic_value` maps them to ``points / 10``.
* **reference similarity**: the cosine similarity of the answer's and the reference's unit
  embeddings; :func:`similarity_value` clips it to ``[0, 1]`` (a negative cosine, an answer
  pointing away from the reference, earns 0, as an unrelated one does).

:func:`answer_score` turns either ablation's number into a :class:`~papergym.records.Score`
that says its mode; ``None`` stays unscored with its reason, never 0.
"""

from __future__ import annotations

import math

from papergym.records import RewardMode, Score

GRADE_LEVELS = 2
"""The top of the judge's graded scale: 0 not met, 1 partly met, 2 fully met."""

HOLISTIC_POINTS = 10
"""The top of the holistic judge's scale: 0–10 points."""


def grade_value(level: int) -> float:
    """A graded verdict's level (0, 1, 2) as a grade in ``[0, 1]``.

    >>> grade_value(0), grade_value(1), grade_value(2)
    (0.0, 0.5, 1.0)
    """
    if isinstance(level, bool) or level not in range(GRADE_LEVELS + 1):
        raise ValueError(f"grade level must be 0, 1 or 2, got {level!r}")
    return level / GRADE_LEVELS


def holistic_value(points: int) -> float:
    """The holistic judge's 0–10 points as a reward in ``[0, 1]``.

    >>> holistic_value(7)
    0.7
    """
    if isinstance(points, bool) or points not in range(HOLISTIC_POINTS + 1):
        raise ValueError(f"holistic points must be a whole number 0-10, got {points!r}")
    return points / HOLISTIC_POINTS


def similarity_value(cosine: float) -> float:
    """The answer's cosine similarity to the reference, clipped to ``[0, 1]``.

    >>> similarity_value(0.62), similarity_value(-0.2), similarity_value(1.0000001)
    (0.62, 0.0, 1.0)
    """
    if math.isnan(cosine):
        raise ValueError("cosine similarity is NaN")
    return min(max(cosine, 0.0), 1.0)


def answer_score(
    instance_id: str,
    value: float | None,
    *,
    mode: RewardMode,
    judge: str,
    reason: str = "",
) -> Score:
    """The :class:`~papergym.records.Score` of a whole-answer reward (holistic, reference
    similarity): no verdicts and no specific/general parts, the value or ``None`` with
    ``reason`` as the unscored reason.

    >>> answer_score("q1", None, mode="holistic", judge="j", reason="no parse").unscored_reason
    'holistic unscored: no parse'
    """
    if mode not in ("holistic", "reference_similarity"):
        raise ValueError(f"{mode!r} is not a whole-answer reward mode")
    if value is not None and not 0.0 <= value <= 1.0:
        raise ValueError(f"a reward must be within [0, 1], got {value!r}")
    return Score(
        instance_id=instance_id,
        value=value,
        unscored_reason=None if value is not None else f"{mode} unscored: {reason or 'no value'}",
        judge=judge,
        mode=mode,
    )
