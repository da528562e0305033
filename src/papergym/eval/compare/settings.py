"""The ``compare`` section: ``papergym compare``."""

from __future__ import annotations

from pydantic import Field

from papergym.configbase import ConfigSection


class CompareSection(ConfigSection):
    """``papergym compare``: multi-way comparisons of eval folders' answers by LLM judges."""

    judges: list[str] = Field(default_factory=lambda: ["judge"], min_length=1)
    """Judges, each a role of ``llm`` (judge, reviewer, ...) or openai:MODEL@URL; several give
    their agreement, Fleiss' κ (--judge, --judges)."""
    reference: bool = False
    """Show the judge the reference answer, as one possible approach rather than the bar
    (off: the judge compares plans on their merits, not on their likeness to one paper)."""
    max_answer_chars: int = Field(16000, ge=0)
    """Answers longer than this are cut before they are shown, and the verdict says so (0: no
    limit)."""
    sample: int = Field(0, ge=0)
    """Which of each system's samples to compare when eval drew several per question."""
    resamples: int = Field(2000, ge=10)
    """Bootstrap resamples (over questions) of each interval."""
    seed: int = 0
    """Seed of the bootstrap resampling."""
