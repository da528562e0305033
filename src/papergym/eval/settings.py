"""The ``eval`` section: ``papergym eval``, and the evaluations inside ``papergym train``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from papergym.configbase import ConfigSection


class EvalSection(ConfigSection):
    """``papergym eval``: answers from each system, scored by the rubric reward."""

    split: Literal["auto", "test", "train", "all"] = "auto"
    """Questions evaluated: test (held out by data.test_fraction, as training did), train, all;
    auto: test when data.test_fraction is set, else all (--split)."""
    scoring: Literal["papergym", "benchmark"] = "papergym"
    """How answers are scored: papergym (the rubric reward: the data's criteria plus our general
    criteria, α-mixed) or benchmark (a foreign dataset scored its own way, comparable with
    published numbers: ResearchQA coverage, HealthBench/RubricHub points, ResearchPlanGen share
    met; no general criteria, no α). PaperGym instances are scored by the reward either way."""
    samples: int = Field(1, ge=1)
    """Answers generated per question and system (-n)."""
    temperature: float = Field(0.7, ge=0.0)
    """Sampling temperature of the answers (0: greedy)."""
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    """Nucleus sampling of the answers (null: off)."""
    max_tokens: int = Field(2048, ge=1)
    """Longest answer, in tokens (the paper's completion budget)."""
    max_concurrency: int = Field(64, ge=1)
    """Requests in flight per endpoint system."""
    limit: int | None = Field(None, ge=1)
    """Evaluate at most this many questions (null: all)."""
    resamples: int = Field(2000, ge=10)
    """Bootstrap resamples of each interval."""
    level: float = Field(0.95, gt=0.0, lt=1.0)
    """Confidence level of the intervals."""
    seed: int = 0
    """Seed of the bootstrap resampling and of sampled answers, where a backend takes one."""
    steps: int | None = Field(None, ge=0)
    """papergym train: every this many optimiser steps, answer the held-out questions
    (data.test_fraction) greedily with the policy in memory, score them with the rubric
    reward and append eval/* to the stage's metrics.jsonl (0 or null: off)."""
    step_questions: int | None = Field(None, ge=1)
    """papergym train: held-out questions answered at each eval.steps (null: eval.limit, else
    all)."""
    final: bool = True
    """papergym train: end with an eval of the base model and each stage's final model on the
    held-out split, in RUN/eval/ (skipped when there is no held-out split)."""
