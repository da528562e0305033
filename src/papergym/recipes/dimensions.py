"""The "both dimensions" gate of the merge by selection (SPEC §2 step 6).

The merged rubric must keep at least one criterion of each dimension the recipe asks for (the
papergym recipe: one ``method`` and one ``experiment``). When the top of the ranking misses a
dimension, one repair swaps in the best-ranked dropped candidate of that dimension for the
lowest-ranked selected criterion whose dimension is over-represented; when no such candidate
exists, the instance is dropped with the reason. A pure function, so the rule has its own tests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

GATE = "rubric:dimensions"
"""The gate's name, as a drop records it (the card's drop table counts it)."""


@dataclass(frozen=True)
class Coverage:
    """The outcome of the gate: the selection to keep, and what the repair did (if anything)."""

    selected: tuple[int, ...]
    repaired: str = ""


def cover_dimensions(
    selected: Sequence[int],
    dropped: Sequence[int],
    dimensions: Sequence[str],
    required: Sequence[str],
) -> Coverage | str:
    """``selected`` (candidate indices, best first) made to hold every ``required`` dimension.

    ``dropped`` are the candidates the merge left out, best first; ``dimensions[i]`` is
    candidate ``i``'s dimension. Returns the selection (repaired by at most one swap: the best
    dropped candidate of the missing dimension takes the last place, replacing the lowest-ranked
    criterion of a dimension held more than once), or the reason the gate drops the instance.
    """
    held = Counter(dimensions[i] for i in selected)
    missing = [d for d in required if not held[d]]
    if not missing:
        return Coverage(tuple(selected))
    if len(missing) > 1:
        return f"no {' and no '.join(missing)} criterion selected; one repair cannot add both"
    want = missing[0]
    spare = next((i for i in dropped if dimensions[i] == want), None)
    if spare is None:
        return f"no {want} criterion among the selected or the dropped candidates"
    out = next((i for i in reversed(selected) if held[dimensions[i]] > 1), None)
    if out is None:
        return f"no {want} criterion, and no selected criterion can give up its place"
    kept = [i for i in selected if i != out]
    return Coverage(
        (*kept, spare),
        repaired=f"swapped in a dropped {want} criterion for the last {dimensions[out]} one",
    )
