"""The ``ares`` section: documents of a corpus → weighted-rubric instances (SPEC §6)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from papergym.configbase import ConfigSection

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


class AresSection(ConfigSection):
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
