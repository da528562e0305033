"""What an LLM build does with the leakage judge's verdicts: keep, remove or replace (SPEC §2 8-9).

:func:`act_on_leakage` is the whole decision, a pure function of the rubric (its criteria carrying
the judge's verdicts), the reserve (the filter's candidates the merge did not use, judged in the
same call) and the ``build.leakage`` settings. Only a judge verdict of "leaked" counts: an
unscored verdict is not a "no", so a criterion the judge could not score stays, and a candidate
it could not score is never used as a replacement.

The rubric must keep every dimension it had (method, experiment): a leaked criterion whose
removal would leave its dimension empty is replaced by a reserve candidate of that dimension
even under ``remove``, and when there is none the instance is dropped, like an instance left
with fewer than ``min_criteria`` criteria.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from papergym.recipes.settings import LeakageAction
from papergym.records import Criterion

STEP = "leakage"
"""The step a drop for leakage is recorded under."""


def judged_leaked(criterion: Criterion) -> bool:
    """Whether the leakage judge found ``criterion`` inferable from the question."""
    return any(v.method == "judge" and v.leaked is True for v in criterion.leakage)


def judged_clean(criterion: Criterion) -> bool:
    """Whether the judge scored ``criterion`` and found it not inferable (and none said yes)."""
    judge = [v for v in criterion.leakage if v.method == "judge"]
    return bool(judge) and all(v.leaked is False for v in judge)


@dataclass(frozen=True)
class LeakageOutcome:
    """The rubric after the action: its criteria (ranked 1..n), those taken out, a note for the
    rubric when it shrank, and the reason to drop the instance (None: keep it)."""

    criteria: tuple[Criterion, ...]
    leaked_out: tuple[Criterion, ...] = ()
    note: str = ""
    drop_reason: str | None = None


def act_on_leakage(
    criteria: Sequence[Criterion],
    reserve: Sequence[Criterion],
    action: LeakageAction,
    min_criteria: int,
) -> LeakageOutcome:
    """Apply ``action`` to the leaked criteria of a rubric (see the module docstring).

    ``criteria`` are in rank order; ``reserve`` in the order replacements are tried. A
    replacement takes the rank of the criterion it replaces and records its id in ``replaces``.
    """
    leaked = [c for c in criteria if judged_leaked(c)]
    if action == "keep" or not leaked:
        return LeakageOutcome(tuple(criteria))
    unused = [r for r in reserve if judged_clean(r)]
    covered = {c.dimension for c in criteria if not judged_leaked(c)}
    final: list[Criterion] = []
    for criterion in criteria:
        if not judged_leaked(criterion):
            final.append(criterion)
            continue
        missing = criterion.dimension not in covered
        if action == "replace" or missing:
            same = [r for r in unused if r.dimension == criterion.dimension]
            pool = same if missing else unused
            if pool:
                replacement = pool[0]
                unused.remove(replacement)
                covered.add(replacement.dimension)
                final.append(replacement.model_copy(update={"replaces": criterion.id}))
    ranked = tuple(c.model_copy(update={"rank": n}) for n, c in enumerate(final, start=1))
    replaced = sum(1 for c in ranked if c.replaces is not None)
    note = _note(len(leaked), replaced, len(ranked)) if len(ranked) < len(criteria) else ""
    return LeakageOutcome(
        ranked, tuple(leaked), note, _drop_reason(criteria, ranked, len(leaked), min_criteria)
    )


def _note(leaked: int, replaced: int, left: int) -> str:
    return (
        f"{left} criteria: {leaked} judged inferable from the question, "
        f"{leaked - replaced} removed with no unflagged candidate to replace them"
    )


def _drop_reason(
    before: Sequence[Criterion], after: Sequence[Criterion], leaked: int, min_criteria: int
) -> str | None:
    lost = sorted({c.dimension for c in before} - {c.dimension for c in after})
    if lost:
        return (
            f"{leaked} of {len(before)} criteria inferable from the question; no {lost[0]} "
            "criterion left and no unflagged candidate to replace it"
        )
    if len(after) < min_criteria:
        return (
            f"{leaked} of {len(before)} criteria inferable from the question; {len(after)} left, "
            f"fewer than build.leakage.min_criteria ({min_criteria})"
        )
    return None
