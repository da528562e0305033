"""Per-criterion verdicts of every GRPO group: ``STAGE/rollouts.jsonl``.

``metrics.jsonl`` keeps a step's means; which criteria moved within a group (and so gave the
policy gradient something to use) is lost there. One line per group keeps it, compactly: the
rubric's specific criterion ids once, then one character per (answer, criterion) — ``1`` met,
``0`` not met, ``-`` unscored (unscored is not zero) — so 8 answers × 10 criteria cost about
100 bytes. ``papergym audit --usefulness RUN`` reads it (:mod:`papergym.audit.usefulness_data`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import Field

from papergym.jsonl import append_jsonl, write_text_atomic
from papergym.records import Record, Score, Verdict

ROLLOUTS_FILE = "rollouts.jsonl"

MET, NOT_MET, UNSCORED = "1", "0", "-"


class RolloutGroup(Record):
    """The specific-criterion verdicts of one GRPO group: a question's answers in one step."""

    step: int = Field(ge=0, description="Optimiser steps finished when the group was scored.")
    instance_id: str
    criteria: tuple[str, ...] = Field(description="Specific criterion ids, in rubric order.")
    weights: tuple[float, ...] = Field(description="Their signed weights, in the same order.")
    rewards: tuple[float | None, ...] = Field(description="Each answer's reward; None unscored.")
    verdicts: tuple[str, ...] = Field(
        description="One string per answer, one character per criterion: 1 met, 0 not met, "
        "- unscored."
    )


def verdict_char(passed: bool | None) -> str:
    """The character of one verdict in :attr:`RolloutGroup.verdicts`."""
    return UNSCORED if passed is None else MET if passed else NOT_MET


def char_verdict(char: str) -> bool | None:
    """The verdict a character of :attr:`RolloutGroup.verdicts` stands for."""
    return None if char == UNSCORED else char == MET


def rollout_group(step: int, scores: Sequence[Score]) -> RolloutGroup:
    """The record of one group's scores (all for the same question). An answer without a
    verdict on a criterion (an unscored answer has none) gets ``-`` for it."""
    specific: list[Verdict] = next(
        ([v for v in s.verdicts if v.kind == "specific"] for s in scores if s.verdicts), []
    )
    criteria = tuple(v.criterion_id for v in specific)
    rows = []
    for score in scores:
        passed = {v.criterion_id: v.passed for v in score.verdicts if v.kind == "specific"}
        rows.append("".join(verdict_char(passed.get(c)) for c in criteria))
    return RolloutGroup(
        step=step,
        instance_id=scores[0].instance_id if scores else "",
        criteria=criteria,
        weights=tuple(v.weight for v in specific),
        rewards=tuple(s.value for s in scores),
        verdicts=tuple(rows),
    )


class RolloutLog:
    """Append-only ``rollouts.jsonl`` of a GRPO stage."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, step: int, scores: Sequence[Score], group_size: int) -> None:
        """One line per consecutive run of ``group_size`` scores (TRL's groups)."""
        for start in range(0, len(scores), group_size):
            append_jsonl(self.path, rollout_group(step, scores[start : start + group_size]))

    def trim(self, step: int) -> None:
        """Drop the groups scored at ``step`` or later: a stage resumed from the checkpoint of
        ``step`` samples and scores them again, so each appears once."""
        if not self.path.is_file():
            return
        lines = [line for line in self.path.read_text(encoding="utf-8").splitlines() if line]
        kept = [line for line in lines if json.loads(line)["step"] < step]
        if len(kept) != len(lines):
            write_text_atomic(self.path, "".join(line + "\n" for line in kept))
