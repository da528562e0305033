"""Benchmark scoring: a foreign rubric dataset scored its own way (``eval.scoring: benchmark``), so
the number can sit beside the published ones.

PaperGym's reward adds 7 general criteria and mixes ``α·specific + (1−α)·general``; a benchmark
defines its score over its own criteria only. Each rule here is a pure function of one answer's
verdicts (the judge still decides each criterion); an answer with any undecided verdict is
unscored, never 0.

* **ResearchQA coverage** (Gao et al. 2025, ``compute_coverage.py`` of its repository): each
  rubric item is rated on five levels (Not at all, Barely, Moderately, Mostly, Completely =
  1..5), normalised ``(x − 1) / 4``; an answer's coverage is the mean over its items, the
  benchmark's the mean over answers. An answer whose ratings did not parse is left out.
* **HealthBench / RubricHub points**: ``Σ points of met criteria`` (a met pitfall's negative
  points subtract) over ``Σ positive points``, clipped to ``[0, 1]``.
* **ResearchPlanGen**: the share of the rubric's criteria met.

What cannot be exact is stated with the score (:func:`protocol_note`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from papergym.records import Verdict
from papergym.reward.scoring import specific_score

BenchmarkRule = Literal["papergym", "researchqa_coverage", "healthbench_points", "criteria_met"]
Scoring = Literal["papergym", "benchmark"]

RULES_BY_FORMAT: dict[str, BenchmarkRule] = {
    "researchqa": "researchqa_coverage",
    "rubrichub": "healthbench_points",
    "generic": "healthbench_points",  # unweighted criteria: the share met, exactly
    "researchplangen": "criteria_met",
    "instances": "papergym",  # PaperGym's own data: its protocol is the rubric reward
}


def rule_for(scoring: Scoring, data_format: str) -> BenchmarkRule:
    """The rule a dataset of ``data_format`` is scored by under ``scoring``."""
    if scoring == "papergym":
        return "papergym"
    return RULES_BY_FORMAT.get(data_format, "papergym")


def coverage(levels: Sequence[float | None]) -> float | None:
    """ResearchQA coverage of one answer: the mean of its items' normalised levels (each in
    ``[0, 1]``); ``None`` when there is no item or any item is unrated."""
    if not levels or any(level is None for level in levels):
        return None
    rated = [float(level) for level in levels if level is not None]
    if any(not 0.0 <= level <= 1.0 for level in rated):
        raise ValueError(f"coverage levels must be in [0, 1], got {rated}")
    return sum(rated) / len(rated)


def verdict_level(verdict: Verdict) -> float | None:
    """A binary verdict as a coverage level: met 1 (Completely), not met 0 (Not at all)."""
    return None if verdict.passed is None else float(verdict.passed)


def criteria_met(verdicts: Sequence[Verdict]) -> float | None:
    """The share of criteria met, weights ignored; ``None`` if empty or any is undecided."""
    if not verdicts or any(v.passed is None for v in verdicts):
        return None
    return sum(bool(v.passed) for v in verdicts) / len(verdicts)


def healthbench_points(verdicts: Sequence[Verdict]) -> float | None:
    """HealthBench's score of one answer: met points over the sum of positive points, clipped
    to ``[0, 1]``; ``None`` if any verdict is undecided or no criterion has positive points."""
    return specific_score(verdicts, "positive")


def benchmark_score(rule: BenchmarkRule, verdicts: Sequence[Verdict]) -> float | None:
    """One answer's score by ``rule`` from its verdicts on the benchmark's own criteria (the
    general criteria, if any were graded, are left out)."""
    own = [v for v in verdicts if v.kind == "specific"]
    if rule == "researchqa_coverage":
        return coverage([verdict_level(v) for v in own])
    if rule == "healthbench_points":
        return healthbench_points(own)
    if rule == "criteria_met":
        return criteria_met(own)
    raise ValueError(f"{rule!r} is not a benchmark rule")


_DEFINITIONS: dict[BenchmarkRule, str] = {
    "papergym": "PaperGym rubric reward: α·specific + (1−α)·general",
    "researchqa_coverage": (
        "ResearchQA coverage: mean over rubric items of the normalised rating (x−1)/4, then the "
        "mean over answers; no general criteria, no α mix"
    ),
    "healthbench_points": (
        "HealthBench points: met points (pitfalls subtract) over the sum of positive points, "
        "clipped to [0, 1]; no general criteria, no α mix"
    ),
    "criteria_met": "ResearchPlanGen: share of rubric criteria met; no general criteria, no α mix",
}

_DIFFERENCES: dict[BenchmarkRule, tuple[str, ...]] = {
    "papergym": (),
    "researchqa_coverage": (
        "our judge gives a binary verdict per item (met = Completely 1, not met = Not at all "
        "0) where ResearchQA's rates five levels, so partial coverage is rounded to 0 or 1",
        "judge model and prompt are ours (ResearchQA: gpt-4.1-mini, its own prompt, 8 items "
        "per call)",
    ),
    "healthbench_points": (
        "each answer is clipped to [0, 1] before the mean; HealthBench clips the mean over "
        "examples, so with pitfalls below 0 our mean can be higher",
        "judge model and prompt are ours (HealthBench: its own grader model and template)",
    ),
    "criteria_met": ("judge model and prompt are ours, not the dataset authors'",),
}


def protocol_note(rule: BenchmarkRule) -> tuple[str, tuple[str, ...]]:
    """The rule's definition and what differs from the published protocol."""
    return _DEFINITIONS[rule], _DIFFERENCES[rule]
