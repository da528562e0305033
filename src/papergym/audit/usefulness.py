"""What each rubric criterion contributes, measured on judged answers (``audit --usefulness``).

A criterion is useful to training when its verdict separates answers: GRPO's advantage is an
answer's reward minus its group's mean, so a criterion whose verdict is the same for every
answer in a group adds nothing to that group's gradient. The statistics here are pure functions
of the verdicts, grouped as the trainer groups them (a GRPO group: one question's answers in
one step; in an eval folder, every system's answers to one question):

- pass rate, and whether it was always or never met;
- spread: the share of groups (with two or more scored verdicts) in which the verdict varied;
- correlation (Pearson over answers, i.e. point-biserial) of the criterion's credit with the
  rest of the rubric's weighted score; strongly negative = it pulls against the rest;
- near-duplicates: token Jaccard of content-word stems with the higher-ranked criteria of the
  rubric (cheap and deterministic; an embedder would also catch paraphrases, and is not used);
- leakage: from the leakage audit's verdicts on the criterion, or None ("not measured").

Unscored verdicts are left out of every denominator (unscored is not zero).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from papergym.audit.overlap import content_stems
from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl
from papergym.records import Instance, LeakageVerdict, Record

Recommendation = Literal["keep", "reweight", "drop"]
Verdicts = Mapping[str, bool | None]
"""One answer's specific-criterion verdicts: criterion id → met (None: unscored)."""


@dataclass(frozen=True)
class AnswerGroup:
    """The answers a trainer compares with each other: one question's, judged together."""

    instance_id: str
    label: str
    """Where the group comes from: 'step 3', 'eval'."""
    answers: tuple[Verdicts, ...] = ()


@dataclass(frozen=True)
class RubricCriterion:
    """A criterion as the statistics need it: id, text, signed weight, rubric position."""

    instance_id: str
    criterion_id: str
    text: str
    weight: float
    position: int
    """0-based place in the rubric, most important first."""
    leakage: tuple[LeakageVerdict, ...] = ()


class CriterionUsefulness(Record):
    """One criterion's statistics and the rule's recommendation."""

    instance_id: str
    criterion_id: str
    text: str
    weight: float
    scored: int = Field(description="Answers with a met/not-met verdict on it.")
    unscored: int
    met: int
    pass_rate: float | None
    constant: Literal["always", "never"] | None = Field(
        description="Always or never met over its scored answers (None: it varied, or none)."
    )
    groups: int = Field(description="Groups with two or more scored verdicts on it.")
    varied_groups: int
    spread: float | None = Field(description="varied_groups / groups; None without groups.")
    correlation: float | None = Field(
        description="Pearson r of its credit with the rest's weighted score; None with fewer "
        "than 3 answers or a constant variable."
    )
    duplicate_of: str | None = Field(
        description="The most similar higher-ranked criterion of the same rubric (None for the "
        "first): of a near-duplicate pair, the later one is the copy."
    )
    similarity: float | None = Field(description="Its token Jaccard similarity.")
    leaked: bool | None = Field(description="None: leakage not measured for it.")
    recommendation: Recommendation = "keep"
    new_weight: float
    reasons: tuple[str, ...] = ()


def credit(passed: bool, weight: float) -> float:
    """1 when the verdict earns the criterion's weight: met for a desired property, not met
    for a pitfall (weight < 0)."""
    return float(passed) if weight > 0 else float(not passed)


def rest_score(answer: Verdicts, weights: Mapping[str, float], left_out: str) -> float | None:
    """The weighted credit of the answer's other scored criteria, in [0, 1]; None if none."""
    scored = [(c, p) for c, p in answer.items() if c != left_out and p is not None and c in weights]
    total = sum(abs(weights[c]) for c, _ in scored)
    if not scored or total == 0:
        return None
    return sum(abs(weights[c]) * credit(bool(p), weights[c]) for c, p in scored) / total


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None with fewer than 3 points or a constant variable.

    >>> pearson([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8]) > 0.9
    True
    """
    if len(xs) < 3:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def jaccard(a: str, b: str) -> float:
    """Token Jaccard similarity of two texts' content-word stems (0 when both have none)."""
    left, right = content_stems(a), content_stems(b)
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def leaked(verdicts: Sequence[LeakageVerdict]) -> bool | None:
    """True when any method found the criterion leaked, False when some scored it and none
    did, None when no verdict was scored (not measured)."""
    scored = [v.leaked for v in verdicts if v.leaked is not None]
    return any(scored) if scored else None


@dataclass(frozen=True)
class _Counts:
    scored: int
    unscored: int
    met: int
    groups: int
    varied: int


def _counts(criterion: RubricCriterion, groups: Sequence[AnswerGroup]) -> _Counts:
    scored = unscored = met = with_pairs = varied = 0
    for group in groups:
        seen = [a.get(criterion.criterion_id) for a in group.answers]
        present = [v for v in seen if v is not None]
        unscored += sum(1 for a in group.answers if criterion.criterion_id in a) - len(present)
        scored += len(present)
        met += sum(present)
        if len(present) >= 2:
            with_pairs += 1
            varied += len(set(present)) > 1
    return _Counts(scored, unscored, met, with_pairs, varied)


def _correlation(
    criterion: RubricCriterion, groups: Sequence[AnswerGroup], weights: Mapping[str, float]
) -> float | None:
    xs: list[float] = []
    ys: list[float] = []
    for group in groups:
        for answer in group.answers:
            passed = answer.get(criterion.criterion_id)
            rest = rest_score(answer, weights, criterion.criterion_id)
            if passed is not None and rest is not None:
                xs.append(credit(passed, criterion.weight))
                ys.append(rest)
    return pearson(xs, ys)


def _nearest(criterion: RubricCriterion, rubric: Sequence[RubricCriterion]) -> tuple[str, float]:
    others = [
        (jaccard(criterion.text, o.text), o.criterion_id)
        for o in rubric
        if o.position < criterion.position
    ]
    if not others:
        return "", 0.0
    similarity, other = max(others, key=lambda pair: pair[0])
    return other, similarity


def criterion_usefulness(
    criterion: RubricCriterion, rubric: Sequence[RubricCriterion], groups: Sequence[AnswerGroup]
) -> CriterionUsefulness:
    """The statistics of one criterion of ``rubric`` over its instance's ``groups`` (the
    recommendation is left at keep: :func:`papergym.audit.usefulness_rule.recommend` sets it)."""
    counts = _counts(criterion, groups)
    weights = {c.criterion_id: c.weight for c in rubric}
    constant: Literal["always", "never"] | None = None
    if counts.scored and counts.met in (0, counts.scored):
        constant = "always" if counts.met else "never"
    other, similarity = _nearest(criterion, rubric)
    return CriterionUsefulness(
        instance_id=criterion.instance_id,
        criterion_id=criterion.criterion_id,
        text=criterion.text,
        weight=criterion.weight,
        scored=counts.scored,
        unscored=counts.unscored,
        met=counts.met,
        pass_rate=counts.met / counts.scored if counts.scored else None,
        constant=constant,
        groups=counts.groups,
        varied_groups=counts.varied,
        spread=counts.varied / counts.groups if counts.groups else None,
        correlation=_correlation(criterion, groups, weights),
        duplicate_of=other or None,
        similarity=round(similarity, 4) if other else None,
        leaked=leaked(criterion.leakage),
        new_weight=criterion.weight,
    )


@dataclass(frozen=True)
class UsefulnessInput:
    """What a folder of judged answers holds for the usefulness audit."""

    source: Path
    kind: Literal["eval", "run"]
    groups: tuple[AnswerGroup, ...]
    criteria: tuple[RubricCriterion, ...]
    """Every specific criterion of the judged instances, rubric by rubric in order."""
    instances: tuple[Instance, ...] | None = None
    """The instances the rubric file is written from; None when they could not be found."""
    instances_path: Path | None = None
    notes: tuple[str, ...] = ()
    """What the reader had to work around (a fallback, a missing file), for the report."""


def rubric_criteria(instances: Sequence[Instance]) -> list[RubricCriterion]:
    """The specific criteria of ``instances`` as the statistics need them, with their leakage
    verdicts (an instances file written by ``papergym audit -o`` carries them)."""
    return [
        RubricCriterion(
            instance_id=instance.id,
            criterion_id=criterion.id,
            text=criterion.text,
            weight=criterion.weight,
            position=position,
            leakage=criterion.leakage,
        )
        for instance in instances
        for position, criterion in enumerate(instance.rubric.specific)
    ]


def measure_all(input: UsefulnessInput) -> list[CriterionUsefulness]:
    """The statistics of every criterion whose instance has judged answers in ``input``."""
    groups: dict[str, list[AnswerGroup]] = defaultdict(list)
    for group in input.groups:
        groups[group.instance_id].append(group)
    rubrics: dict[str, list[RubricCriterion]] = defaultdict(list)
    for criterion in input.criteria:
        rubrics[criterion.instance_id].append(criterion)
    return [
        criterion_usefulness(
            criterion, rubrics[criterion.instance_id], groups[criterion.instance_id]
        )
        for criterion in input.criteria
        if groups.get(criterion.instance_id)
    ]


def find_instances(path: Path | None) -> tuple[tuple[Instance, ...] | None, Path | None, str]:
    """The instances at ``path`` (a build folder's ``instances.jsonl``, or the file itself),
    with the file read, or None and why not (a note for the report, not an error: the
    statistics do not need them, only the rubric file does)."""
    if path is None:
        return None, None, "the instances are not recorded; pass --instances"
    file = path / "instances.jsonl" if path.is_dir() else path
    if not file.is_file():
        return None, None, f"{file}: not found; pass --instances"
    try:
        return tuple(read_jsonl(file, Instance)), file, ""
    except (ValueError, BadInputError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else "unreadable"
        return None, None, f"{file}: not PaperGym instances ({first}); pass --instances"
