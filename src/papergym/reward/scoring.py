"""Scoring rules for the rubric reward (SPEC §3), as pure functions.

Two families:

* **Unweighted, two-pass** (the paper's reward): each pass (specific, general) is scored by its
  pass rate, and the two rates are mixed as ``α·specific + (1−α)·general`` (α = 0.7).
* **Weighted** (ARES / HealthBench / RaR): ``Σ_k w_k·J_k`` with positive weights for desired
  properties and negative weights for pitfalls, normalised by the sum of positive weights
  (HealthBench) or by the sum of ``|w|`` (RaR), optionally clipped.

The reward uses both: the specific pass is scored by :func:`weighted_score` (every criterion's
weight from the rubric, 1 unless the rubric says otherwise, where it equals the pass rate
exactly), the general pass by its pass rate, and the two are α-mixed (:func:`rubric_score`).

**Clipping.** Each answer's specific score is clipped to ``[0, 1]``, so a pitfall can pull an
answer down to 0 but not below, and the α-mixed reward stays in ``[0, 1]`` as trainers expect.
*Aggregate* clipping is HealthBench's other rule: it leaves each example's score unclipped and
clips the *mean over examples* to ``[0, 1]``. Here the per-answer clip comes first, so a mean
over answers (``papergym score``'s ``mean``, a trainer's reward mean) is already in ``[0, 1]``
and an aggregate clip would change nothing; it is not applied anywhere. The consequence: on a
dataset where pitfalls push some answers below 0, our mean is at least HealthBench's (a mean of
clipped values, not a clipped mean); ``weighted_score(..., clip=None)`` gives the unclipped
per-answer values for a HealthBench-exact aggregate.

Unscored always propagates: a judgement that could not be scored (``None``) makes the result
``None``, never a silent 0 or a silent fail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import Field, model_validator

from papergym.records import Normalisation, Polarity, Record, Score, Verdict
from papergym.reward.settings import DEFAULT_ALPHA

__all__ = [
    "DEFAULT_ALPHA",
    "Normalisation",
    "Polarity",
    "WeightedCriterion",
    "alpha_mix",
    "check_normalisation",
    "credit",
    "pass_rate",
    "rubric_score",
    "specific_score",
    "weighted_score",
]

NORMALISATIONS: tuple[Normalisation, ...] = ("positive", "absolute")
SCORE_CLIP = (0.0, 1.0)
"""Every answer's specific score is clipped to this range (see the module docstring)."""


def _check_alpha(alpha: float) -> None:
    if not (0.0 <= alpha <= 1.0):  # also rejects NaN
        raise ValueError(f"alpha must be within [0, 1], got {alpha!r}")


def pass_rate(verdicts: Sequence[Verdict]) -> float | None:
    """The fraction of ``verdicts`` that passed, or ``None`` when it cannot be scored.

    A graded verdict counts for its grade (:func:`credit`), so the "fraction" is then the mean
    grade.

    ``None`` when the list is empty or when any verdict is unscored (``passed is None``):
    an unscored verdict is never counted as a fail.

    >>> v = lambda ok: Verdict(criterion_id="c", passed=ok)
    >>> pass_rate([v(True), v(True), v(False), v(True)])
    0.75
    >>> pass_rate([v(True), v(None)]) is None
    True
    >>> pass_rate([]) is None
    True
    """
    if not verdicts:
        return None
    credits = [credit(v) for v in verdicts]
    if any(c is None for c in credits):
        return None
    return math.fsum(c for c in credits if c is not None) / len(verdicts)


def credit(verdict: Verdict) -> float | None:
    """What one verdict counts for: its ``grade`` when graded (0, 0.5, 1), else 1 for met and
    0 for not met; ``None`` when unscored.

    >>> credit(Verdict(criterion_id="c", passed=True, grade=0.5))
    0.5
    >>> credit(Verdict(criterion_id="c", passed=False)), credit(Verdict(criterion_id="c", passed=None))
    (0.0, None)
    """
    if verdict.passed is None:
        return None
    if verdict.grade is not None:
        return verdict.grade
    return 1.0 if verdict.passed else 0.0


def alpha_mix(
    specific: float | None, general: float | None, alpha: float = DEFAULT_ALPHA
) -> float | None:
    """``α·specific + (1−α)·general``; ``None`` if either part is ``None``.

    Strict: a missing part is not filled in here (see :func:`rubric_score` for the policy when
    a pass has no criteria). ``alpha`` must lie in ``[0, 1]`` (``ValueError`` otherwise). The
    result is kept between ``specific`` and ``general`` (it is a convex combination), which only
    matters for floating-point rounding.

    >>> round(alpha_mix(0.8, 0.6), 10)  # the SPEC example
    0.74
    >>> alpha_mix(0.8, 0.6, alpha=1.0), alpha_mix(0.8, 0.6, alpha=0.0)
    (0.8, 0.6)
    >>> alpha_mix(0.8, None) is None
    True
    >>> alpha_mix(0.8, 0.6, alpha=1.5)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be within [0, 1], got 1.5
    """
    _check_alpha(alpha)
    if specific is None or general is None:
        return None
    mixed = alpha * specific + (1.0 - alpha) * general
    return min(max(mixed, min(specific, general)), max(specific, general))


def _unscored_reason(name: str, verdicts: Sequence[Verdict]) -> str | None:
    unscored = [v for v in verdicts if v.passed is None]
    if not unscored:
        return None
    ids = ", ".join(v.criterion_id for v in unscored)
    why = list(dict.fromkeys(v.reason for v in unscored if v.reason))  # distinct, in order
    detail = f" ({'; '.join(why)})" if why else ""
    return f"{name} pass unscored: no verdict for criteria {ids}{detail}"


def _check_pass(name: Literal["specific", "general"], verdicts: Sequence[Verdict]) -> None:
    seen: set[str] = set()
    for v in verdicts:
        if v.kind != name:
            raise ValueError(
                f"verdict for criterion {v.criterion_id!r} has kind {v.kind!r} "
                f"but was given in the {name} pass"
            )
        if v.criterion_id in seen:
            raise ValueError(f"criterion {v.criterion_id!r} appears twice in the {name} pass")
        seen.add(v.criterion_id)


def check_normalisation(normalisation: str) -> None:
    """Refuse a normalisation other than ``positive`` or ``absolute``."""
    if normalisation not in NORMALISATIONS:
        raise ValueError(f"normalisation must be 'positive' or 'absolute', got {normalisation!r}")


def specific_score(
    verdicts: Sequence[Verdict], normalisation: Normalisation = "positive"
) -> float | None:
    """The specific pass's score: :func:`weighted_score` over the verdicts' weights, clipped.

    With every weight 1 this is exactly :func:`pass_rate` (both are ``met / n`` in floating
    point), whichever the normalisation. ``None`` when the pass is empty, any verdict is
    unscored, or nothing is left to divide by (only pitfalls, under ``positive``).

    >>> v = lambda cid, ok, w=1.0: Verdict(criterion_id=cid, passed=ok, weight=w)
    >>> specific_score([v("a", True), v("b", False), v("c", True), v("d", True)])
    0.75
    >>> specific_score([v("a", True, 3), v("b", True, 1), v("h", True, -2)])  # (3 + 1 - 2) / 4
    0.5
    >>> specific_score([v("a", True, 3), v("b", True, 1), v("h", True, -2)], "absolute")  # / 6
    0.3333333333333333
    """
    criteria = [
        WeightedCriterion(id=v.criterion_id, weight=v.weight, polarity=polarity_of(v.weight))
        for v in verdicts
    ]
    met = {v.criterion_id: credit(v) for v in verdicts}
    return weighted_score(criteria, met, normalisation=normalisation, clip=SCORE_CLIP)


def polarity_of(weight: float) -> Polarity:
    """A signed weight's polarity: ``pitfall`` below 0, ``desired`` above (0 is refused)."""
    return "pitfall" if weight < 0 else "desired"


def _nothing_to_divide_by(verdicts: Sequence[Verdict], normalisation: Normalisation) -> str | None:
    if normalisation == "positive" and verdicts and all(v.weight < 0 for v in verdicts):
        return (
            "specific pass unscored: only pitfalls, so no positive weight to normalise by "
            "(use normalisation 'absolute')"
        )
    return None


def rubric_score(
    instance_id: str,
    specific: Sequence[Verdict],
    general: Sequence[Verdict],
    *,
    alpha: float = DEFAULT_ALPHA,
    judge: str = "",
    normalisation: Normalisation = "positive",
) -> Score:
    """The :class:`~papergym.records.Score` of one answer from its two passes of verdicts.

    ``value = α·specific + (1−α)·pass_rate(general)``, where ``specific`` is
    :func:`specific_score`: the weighted score of the specific verdicts (each verdict carries
    its criterion's weight; a met pitfall subtracts), normalised as ``normalisation`` says and
    clipped to ``[0, 1]`` — the pass rate exactly when every weight is 1. General criteria are
    unweighted. Policy for special cases:

    * **a pass with no verdicts at all**, or **none in either pass**: see
      :func:`_value_and_alpha`.
    * **any unscored verdict** (``passed is None``) in a pass that counts: unscored; the
      ``unscored_reason`` names the pass, the criterion ids and the unscored verdicts'
      distinct reasons (e.g. why the judge's answer could not be parsed). The score of a fully
      scored pass is still reported.
    * **only pitfalls under** ``positive``: nothing to divide by, unscored with that reason.

    Every verdict's ``kind`` must match the pass it is given in, and a criterion may appear
    only once per pass (``ValueError`` otherwise). ``alpha`` must lie in ``[0, 1]``.

    >>> s = [Verdict(criterion_id=f"s{i}", passed=i < 8) for i in range(10)]
    >>> g = [Verdict(criterion_id=f"g{i}", passed=i < 3, kind="general") for i in range(5)]
    >>> score = rubric_score("inst", s, g)
    >>> round(score.value, 10), score.specific, score.general, score.alpha
    (0.74, 0.8, 0.6, 0.7)
    >>> rubric_score("inst", s, []).value
    0.8
    >>> bad = [Verdict(criterion_id="s9", passed=None)]
    >>> score = rubric_score("inst", s[:9] + bad, g)
    >>> score.value is None, score.unscored_reason
    (True, 'specific pass unscored: no verdict for criteria s9')
    """
    _check_alpha(alpha)
    check_normalisation(normalisation)
    _check_pass("specific", specific)
    _check_pass("general", general)

    spec_score = specific_score(specific, normalisation) if specific else None
    gen_mean = pass_rate(general)
    reasons = _unscored_reasons(specific, general, normalisation)
    value, effective_alpha = _value_and_alpha(specific, general, (spec_score, gen_mean), alpha)
    return Score(
        instance_id=instance_id,
        value=None if reasons else value,
        specific=spec_score,
        general=gen_mean,
        alpha=effective_alpha,
        normalisation=normalisation,
        verdicts=(*specific, *general),
        unscored_reason="; ".join(reasons) if reasons else None,
        judge=judge,
    )


def _value_and_alpha(
    specific: Sequence[Verdict],
    general: Sequence[Verdict],
    scores: tuple[float | None, float | None],
    alpha: float,
) -> tuple[float | None, float]:
    """The value of an answer from its passes' ``scores`` (specific, general), and the α it was
    mixed with.

    * **a pass with no verdicts at all** (e.g. a rubric without general criteria): the value is
      the other pass's score alone, and the Score records the *effective* α (1.0 when there are
      no general verdicts, 0.0 when there are no specific ones), so that
      ``value == alpha·specific + (1−alpha)·general`` still reads correctly with the absent
      term weighted 0. Its score is ``None``.
    * **no verdicts in either pass**: unscored.
    """
    spec_score, gen_mean = scores
    if not specific and not general:
        return None, alpha
    if not general:
        return spec_score, 1.0
    if not specific:
        return gen_mean, 0.0
    return alpha_mix(spec_score, gen_mean, alpha), alpha


def _unscored_reasons(
    specific: Sequence[Verdict], general: Sequence[Verdict], normalisation: Normalisation
) -> list[str]:
    """Why the passes leave an answer unscored: their unscored verdicts, else (only then) a
    specific pass with nothing to divide by; and passes without any verdict."""
    reasons: list[str] = []
    for name, verdicts in (("specific", specific), ("general", general)):
        reason = _unscored_reason(name, verdicts)
        if reason is not None:
            reasons.append(reason)
    if not reasons:
        no_denominator = _nothing_to_divide_by(specific, normalisation)
        if no_denominator is not None:
            reasons.append(no_denominator)
    if not specific and not general:
        reasons.append("no verdicts in either pass")
    return reasons


# --- weighted rubrics (ARES / HealthBench / RaR) ----------------------------------------------


class WeightedCriterion(Record):
    """A criterion with a signed weight and an explicit polarity.

    ``desired`` criteria need ``weight > 0``; ``pitfall`` criteria (hallucination, unsafe
    omission, …) need ``weight < 0``: meeting a pitfall subtracts. A zero weight, a weight
    whose sign disagrees with the polarity, or a non-finite weight is a ``ValueError``.

    >>> WeightedCriterion(id="cites", weight=5, polarity="desired").weight
    5.0
    >>> try:
    ...     WeightedCriterion(id="hallucinates", weight=3, polarity="pitfall")
    ... except ValueError as err:  # pydantic's ValidationError is a ValueError
    ...     print("needs a negative weight" in str(err))
    True
    """

    id: str
    weight: float = Field(allow_inf_nan=False)
    polarity: Polarity

    @model_validator(mode="after")
    def _sign_matches_polarity(self) -> WeightedCriterion:
        if self.polarity == "desired" and not self.weight > 0:
            raise ValueError(
                f"desired criterion {self.id!r} needs a positive weight, got {self.weight!r}"
            )
        if self.polarity == "pitfall" and not self.weight < 0:
            raise ValueError(
                f"pitfall criterion {self.id!r} needs a negative weight, got {self.weight!r}"
            )
        return self


def weighted_score(
    criteria: Sequence[WeightedCriterion],
    met: Mapping[str, bool | float | None],
    *,
    normalisation: Normalisation = "positive",
    clip: tuple[float, float] | None = (0.0, 1.0),
) -> float | None:
    """``Σ_k w_k·J_k`` over the criteria, normalised and optionally clipped.

    ``J_k`` is 1 when criterion ``k`` is met and 0 when not, so a met pitfall (negative weight)
    subtracts; a graded judgement gives ``J_k`` in ``[0, 1]`` (how far it is met, a number
    outside that range is a ``ValueError``), and the same normalisations apply. With ``P`` the sum of positive weights, ``N`` the sum of ``|w|`` over pitfalls and
    ``W = P + N``:

    * ``"positive"`` divides by ``P`` (HealthBench): the range is ``[−N/P, 1]`` before clipping.
    * ``"absolute"`` divides by ``W`` (RaR): the range is ``[−N/W, P/W]`` before clipping.

    ``clip=(lo, hi)`` clamps the result (``None`` leaves it unclipped). Returns ``None``
    (unscored) when any judgement is ``None`` or the denominator is 0 (e.g. no criteria, or
    only pitfalls under ``"positive"``). Every criterion id must be a key of ``met``
    (``KeyError`` otherwise); a key of ``met`` that names no criterion, or a repeated criterion
    id, is a ``ValueError``.

    >>> cs = [
    ...     WeightedCriterion(id="a", weight=6, polarity="desired"),
    ...     WeightedCriterion(id="b", weight=4, polarity="desired"),
    ...     WeightedCriterion(id="h", weight=-8, polarity="pitfall"),
    ... ]
    >>> weighted_score(cs, {"a": True, "b": False, "h": False})
    0.6
    >>> weighted_score(cs, {"a": False, "b": True, "h": True}, clip=None)  # (4 - 8) / 10
    -0.4
    >>> weighted_score(cs, {"a": False, "b": True, "h": True})
    0.0
    >>> weighted_score(cs, {"a": True, "b": True, "h": False}, normalisation="absolute")
    0.5555555555555556
    >>> weighted_score(cs, {"a": True, "b": None, "h": False}) is None
    True
    """
    check_normalisation(normalisation)
    if clip is not None and not (clip[0] <= clip[1]):
        raise ValueError(f"clip must be (lo, hi) with lo <= hi, got {clip!r}")
    _check_judgements(criteria, met)
    if any(met[c.id] is None for c in criteria):
        return None

    if normalisation == "positive":
        denominator = math.fsum(c.weight for c in criteria if c.weight > 0)
    else:
        denominator = math.fsum(abs(c.weight) for c in criteria)
    if denominator == 0:
        return None

    raw = math.fsum(c.weight * _judged(c.id, met[c.id]) for c in criteria)
    value = raw / denominator
    if clip is not None:
        value = min(max(value, clip[0]), clip[1])
    return value


def _judged(criterion_id: str, judgement: bool | float | None) -> float:
    """``J_k`` of one scored judgement: 1/0 for met/not met, a grade as it is."""
    value = float(bool(judgement)) if isinstance(judgement, bool) else float(judgement or 0.0)
    if not 0.0 <= value <= 1.0:  # also rejects NaN
        raise ValueError(f"judgement of {criterion_id!r} must be within [0, 1], got {judgement!r}")
    return value


def _check_judgements(
    criteria: Sequence[WeightedCriterion], met: Mapping[str, bool | float | None]
) -> None:
    """Every criterion once, each with a judgement in ``met``, and no judgement of another."""
    ids = [c.id for c in criteria]
    seen: set[str] = set()
    for cid in ids:
        if cid in seen:
            raise ValueError(f"criterion {cid!r} appears more than once")
        seen.add(cid)
    missing = [cid for cid in ids if cid not in met]
    if missing:
        raise KeyError(f"no judgement in `met` for criteria: {', '.join(map(repr, missing))}")
    unknown = sorted(set(met) - seen)
    if unknown:
        raise ValueError(
            f"`met` has judgements for unknown criteria: {', '.join(map(repr, unknown))}"
        )
