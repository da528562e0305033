"""The one typed configuration of every ``papergym`` command: :class:`PaperGymConfig`.

It only composes the sections, each of which lives beside the package that uses it and is
handed to that package as an argument: ``llm`` (:mod:`papergym.llm.config`), ``build``
(:mod:`papergym.recipes.settings`), ``ares`` (:mod:`papergym.recipes.ares.settings`), ``audit``,
``reward`` and ``serve`` (:mod:`papergym.reward.settings`), ``eval`` and ``compare``,
``review``, ``write``, ``fetch`` (:mod:`papergym.fetch.settings`), and the training sections at the top level (``model``, ``lora``,
``data``, ``opsd``, ``grpo``, ``sft``, ``cycle``, ``watch``, ``stages``: :mod:`papergym.train.settings`),
so a training file reads as before. Every field carries a description; ``papergym config
reference`` prints them as one table (docs/config.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from papergym.audit.settings import AuditSection
from papergym.calibrate.settings import CalibrateSection
from papergym.configbase import ConfigSection
from papergym.eval.compare.settings import CompareSection
from papergym.eval.settings import EvalSection
from papergym.fetch.settings import FetchSection
from papergym.llm.config import LLMConfig
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.settings import BuildSection
from papergym.redact import redact_data
from papergym.review.settings import ReviewSection
from papergym.reward.settings import RewardSection, ServeSection
from papergym.train.settings import (
    DEFAULT_STAGES,
    CycleSettings,
    DataSettings,
    GRPOSettings,
    LoraSettings,
    ModelSettings,
    OPSDSettings,
    SFTSettings,
    StageName,
    WatchSettings,
)
from papergym.write.settings import WriteSection


class PaperGymConfig(ConfigSection):
    """Everything a ``papergym`` command can be told, in one frozen record."""

    name: str = "papergym"
    """A name for the run."""
    output_dir: Path = Path("runs/papergym")
    """Training run folder (-o); running again resumes from the last checkpoint."""
    seed: int = 0
    """Training seed."""
    stages: list[StageName] = Field(default_factory=lambda: list(DEFAULT_STAGES))
    """Stages ``papergym train pipeline`` runs, in order (ablations: [grpo, opsd], [sft])."""
    llm: LLMConfig = LLMConfig()
    """LLM endpoints per role (a mapping as in an LLM YAML file, or the path of one); empty:
    every command runs offline."""
    build: BuildSection = BuildSection()
    """Building instances from papers."""
    audit: AuditSection = AuditSection()
    """The leakage audit."""
    reward: RewardSection = RewardSection()
    """The rubric reward."""
    serve: ServeSection = ServeSection()
    """The reward server."""
    eval: EvalSection = EvalSection()
    """Evaluation (papergym eval)."""
    compare: CompareSection = CompareSection()
    """Multi-way comparisons (papergym compare)."""
    review: ReviewSection = ReviewSection()
    """Simulated peer review (papergym review)."""
    calibrate: CalibrateSection = CalibrateSection()
    """Judges and reviewers against human labels (papergym judge calibrate)."""
    write: WriteSection = WriteSection()
    """Writing papers from a bibliography (papergym write, papergym write prepare)."""
    ares: AresSection = AresSection()
    """ARES: weighted-rubric instances from document corpora (papergym build --recipe ares)."""
    fetch: FetchSection = FetchSection()
    """Downloading arXiv sources and their metadata (papergym fetch)."""
    model: ModelSettings = ModelSettings()
    """Training: the policy model."""
    lora: LoraSettings = LoraSettings()
    """Training: LoRA adapters."""
    data: DataSettings = DataSettings()
    """Training: the data."""
    opsd: OPSDSettings = OPSDSettings()
    """Training: OPSD (stage 1)."""
    grpo: GRPOSettings = GRPOSettings()
    """Training: GRPO (stage 2)."""
    sft: SFTSettings = SFTSettings()
    """Training: the SFT baseline."""
    cycle: CycleSettings = CycleSettings()
    """Training: CycleResearcher's iterative SimPO + NLL against a reviewer (train cycle)."""
    watch: WatchSettings = WatchSettings()
    """Training: a second judge of the held-out evaluation and the divergence alarm."""

    # a field validator, not a model one: its errors carry the key (``stages``), so an override
    # that set it is named
    @field_validator("stages")
    @classmethod
    def _check_stages(cls, stages: list[StageName]) -> list[StageName]:
        if not stages:
            raise ValueError("stages must name at least one stage")
        if len(set(stages)) != len(stages):
            raise ValueError(f"stages must not repeat a stage: {stages}")
        return stages

    def resolved(self) -> dict[str, Any]:
        """The config as plain YAML-able data (paths as strings), secrets masked."""
        data: dict[str, Any] = redact_data(self.model_dump(mode="json"))
        return data
