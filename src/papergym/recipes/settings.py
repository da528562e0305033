"""The ``build`` section: how ``papergym build`` turns papers into instances."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from papergym.configbase import ConfigSection
from papergym.recipes.mix import check_mix, parse_mix

LeakageAction = Literal["keep", "remove", "replace"]
"""What a build does with a criterion the leakage judge finds inferable from the question."""


class LeakageSection(ConfigSection):
    """``build.leakage``: what the LLM build does with the leakage judge's verdicts (SPEC §2
    steps 8-9; :func:`papergym.recipes.leakage_action.act_on_leakage`)."""

    action: LeakageAction = "replace"
    """keep: record the verdicts only; remove: take leaked criteria out of the rubric; replace:
    put in their place the first unused candidate of the merge that the judge did not flag
    (judged in the same call), removing when there is none. Default replace: SPEC §2 step 8
    repairs such criteria, and replacing keeps the rubric at 10 criteria where removal would
    shrink it. Needs the leakage judge (build.leakage_judge)."""
    min_criteria: int = Field(5, ge=1)
    """Fewest specific criteria an instance may keep after the action; with fewer it is
    dropped, with the reason. A rubric of a handful of criteria grades too coarsely to train
    on; 5 is half the paper's 10."""


class BuildSection(ConfigSection):
    """``papergym build``: papers → instances."""

    recipe: Literal["papergym", "innov", "design", "ares"] = "papergym"
    """papergym: plan from goal+background, graded on method and experiments; innov: method
    only; design: the method is given, plan its validation; ares: the sources are a corpus of
    documents, not papers (JSONL, parquet, a saved Hugging Face dataset, folders of .txt/.md;
    see the ares section and docs/ares.md) (--recipe)."""
    builder: Literal["auto", "llm", "extractive"] = "auto"
    """llm: the full recipe through the configured LLM; extractive: the offline baseline (no
    LLM, no network); auto: llm when an LLM is configured (--builder)."""
    limit: int | None = Field(None, ge=1)
    """Build at most N papers (null: all); with --recipe ares, read the first N rows of the
    corpus only (a later run with a larger limit continues) (--limit)."""
    leakage_judge: bool = True
    """With the LLM builder, ask the judge role, per instance, which criteria can be inferred
    from the question alone (--leakage-judge/--no-leakage-judge)."""
    leakage: LeakageSection = LeakageSection()
    """What the LLM build does with a criterion the leakage judge flags."""
    paper_concurrency: int = Field(16, ge=1)
    """Papers processed at once (LLM calls are bounded separately by each endpoint's
    max_concurrency). Not used by --recipe ares: documents in flight there are
    ares.concurrency (--paper-concurrency, default 64)."""
    max_unit_words: int = Field(1200, ge=100)
    """Longest text unit one extraction call reads; longer sections are chunked."""
    engine: Literal["local", "datatrove"] = "local"
    """local: one process, asyncio; datatrove: the papers as tasks of datatrove's
    LocalPipelineExecutor, then one assembly (multi-node: Slurm or Ray, see docs/scale.md). The
    output is the same. Not used by --recipe ares (ares.engine)."""
    tasks: int = Field(4, ge=1)
    """datatrove engine: tasks the papers are spread over (paper k, in build order, goes to task
    k mod tasks)."""
    workers: int = Field(2, ge=1)
    """datatrove engine: tasks run at once on this machine (processes)."""
    mix: dict[str, float] | None = None
    """Build papers sampled to this discipline mix, KEY=SHARE,... with keys cs, physics, econ,
    math, stat, bio, finance, eng and shares in (0, 1] summing to 1 (null: every paper); needs
    build.target. Disciplines come from each paper's metadata.json arXiv categories, else the
    offline guess from title and abstract (--mix, e.g. cs=0.5,physics=0.25,econ=0.25)."""
    target: int | None = Field(None, ge=1)
    """Papers to sample to build.mix; a discipline with too few papers gives all it has and
    is not topped up from others (--target)."""
    seed: int = 0
    """Seed of the build.mix sample: the same seed and papers give the same selection (--seed)."""

    @field_validator("mix", mode="before")
    @classmethod
    def _mix_text(cls, value: Any) -> Any:
        """The flag's ``cs=0.5,physics=0.5`` text, or a mapping as a config file writes it."""
        if isinstance(value, str):
            return parse_mix(value) if value.strip() else None
        return value

    @model_validator(mode="after")
    def _mix_needs_target(self) -> BuildSection:
        if self.mix is not None:
            check_mix(self.mix)
            if self.target is None:
                raise ValueError("build.mix needs build.target (--target N), the papers to sample")
        elif self.target is not None:
            raise ValueError("build.target samples to build.mix; give --mix too (or use --limit)")
        return self
