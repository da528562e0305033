"""The ``calibrate`` section: ``papergym judge calibrate``."""

from __future__ import annotations

from pydantic import Field

from papergym.configbase import ConfigSection


class CalibrateSection(ConfigSection):
    """``papergym judge calibrate``: a judge or reviewer measured against human labels."""

    kappa_threshold: float = Field(0.6, ge=-1.0, le=1.0)
    """A criterion whose Cohen's kappa with the labels is below this is listed as one the judge
    cannot grade reliably (0.6: "substantial" agreement on Landis and Koch's scale)
    (--kappa-threshold)."""
    repeats: int = Field(3, ge=1)
    """LLM judge: times each answer is judged in the rubric's own order, for self-consistency
    (the offline judge is deterministic and is judged once) (--repeats)."""
    orderings: int = Field(3, ge=0)
    """Times each answer is judged again with the rubric's criteria in a shuffled order, for
    self-consistency over orderings (0: none) (--orderings)."""
    resamples: int = Field(2000, ge=10)
    """Bootstrap resamples of each kappa and correlation interval."""
    level: float = Field(0.95, gt=0.0, lt=1.0)
    """Confidence level of the intervals."""
    seed: int = 0
    """Seed of the orderings and of the bootstrap resampling."""
