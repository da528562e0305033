"""Rubric verification: well-formed criteria, weights in range, a pitfall where the domain calls
for one, no two criteria alike, and coverage of the reference's key points.

Everything but coverage is a pure check, run first, so a rubric they drop costs no call:

* **well-formed** (:func:`malformed`): one checkable statement — not a question, not generic
  ("is accurate", "is well written"), neither a fragment nor a paragraph; malformed criteria
  leave the rubric;
* **weights** (:func:`weight_problem`): desired 1..``max_weight``, pitfalls
  ``-max_pitfall_weight``..-1, at least one desired criterion, at most ``max_criteria``;
* **diversity** (:func:`near_duplicates`): of two criteria whose MiniLM cosine exceeds
  ``similarity_threshold`` the later leaves the rubric;
* **pitfall**: a domain listed in ``pitfall_domains`` keeps at least one pitfall;
* **coverage** (LLM): the reference's key points, each covered or not by a desired criterion;
  below ``min_coverage`` the document drops.

A rubric left with fewer than ``min_criteria`` criteria drops too, naming what removed them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, Field

from papergym.audit.overlap import Embedder
from papergym.embed import cosine_matrix
from papergym.llm.client import LLMClient
from papergym.llm.types import Role
from papergym.recipes.ares.prompting import answer_or_reject, prompt
from papergym.recipes.ares.record import AresDraft, DraftCriterion, RubricCheck
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.steps import Reject

ROLE: Role = "judge"
MIN_CRITERION_WORDS = 3
MAX_CRITERION_WORDS = 60
_GENERIC = re.compile(
    r"^(the )?(answer|response)( is| should be)? (accurate|correct|clear|helpful|"
    r"well[- ]written|well[- ]organi[sz]ed|complete|detailed|concise|relevant|comprehensive)\.?$",
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-Z]")


def malformed(text: str) -> str | None:
    """Why ``text`` is not one checkable statement, or None."""
    words = len(text.split())
    if words < MIN_CRITERION_WORDS:
        return f"a fragment of {words} word(s)"
    if words > MAX_CRITERION_WORDS:
        return f"{words} words: more than one statement"
    if text.rstrip().endswith("?"):
        return "a question, not a statement"
    if _GENERIC.match(text.strip()):
        return "generic: true of any good answer"
    if len(_SENTENCE_BREAK.findall(text)) >= 2:
        return "three or more sentences: more than one statement"
    return None


def weight_problem(criteria: Sequence[DraftCriterion], section: AresSection) -> str | None:
    """Why the weights or counts are out of range, or None."""
    for c in criteria:
        if c.weight > section.max_weight or c.weight < -section.max_pitfall_weight:
            return f"weight_out_of_range: {c.weight} on {c.text[:80]!r}"
        if c.weight == 0:
            return f"weight_out_of_range: 0 on {c.text[:80]!r}"
    if len(criteria) > section.max_criteria:
        return f"too_many_criteria: {len(criteria)}, more than {section.max_criteria}"
    if not any(c.weight > 0 for c in criteria):
        return "no_desired_criterion: every criterion is a pitfall"
    return None


def near_duplicates(vectors: npt.NDArray[np.float32], threshold: float) -> list[int]:
    """Indices of rows whose cosine to an earlier kept row exceeds ``threshold``."""
    if len(vectors) == 0:
        return []
    similarity = cosine_matrix(vectors, vectors)
    matrix = vectors
    kept: list[int] = []
    dropped: list[int] = []
    for row in range(len(matrix)):
        if any(similarity[row, k] > threshold for k in kept):
            dropped.append(row)
        else:
            kept.append(row)
    return dropped


@dataclass(frozen=True)
class PureCheck:
    """The pure part's outcome: the criteria kept and what left, or the drop."""

    kept: tuple[DraftCriterion, ...]
    removed: tuple[str, ...]
    duplicates: tuple[str, ...]


def pure_checks(
    criteria: Sequence[DraftCriterion], domain: str | None, section: AresSection, embedder: Embedder
) -> PureCheck | Reject:
    """Every check but coverage, in order; the drop names the first that fails."""
    problem = weight_problem(criteria, section)
    if problem is not None:
        return Reject(problem)
    removed = [f"{why}: {c.text!r}" for c in criteria if (why := malformed(c.text))]
    formed = [c for c in criteria if malformed(c.text) is None]
    dropped = set(near_duplicates(embedder([c.text for c in formed]), section.similarity_threshold))
    duplicates = tuple(formed[i].text for i in sorted(dropped))
    kept = tuple(c for i, c in enumerate(formed) if i not in dropped)
    if len(kept) < section.min_criteria:
        return Reject(
            f"too_few_criteria: {len(kept)} left of {len(criteria)} ({len(removed)} malformed, "
            f"{len(duplicates)} near-duplicates), fewer than {section.min_criteria}"
        )
    if domain in section.pitfall_domains and not any(c.pitfall for c in kept):
        return Reject(f"no_pitfall: the {domain} domain requires at least one pitfall")
    if not any(c.weight > 0 for c in kept):
        return Reject("no_desired_criterion: only pitfalls are left")
    return PureCheck(kept, tuple(removed), duplicates)


class KeyPoint(BaseModel):
    point: str = Field(description="One key point of the reference answer.")
    covered: bool = Field(description="A listed criterion checks for this point.")


class CoverageOut(BaseModel):
    key_points: list[KeyPoint] = Field(min_length=1, max_length=15)


@dataclass(frozen=True)
class RubricVerifier:
    """The ``verify_rubric`` step."""

    client: LLMClient
    section: AresSection
    embedder: Embedder

    async def run(self, draft: AresDraft) -> AresDraft | Reject:
        qa = draft.need_qa()
        checked = await asyncio.to_thread(
            pure_checks, qa.criteria, draft.domain, self.section, self.embedder
        )
        if isinstance(checked, Reject):
            return checked
        desired = [c.text for c in checked.kept if c.weight > 0]
        messages = prompt(
            "coverage",
            reference=qa.reference,
            criteria="\n".join(f"{i}. {t}" for i, t in enumerate(desired, start=1)),
        )

        answer = await answer_or_reject(
            self.client, ROLE, messages, CoverageOut, stage="ares:coverage"
        )
        if isinstance(answer, Reject):
            return answer
        points = answer.key_points
        coverage = sum(p.covered for p in points) / len(points)
        missing = tuple(" ".join(p.point.split()) for p in points if not p.covered)
        if coverage < self.section.min_coverage:
            shown = "; ".join(m[:80] for m in missing[:3])
            return Reject(
                f"low_coverage: {coverage:.2f} of {len(points)} key points covered, below "
                f"{self.section.min_coverage} (missing: {shown})"
            )
        check = RubricCheck(
            coverage=round(coverage, 4),
            key_points=tuple(" ".join(p.point.split()) for p in points),
            missing=missing,
            duplicates=checked.duplicates,
            removed=checked.removed,
        )
        return draft.model_copy(
            update={"qa": qa.model_copy(update={"criteria": checked.kept}), "rubric_check": check}
        )
