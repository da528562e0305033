"""The record a paper recipe passes from step to step, and the candidate criteria it carries.

Each field is filled by one step and saved as ``papers/<id>/<field>.json`` (see
:mod:`papergym.recipes.steps`): ``paper.json``, ``stages.json`` and ``instance.json`` keep the
names and contents older builds wrote, so their folders resume.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from papergym.records import Instance, LeakageVerdict, Paper, Rubric, Stages

Origin = Literal["answer", "question"]


class Candidate(BaseModel):
    """A criterion an LLM proposed, before the filter and the merge."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    dimension: Literal["method", "experiment"]
    origin: Origin


class PaperDraft(BaseModel):
    """One paper on its way to an instance: what every step so far has produced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    paper: Paper
    stages: Stages | None = None
    question: str | None = None
    reference: str | None = None
    candidates: tuple[Candidate, ...] | None = None
    kept: tuple[Candidate, ...] | None = None
    removed: tuple[str, ...] | None = None
    rubric: Rubric | None = None
    # Per specific criterion, the leakage judge's verdicts (LLM builds with the judge on).
    leakage: tuple[tuple[LeakageVerdict, ...], ...] | None = None
    # Per reserve candidate (:func:`papergym.recipes.pipeline.reserve`), the same judge call's
    # verdicts: what build.leakage.action replace may put in a leaked criterion's place.
    reserve_leakage: tuple[tuple[LeakageVerdict, ...], ...] | None = None
    instance: Instance | None = None

    def need_stages(self) -> Stages:
        """The stages (a step list that asks for them before the stages step is wrong)."""
        if self.stages is None:
            raise RuntimeError("step order: no stages yet")
        return self.stages
