"""The divergence rule of the training watch: pure functions over the held-out evaluations.

At every evaluation during training (``eval.steps``) the training reward and the watch judge
(``watch``) score the same greedy answers; each evaluation is one :class:`EvalPoint`. The run is
*diverging* when, over the last ``patience`` evaluation-to-evaluation changes, the training
reward rose every time while the watch fell every time: the policy is learning what the
training judge pays for and the watch does not. A change counts only beyond ``min_change``, and
an evaluation with either mean unscored breaks the streak (unscored is not zero: no change can
be read from it).

The criteria that drive the gap are ranked by ``Δ training pass rate − Δ watch pass rate`` over
the window (first to last evaluation of it), largest first, over the criteria both judges gave a
verdict on at both ends.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any, Literal, Protocol

from pydantic import Field

from papergym.records import Record


class _Verdict(Protocol):
    @property
    def criterion_id(self) -> str: ...
    @property
    def kind(self) -> Literal["specific", "general"]: ...
    @property
    def passed(self) -> bool | None: ...


class _Scored(Protocol):
    """One judged answer (eval's ``EvalScore`` has this shape)."""

    @property
    def instance_id(self) -> str: ...
    @property
    def verdicts(self) -> Sequence[_Verdict]: ...


class EvalPoint(Record):
    """One held-out evaluation as both judges saw it: a line of a stage's ``watch.jsonl``."""

    step: int
    train: float | None
    """The training reward's mean on the held-out answers (None: every answer unscored)."""
    watch: float | None
    """The watch judge's mean on the same answers (None: every answer unscored)."""
    train_rates: dict[str, float] = Field(default_factory=dict)
    """Per criterion key (:func:`criterion_key`), the training judge's pass rate."""
    watch_rates: dict[str, float] = Field(default_factory=dict)
    """Per criterion key, the watch judge's pass rate."""


class CriterionGap(Record):
    """How one criterion moved over a diverging window, under each judge."""

    criterion: str
    train_change: float
    watch_change: float
    gap: float
    """``train_change − watch_change``: how much more the training judge credits it now."""


class Divergence(Record):
    """A diverging window: the training reward rose at each step while the watch fell."""

    first_step: int
    last_step: int
    evaluations: int
    """Changes in the window (``watch.patience``)."""
    train_change: float
    watch_change: float
    criteria: tuple[CriterionGap, ...]
    """The criteria driving the gap, largest first (at most ``shown``, positive gaps only)."""


def criterion_key(instance_id: str, criterion_id: str, kind: str) -> str:
    """A specific criterion belongs to its question (``instance/criterion``); a general one is
    shared by every question (``general/criterion``), so its pass rate is over all of them."""
    return f"general/{criterion_id}" if kind == "general" else f"{instance_id}/{criterion_id}"


def pass_rates(scores: Iterable[_Scored]) -> dict[str, float]:
    """Per criterion key, the share of its verdicts that passed; verdicts the judge could not
    give (``passed`` None) are left out, and a criterion with none is absent, not 0."""
    counts: dict[str, list[int]] = {}
    for score in scores:
        for verdict in score.verdicts:
            if verdict.passed is None:
                continue
            key = criterion_key(score.instance_id, verdict.criterion_id, verdict.kind)
            seen = counts.setdefault(key, [0, 0])
            seen[0] += int(verdict.passed)
            seen[1] += 1
    return {key: passed / total for key, (passed, total) in sorted(counts.items())}


def _rose(before: float | None, after: float | None, min_change: float) -> bool:
    return before is not None and after is not None and after - before > min_change


def divergence(
    points: Sequence[EvalPoint], patience: int, min_change: float = 0.0, shown: int = 5
) -> Divergence | None:
    """The divergence ending at the last point, or None: the last ``patience`` changes each
    raised the training reward and lowered the watch by more than ``min_change``."""
    if patience < 1 or len(points) < patience + 1:
        return None
    window = points[-(patience + 1) :]
    for before, after in pairwise(window):
        if not _rose(before.train, after.train, min_change):
            return None
        if not _rose(after.watch, before.watch, min_change):  # the watch fell
            return None
    first, last = window[0], window[-1]
    assert first.train is not None and last.train is not None  # checked by _rose
    assert first.watch is not None and last.watch is not None
    return Divergence(
        first_step=first.step,
        last_step=last.step,
        evaluations=patience,
        train_change=last.train - first.train,
        watch_change=last.watch - first.watch,
        criteria=tuple(criterion_gaps(first, last)[:shown]),
    )


def criterion_gaps(first: EvalPoint, last: EvalPoint) -> list[CriterionGap]:
    """Per criterion both judges rated at both points, the change in the training judge's pass
    rate minus the change in the watch's; positive gaps only, largest first (ties by key)."""
    keys = (
        first.train_rates.keys()
        & last.train_rates.keys()
        & first.watch_rates.keys()
        & last.watch_rates.keys()
    )
    gaps = []
    for key in keys:
        train = last.train_rates[key] - first.train_rates[key]
        watch = last.watch_rates[key] - first.watch_rates[key]
        if train - watch > 0:
            gaps.append(
                CriterionGap(
                    criterion=key, train_change=train, watch_change=watch, gap=train - watch
                )
            )
    return sorted(gaps, key=lambda g: (-g.gap, g.criterion))


def is_watch_peak(history: Sequence[EvalPoint], point: EvalPoint) -> bool:
    """Whether ``point`` beats every earlier watch score (strictly: the earliest peak is kept);
    an unscored watch is never a peak."""
    if point.watch is None:
        return False
    earlier = [p.watch for p in history if p.watch is not None]
    return not earlier or point.watch > max(earlier)


def watch_peak(points: Sequence[EvalPoint]) -> EvalPoint | None:
    """The earliest evaluation with the highest watch score (None: the watch scored none)."""
    peak = None
    for index, point in enumerate(points):
        if is_watch_peak(points[:index], point):
            peak = point
    return peak


def divergence_warnings(result: dict[str, Any]) -> list[str]:
    """One line per stage of a run summary whose watch raised an alarm: when, how far the two
    judges moved, the criteria driving the gap and where ``best/`` is."""
    lines = []
    for stage in result.get("stages", []):
        watch = stage.get("watch") or {}
        alarms = watch.get("alarms") or []
        if not alarms:
            continue
        last = alarms[-1]
        criteria = ", ".join(c["criterion"] for c in last.get("criteria", [])) or "none"
        best = watch.get("best")
        where = (
            f"best/ (the watch's peak, step {best['step']}): {best['path']}"
            if best
            else "no best/ saved"
        )
        lines.append(
            f"warning: {stage['stage']}: the training reward rose while the watch judge fell in "
            f"{len(alarms)} window(s), last at steps {last['first_step']}-{last['last_step']} "
            f"({last['train_change']:+.3f} vs {last['watch_change']:+.3f}); criteria driving the "
            f"gap: {criteria}; {where}"
        )
    return lines
