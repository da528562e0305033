"""The ``write`` section: ``papergym write`` (a paper from a bibliography) and ``papergym write
prepare`` (training data from real papers)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from papergym.configbase import ConfigSection


class WriteSection(ConfigSection):
    """``papergym write`` (a paper from a bibliography) and ``papergym write prepare`` (training
    data from real papers)."""

    mode: Literal["outline_then_body", "alternating"] = "outline_then_body"
    """outline_then_body: one outline of the whole paper, then each section's body.
    alternating (CycleResearcher's outline and body alternating, SPEC §5): after the paper's
    outline, each section is outlined again, seeing the bodies written so far, then written;
    one more call per section. The default is outline_then_body: it costs a call less per
    section, and papers and tests written so far were made with it."""
    temperature: float = Field(0.4, ge=0.0)
    """Sampling temperature of the outline and of each section (CycleResearcher samples at 0.4)."""
    max_tokens: int = Field(4096, ge=256)
    """Longest answer of one outline or section call, in tokens."""
    min_sections: int = Field(4, ge=2)
    """Fewest sections an outline may have (checked; the model is asked to repair)."""
    max_sections: int = Field(10, ge=2)
    """Most sections an outline may have."""
    min_references: int = Field(3, ge=0)
    """An outline must build on at least this many different references; ``papergym write``
    refuses a .bib with fewer usable entries (a key and a title)."""
    section_words: int = Field(500, ge=50)
    """Words asked for per section."""
    abstract_words: int = Field(180, ge=30)
    """Words asked for in the abstract."""
    max_references: int = Field(100, ge=1)
    """References offered in one prompt (a .bib's first ones; the metadata says how many)."""
    reference_abstract_words: int = Field(80, ge=0)
    """Words of each reference's abstract shown in a prompt (0: titles only)."""
    paper_concurrency: int = Field(4, ge=1)
    """Papers written at once (each paper's sections are written in order)."""
    plan_only: bool = False
    """Write experiments and results as an experiment plan without numbers (checked), instead of
    simulated numbers marked as such (--plan-only)."""
    min_paper_references: int = Field(5, ge=1)
    """write prepare: a paper citing fewer usable references is dropped."""
    leakage_ngram: int = Field(8, ge=3)
    """write prepare: no run of this many words of the paper's own text may appear in its
    prompt."""
    test_fraction: float = Field(0.0, ge=0.0, lt=1.0)
    """write prepare: share of papers marked split "test" (by a hash of the paper's id)."""

    @model_validator(mode="after")
    def _sections_range(self) -> WriteSection:
        if self.min_sections > self.max_sections:
            raise ValueError("write.min_sections is larger than write.max_sections")
        return self
