"""The records and pure rules of ``papergym train cycle``: which inputs a round samples, which
papers become a preference pair, and what a round's metrics are.

Everything here is deterministic and free of torch, so the rules have their own fast tests.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from papergym.eval.stats import spearman
from papergym.records import Record

SkipReason = Literal["unscored", "tie"]


class CycleInput(Record):
    """One writing input: what the policy is asked (a bibliography, a topic...)."""

    id: str
    prompt: str
    system: str | None = None
    """The writing instructions (a system message); None: ``data.system_prompt``."""
    keys: tuple[str, ...] = ()
    """The citation keys the input offers."""


class Paper(Record):
    """One generated paper and its reviews: the reward's reviewer and the watch."""

    input_id: str
    sample: int
    text: str
    tokens: int
    words: int
    score: float | None
    """The reward: the reviewer's mean rating scaled to [0, 1]; None when unscored."""
    rating: float | None
    reason: str | None = None
    """Why the reviewer could not score it, or why some of its reviews are missing."""
    watch_score: float | None = None
    """The second reviewer's score in [0, 1] (None: unscored or no watch)."""


class Pair(Record):
    """A preference pair: the best- and the worst-reviewed paper of one input."""

    input_id: str
    prompt: str
    system: str | None = None
    chosen: str
    rejected: str
    chosen_score: float
    rejected_score: float
    chosen_watch: float | None = None
    rejected_watch: float | None = None


class Skip(Record):
    """An input that gave no pair, and why: fewer than two scored papers, or all tied."""

    input_id: str
    reason: SkipReason
    scored: int


def round_inputs(ids: Sequence[str], rounds: int, fraction: float, seed: int) -> list[list[str]]:
    """The inputs each round samples: ``ceil(fraction × n)`` per round, fresh ones first.

    A round draws from the inputs no earlier round used; when too few are left it takes them
    all and fills up from the used ones (never repeating within the round), and the fresh pool
    starts over. Seeded, and computed for every round at once, so a resumed run samples what
    the killed one would have.
    """
    if not ids:
        return []
    size = max(1, math.ceil(fraction * len(ids)))
    rng = random.Random(f"cycle-inputs-{seed}")
    fresh = list(ids)
    chosen: list[list[str]] = []
    for _ in range(rounds):
        rng.shuffle(fresh)
        picked = fresh[:size]
        fresh = fresh[size:]
        if len(picked) < size:
            rest = [i for i in ids if i not in picked]
            rng.shuffle(rest)
            filler = rest[: size - len(picked)]
            picked += filler
            fresh = [i for i in rest if i not in filler]
        chosen.append(sorted(picked, key=list(ids).index))
    return chosen


def select_pair(item: CycleInput, papers: Sequence[Paper]) -> Pair | Skip:
    """Chosen = the highest score, rejected = the lowest, among one input's scored papers.

    Unscored papers take no part (unscored is not zero). Fewer than two scored papers, or all
    scored papers tied, give a :class:`Skip`. Among equal best (or worst) scores the earlier
    sample wins, so the choice is deterministic.
    """
    input_id = item.id
    scored = [p for p in papers if p.score is not None]
    if len(scored) < 2:
        return Skip(input_id=input_id, reason="unscored", scored=len(scored))
    best = max(scored, key=lambda p: (p.score, -p.sample))
    worst = min(scored, key=lambda p: (p.score, p.sample))
    if best.score == worst.score:
        return Skip(input_id=input_id, reason="tie", scored=len(scored))
    assert best.score is not None and worst.score is not None
    return Pair(
        input_id=input_id,
        prompt=item.prompt,
        system=item.system,
        chosen=best.text,
        rejected=worst.text,
        chosen_score=best.score,
        rejected_score=worst.score,
        chosen_watch=best.watch_score,
        rejected_watch=worst.watch_score,
    )


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def watch_agreement(papers: Sequence[Paper], pairs: Sequence[Pair]) -> dict[str, Any]:
    """How far the watch agrees with the reward's reviewer: Spearman's ρ over the papers both
    scored, and over the pairs the share where the watch also prefers the chosen paper (ties
    and pairs the watch could not score counted apart, never as disagreement)."""
    both = [p for p in papers if p.score is not None and p.watch_score is not None]
    rho = (
        spearman([p.score for p in both], [p.watch_score for p in both])  # type: ignore[misc]
        if len(both) >= 3
        else None
    )
    judged = [
        (p.chosen_watch, p.rejected_watch)
        for p in pairs
        if p.chosen_watch is not None and p.rejected_watch is not None
    ]
    agree = sum(1 for c, r in judged if c > r)
    ties = sum(1 for c, r in judged if c == r)
    decided = len(judged) - ties
    return {
        "watch_papers": len(both),
        "watch_spearman": rho,
        "watch_spearman_why": None if rho is not None else _no_rho_why(papers, both),
        "watch_pairs": len(judged),
        "watch_pair_ties": ties,
        "watch_pair_agreement": agree / decided if decided else None,
        "watch_agreement_why": None if decided else _no_agreement_why(pairs, judged, ties),
        "watch_mean_score": _mean([p.watch_score for p in both]),  # type: ignore[misc]
    }


def _no_rho_why(papers: Sequence[Paper], both: Sequence[Paper]) -> str:
    """Why Spearman's ρ of the reward and the watch is undefined this round."""
    if not any(p.watch_score is not None for p in papers):
        return "the watch scored no paper"
    if len(both) < 3:
        return f"{len(both)} paper(s) scored by both reviewers, 3 needed"
    for name, values in (
        ("the watch", {p.watch_score for p in both}),
        ("the reward", {p.score for p in both}),
    ):
        if len(values) == 1:
            (value,) = values
            return f"{name} gave all {len(both)} papers the same score ({value:.3f})"
    return "undefined"


def _no_agreement_why(
    pairs: Sequence[Pair], judged: Sequence[tuple[float | None, float | None]], ties: int
) -> str:
    """Why no pair can tell whether the watch agrees with the reward this round."""
    if not pairs:
        return "no pair this round"
    if not judged:
        return f"the watch could not score both papers of any of the {len(pairs)} pair(s)"
    return f"all {ties} pair(s) tied on the watch"


def round_metrics(
    papers: Sequence[Paper], pairs: Sequence[Pair], skips: Sequence[Skip]
) -> dict[str, Any]:
    """A round's numbers: scores of chosen and rejected, margin, lengths, skips, the watch."""
    scored = [p.score for p in papers if p.score is not None]
    counts = Counter(s.reason for s in skips)
    by_text = {p.text: p.words for p in papers}
    return {
        "inputs": len({p.input_id for p in papers}),
        "papers": len(papers),
        "unscored_papers": len(papers) - len(scored),
        "unscored_reasons": dict(Counter(p.reason or "" for p in papers if p.score is None)),
        "pairs": len(pairs),
        "skipped": len(skips),
        "skipped_tie": counts.get("tie", 0),
        "skipped_unscored": counts.get("unscored", 0),
        "mean_score": _mean(scored),
        "chosen_score": _mean([p.chosen_score for p in pairs]),
        "rejected_score": _mean([p.rejected_score for p in pairs]),
        "margin": _mean([p.chosen_score - p.rejected_score for p in pairs]),
        "words": _mean([float(p.words) for p in papers]),
        "chosen_words": _mean([float(by_text[p.chosen]) for p in pairs]),
        "rejected_words": _mean([float(by_text[p.rejected]) for p in pairs]),
        **watch_agreement(papers, pairs),
    }
