"""The one typed configuration of every ``papergym`` command: :class:`PaperGymConfig`.

Sections: ``llm`` (endpoints per role), ``build``, ``audit``, ``reward``, ``serve``, and the
training sections at the top level (``model``, ``lora``, ``data``, ``opsd``, ``grpo``, ``sft``,
``stages``), so a training file reads as before. Every field carries a description;
``papergym config reference`` prints them as one table (docs/config.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from papergym.llm.config import LLMConfig
from papergym.reward.reward import DEFAULT_CACHE_SIZE, DEFAULT_MAX_ANSWER_CHARS
from papergym.settings.training import (
    CycleSettings,
    DataSettings,
    GRPOSettings,
    LoraSettings,
    ModelSettings,
    OPSDSettings,
    Section,
    SFTSettings,
    StageName,
)

DEFAULT_STAGES: tuple[StageName, ...] = ("opsd", "grpo")


class BuildSection(Section):
    """``papergym build``: papers → instances."""

    recipe: Literal["papergym", "innov", "design", "ares"] = "papergym"
    """papergym: plan from goal+background, graded on method and experiments; innov: method
    only; design: the method is given, plan its validation; ares: documents of a corpus, not
    papers (see the ares section) (--recipe)."""
    builder: Literal["auto", "llm", "extractive"] = "auto"
    """llm: the full recipe through the configured LLM; extractive: the offline baseline; auto:
    llm when an LLM is configured (--builder)."""
    limit: int | None = Field(None, ge=1)
    """Build at most this many papers (null: all) (--limit)."""
    leakage_judge: bool = True
    """With the LLM builder, ask the judge role which criteria the question alone reveals
    (--leakage-judge/--no-leakage-judge)."""
    paper_concurrency: int = Field(16, ge=1)
    """Papers processed at once; LLM calls are bounded by each endpoint's max_concurrency
    (--paper-concurrency)."""
    max_unit_words: int = Field(1200, ge=100)
    """Longest text unit one extraction call reads; longer sections are chunked."""


class AuditSection(Section):
    """``papergym audit``: criterion leakage."""

    judge: bool = False
    """Also ask the LLM judge role, per question, which criteria it reveals (--judge)."""
    lexical_threshold: float = Field(0.75, ge=0.0, le=1.0)
    """Share of a criterion's content words found in the question at which it counts as
    leaked (--lexical-threshold)."""
    embedding_threshold: float = Field(0.80, ge=0.0, le=1.0)
    """Cosine similarity to a question sentence at which a criterion counts as leaked
    (--embedding-threshold)."""
    top: int = Field(10, ge=0)
    """How many of the most-leaked criteria to list (--top)."""


class RewardSection(Section):
    """The rubric reward, for every path: TRL, verl, OpenRLHF, the server, score, check-reward."""

    judge: Literal["auto", "offline", "llm"] = "auto"
    """offline: the embedding baseline (no LLM); llm: the judge role of ``llm``; auto: llm when
    an LLM is configured (--judge)."""
    alpha: float = Field(0.7, ge=0.0, le=1.0)
    """Weight of the specific criteria: α·specific + (1−α)·general (--alpha)."""
    criteria_per_call: Literal["all"] | int = "all"
    """LLM judge: the criteria of a pass judged in one call (all), one per call (1), or k per
    call (an integer k ≥ 2)."""
    advisory_reference: bool = False
    """LLM judge: present the reference as one possible approach, not the bar to match."""
    general_reference: bool = False
    """LLM judge: show the reference answer in the general pass too."""
    max_answer_chars: int = Field(DEFAULT_MAX_ANSWER_CHARS, ge=0)
    """Longer answers are cut to this many characters before judging and flagged
    answer_truncated (0: no limit) (--max-answer-chars)."""
    cache_size: int = Field(DEFAULT_CACHE_SIZE, ge=0)
    """Scores kept in memory, least recently used dropped first (0: no cache)."""
    unscored: float = 0.0
    """The reward verl and OpenRLHF get for an answer the judge could not score (TRL gets None;
    an unscored flag is logged either way)."""
    calibration: Path | None = None
    """Offline judge: a calibration file (threshold and weights) in place of the bundled one."""
    normalisation: Literal["positive", "absolute"] = "positive"
    """Weighted rubrics: divide the specific part by the sum of positive weights (HealthBench)
    or of absolute weights (RaR); each answer's part is then clipped to [0, 1] (a pitfall can
    push it below 0). Rubrics whose weights are all 1 score the same either way."""
    llm_config: Path | None = None
    """An LLM YAML file for the judge alone (null: the ``llm`` section); the command's
    llm.cache=false and llm.cache_dir apply to it too."""

    # before the union is tried, so a bad value is one message at this key, not one per member
    @field_validator("criteria_per_call", mode="before")
    @classmethod
    def _check_per_call(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if value == "all" or (
            isinstance(value, int) and not isinstance(value, bool) and value >= 1
        ):
            return value
        raise ValueError(f"must be 'all' or a whole number of at least 1, not {value!r}")


class ServeSection(Section):
    """``papergym serve-reward``: the reward over HTTP."""

    host: str = "127.0.0.1"
    """Address to listen on (0.0.0.0: every interface) (--host)."""
    port: int = Field(8765, ge=0, le=65535)
    """Port to listen on (0: any free port); not 8000, vLLM's default (--port)."""
    max_body_mb: float = Field(32.0, gt=0)
    """Largest request body in MiB; a larger one is refused (413) unread (--max-body-mb)."""
    token_env: str | None = None
    """Name of the variable holding the bearer token every request but /health must send
    (--token-env)."""
    docs: bool = False
    """Serve the API docs at /docs, /redoc, /openapi.json (--docs)."""
    reward: Literal["rubric", "review"] = "rubric"
    """rubric: the rubric reward (labels carry the rubric); review: the review reward, the mean
    simulated review rating of the answer on [0, 1], no label needed (--reward)."""


class EvalSection(Section):
    """``papergym eval``: answers from each system, scored by the rubric reward."""

    split: Literal["auto", "test", "train", "all"] = "auto"
    """Questions evaluated: test (held out by data.test_fraction, as training did), train, all;
    auto: test when data.test_fraction is set, else all (--split)."""
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


class CompareSection(Section):
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


class ReviewSection(Section):
    """``papergym review``: simulated peer review, its offline baseline and its evaluation."""

    reviewer: Literal["auto", "llm", "offline"] = "auto"
    """llm: simulated reviewers through the reviewer role of ``llm``; offline: the fitted
    baseline (no LLM); auto: llm when an LLM is configured (--reviewer)."""
    reviewers: int = Field(4, ge=1)
    """Simulated reviewers per paper, each an independent LLM call with its own profile and
    sampling seed (--reviewers)."""
    venue: Literal["iclr"] = "iclr"
    """The venue whose rating scale reviews use (iclr: 1, 3, 5, 6, 8, 10)."""
    threshold: float | None = None
    """Decision threshold: accept when the score is at least this (--threshold); null: the one
    calibrated on the human ratings and shipped with the baseline (for simulated reviewers the
    mean human rating that best matches the decisions, for the baseline its own)."""
    temperature: float = Field(0.7, ge=0.0)
    """Sampling temperature of each review (the meta-review too)."""
    max_tokens: int = Field(2048, ge=64)
    """Longest review, in tokens; a longer one is truncated and reported unscored."""
    max_paper_words: int = Field(12000, ge=500)
    """Longer papers are fitted to this many words by a recorded, deterministic rule (front
    sections kept, appendices and references dropped first)."""
    meta_review: bool = True
    """Write a meta-review of each paper's reviews (text only: it never sets the score)."""
    paper_concurrency: int = Field(8, ge=1)
    """Papers reviewed at once; LLM calls are bounded by the endpoint's max_concurrency."""
    max_answer_chars: int = Field(100_000, ge=0)
    """The review reward cuts a longer text to this many characters before any other work, and
    flags it answer_truncated (0: no limit); a paper is longer than a plan, hence not
    reward.max_answer_chars (serve-reward --reward review --max-answer-chars)."""
    partial: Literal["flag", "unscored"] = "flag"
    """The review reward of a text scored from fewer reviews than asked (the others
    unparseable, cut, or their endpoint failed): flag: the mean of the scored reviews, flagged
    partial with the reason; unscored: no reward (reward.unscored where a number is needed)."""
    baseline: Path | None = None
    """Offline baseline: a coefficients file in place of the shipped one (null: shipped)."""
    resamples: int = Field(2000, ge=10)
    """review eval: bootstrap resamples of each interval."""
    level: float = Field(0.95, gt=0.0, lt=1.0)
    """review eval: confidence level of the intervals."""
    seed: int = 0
    """Seed of the reviewers' sampling seeds and of the bootstrap resampling."""


ARES_DOMAINS: dict[str, str] = {
    "medicine": "Medicine and health: diseases, symptoms, treatments, drugs, nutrition, mental "
    "health, public health and care of patients.",
    "law": "Law and government: statutes, regulations, courts, rights, contracts, policy and "
    "public administration.",
    "finance": "Finance and economics: personal finance, banking, investing, taxes, markets, "
    "business economics and macroeconomics.",
    "science": "Natural sciences: physics, chemistry, biology, earth and space science, "
    "experiments and scientific explanations.",
    "technology": "Technology and computing: software, programming, hardware, the internet, "
    "data and artificial intelligence.",
    "engineering": "Engineering and industry: mechanical, civil and electrical engineering, "
    "construction, manufacturing, energy and safety procedures.",
    "education": "Education: teaching, learning, schools, study skills, curricula and "
    "academic guidance.",
    "humanities": "Humanities and society: history, philosophy, religion, literature, arts, "
    "culture and the social sciences.",
    "business": "Business and work: management, marketing, careers, entrepreneurship, "
    "workplace practice and customer service.",
    "lifestyle": "Everyday life: home and garden, cooking, travel, sports, parenting, pets and "
    "consumer advice.",
}
"""ARES's ten default domains: name → the description the offline assignment embeds."""

ARES_PERSONAS: dict[str, list[str]] = {
    "medicine": ["patient", "caregiver", "clinician", "medical student"],
    "law": ["citizen", "small-business owner", "law student", "paralegal"],
    "finance": ["retail investor", "household budgeter", "finance student", "accountant"],
    "science": ["student", "science teacher", "curious adult", "researcher"],
    "technology": ["software developer", "student", "IT administrator", "everyday user"],
    "engineering": ["engineering student", "technician", "site supervisor", "homeowner"],
    "education": ["teacher", "student", "parent", "school administrator"],
    "humanities": ["student", "general reader", "teacher", "researcher"],
    "business": ["manager", "employee", "entrepreneur", "business student"],
    "lifestyle": ["homeowner", "parent", "traveller", "hobbyist"],
}
"""Target personas per domain; the first is the domain's default (the offline assignment's)."""

ARES_BOILERPLATE = [
    "lorem ipsum",
    "javascript",
    "cookie policy",
    "use of cookies",
    "accept cookies",
    "all rights reserved",
    "terms of use",
    "privacy policy",
    "click here",
    "sign up for our newsletter",
    "log in to continue",
]
"""Phrases of web boilerplate: lines holding them count towards ``max_boilerplate_lines``."""


class AresSection(Section):
    """``papergym build --recipe ares``: documents → weighted-rubric instances (SPEC §6)."""

    domains: dict[str, str] = Field(default_factory=lambda: dict(ARES_DOMAINS), min_length=1)
    """Domain name → description; every document is assigned one (offline: by embedding
    similarity to the description; with an LLM: one of these names)."""
    personas: dict[str, list[str]] = Field(default_factory=lambda: dict(ARES_PERSONAS))
    """Target personas per domain, the first one the domain's default; a domain not listed
    uses ``general_personas``."""
    general_personas: list[str] = Field(
        default_factory=lambda: ["general reader", "student", "professional"], min_length=1
    )
    """Personas of domains without their own list (the first is the default)."""
    pitfall_domains: list[str] = Field(
        default_factory=lambda: ["medicine", "law", "finance", "engineering"]
    )
    """Domains whose rubrics must hold at least one pitfall (a negative-weight criterion)."""
    domain_by: Literal["llm", "embedding"] = "llm"
    """With an LLM: pick domain and persona by one LLM call (llm), or by embedding similarity
    to the domain descriptions with the domain's default persona, saving that call
    (embedding; always so offline)."""
    prefilter: bool = True
    """Run the heuristic prefilter before the LLM classifier (false: every document costs a
    classifier call)."""
    min_words: int = Field(120, ge=1)
    """Prefilter: fewer words is too little context for a question."""
    max_words: int = Field(100_000, ge=1)
    """Prefilter: more words is a dump, not a document."""
    min_mean_word_length: float = Field(3.0, ge=0.0)
    """Prefilter: shorter mean word length (characters) suggests tables, codes or noise."""
    max_mean_word_length: float = Field(10.0, ge=0.0)
    """Prefilter: longer mean word length suggests URLs, hashes or glued text."""
    max_symbol_word_ratio: float = Field(0.1, ge=0.0)
    """Prefilter: ``#`` and ellipsis symbols per word."""
    min_alpha_words: float = Field(0.8, ge=0.0, le=1.0)
    """Prefilter: share of words holding at least one letter."""
    max_non_alpha_chars: float = Field(0.3, ge=0.0, le=1.0)
    """Prefilter: share of non-space characters that are not letters (digits, symbols)."""
    min_punctuated_lines: float = Field(0.12, ge=0.0, le=1.0)
    """Prefilter: share of lines ending in terminal punctuation (menus and lists have few)."""
    max_duplicate_lines: float = Field(0.3, ge=0.0, le=1.0)
    """Prefilter: share of lines that repeat an earlier line."""
    max_duplicate_paragraphs: float = Field(0.3, ge=0.0, le=1.0)
    """Prefilter: share of paragraphs that repeat an earlier paragraph."""
    max_bullet_lines: float = Field(0.9, ge=0.0, le=1.0)
    """Prefilter: share of lines starting with a bullet."""
    min_stop_words: int = Field(2, ge=0)
    """Prefilter: fewest occurrences of common English function words (the, of, and, to...);
    fewer means a list, a table or not English prose."""
    max_ellipsis_lines: float = Field(0.3, ge=0.0, le=1.0)
    """Prefilter: share of lines ending in an ellipsis (truncated teasers)."""
    boilerplate: list[str] = Field(default_factory=lambda: list(ARES_BOILERPLATE))
    """Prefilter: boilerplate phrases (case-insensitive); "lorem ipsum" anywhere drops the
    document."""
    max_boilerplate_lines: float = Field(0.2, ge=0.0, le=1.0)
    """Prefilter: share of lines holding a boilerplate phrase."""
    max_prompt_words: int = Field(3000, ge=50)
    """Longer documents are cut to this many words in the LLM prompts."""
    max_classify_words: int = Field(1000, ge=50)
    """The classifier and the domain call read at most this many words of a document (a look
    at the start is enough to judge it; fewer tokens per call)."""
    min_criteria: int = Field(4, ge=1)
    """Fewest criteria a rubric may have after verification."""
    max_criteria: int = Field(12, ge=1)
    """Most criteria a rubric may have."""
    max_weight: int = Field(5, ge=1)
    """Positive weights run from 1 (optional) to this (essential)."""
    max_pitfall_weight: int = Field(5, ge=1)
    """Pitfall weights run from -1 (minor) to minus this (severe)."""
    similarity_threshold: float = Field(0.9, ge=0.0, le=1.0)
    """Rubric diversity: two criteria whose embedding cosine exceeds this are near-duplicates."""
    min_coverage: float = Field(0.6, ge=0.0, le=1.0)
    """Share of the reference's key points the positive criteria must cover (LLM check)."""
    # Input, output and scale (docs/ares.md): how the corpus is read and the run is spread.
    text_column: str = "text"
    """Corpus field (JSONL key, parquet or dataset column) holding the document's text."""
    id_column: str = "id"
    """Field holding the document's id; rows without one get ``file:row``."""
    url_column: str = "url"
    """Field holding the document's url (optional)."""
    max_document_mb: float = Field(10.0, gt=0.0)
    """Larger records are dropped at reading with a reason (JSONL lines and text files are
    skipped without being read whole)."""
    shard_size: int = Field(1000, ge=1)
    """Corpus rows per output shard (instances-00000.jsonl, ...); a resumed build must keep it."""
    concurrency: int = Field(64, ge=1)
    """Documents in flight at once per process; LLM calls are bounded again by each endpoint's
    max_concurrency."""
    engine: Literal["local", "datatrove"] = "local"
    """local: one process, asyncio; datatrove: datatrove's LocalPipelineExecutor, one task per
    group of shards (multi-node: Slurm or Ray, see docs/ares.md)."""
    tasks: int = Field(4, ge=1)
    """datatrove engine: tasks the shards are spread over (shard k goes to task k mod tasks)."""
    workers: int = Field(2, ge=1)
    """datatrove engine: tasks run at once on this machine (processes)."""

    @model_validator(mode="after")
    def _consistent(self) -> AresSection:
        if self.min_criteria > self.max_criteria:
            raise ValueError(f"min_criteria {self.min_criteria} > max_criteria {self.max_criteria}")
        unknown = sorted(set(self.pitfall_domains) - set(self.domains))
        if unknown:
            raise ValueError(f"pitfall_domains names unknown domain(s) {unknown}")
        return self


class WriteSection(Section):
    """``papergym write`` (a paper from a bibliography) and ``papergym write prepare`` (training
    data from real papers)."""

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
    """Write experiments/results as an experiment plan without numbers (--plan-only), instead
    of simulated numbers marked as such."""
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


class PaperGymConfig(Section):
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
    write: WriteSection = WriteSection()
    """Writing papers from a bibliography (papergym write, papergym write prepare)."""
    ares: AresSection = AresSection()
    """ARES: weighted-rubric instances from document corpora (papergym build --recipe ares)."""
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
        from papergym.settings.load import redacted

        data: dict[str, Any] = redacted(self.model_dump(mode="json"))
        return data
