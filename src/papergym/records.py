"""The records that travel between PaperGym's steps.

Every record is a frozen pydantic model that refuses unknown fields, so a file written by one
step is read back by the next exactly as it was written (see :mod:`papergym.jsonl`).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, computed_field, model_validator


class Record(BaseModel):
    """Base of every record: immutable, strict about fields, JSON-serialisable."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def content_hash(payload: Any, length: int = 16) -> str:
    """A short, stable hex digest of a JSON-serialisable payload (keys sorted)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


class Section(Record):
    """One heading of a paper and the text under it, up to the next heading of any level."""

    heading: str = Field(description="Heading text with LaTeX turned into plain text.")
    level: int = Field(
        description="Depth of the heading: 0 chapter, 1 section, 2 subsection, 3 subsubsection, "
        "4 paragraph, 5 subparagraph (-1 part)."
    )
    path: tuple[str, ...] = Field(
        default=(), description="Headings of the enclosing sections, outermost first."
    )
    text: str = Field(description="Readable plain text of the section body.")
    appendix: bool = Field(default=False, description="True for sections after \\appendix.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def words(self) -> int:
        return len(self.text.split())


class PaperMeta(Record):
    """Where a paper came from and what ingestion noticed about it."""

    source_path: str = Field(description="The file, folder or archive the paper was read from.")
    main_file: str | None = Field(
        default=None, description="Main .tex file, relative to the paper's root."
    )
    main_file_reason: str | None = Field(
        default=None, description="Why this file was chosen as the main file."
    )
    arxiv_id: str | None = None
    date: str | None = Field(default=None, description="ISO date (YYYY-MM or YYYY-MM-DD).")
    licence: str | None = Field(
        default=None,
        description="The licence URL as arXiv states it (from a fetched paper's metadata.json).",
    )
    files_read: tuple[str, ...] = Field(
        default=(), description="Source files whose text went into the paper, in reading order."
    )
    warnings: tuple[str, ...] = ()


class Paper(Record):
    """A paper as PaperGym reads it: title, abstract and sections of clean text."""

    id: str = Field(description="Content hash of title, abstract and sections.")
    title: str
    abstract: str
    sections: tuple[Section, ...]
    meta: PaperMeta

    @classmethod
    def create(
        cls, *, title: str, abstract: str, sections: tuple[Section, ...], meta: PaperMeta
    ) -> Paper:
        """Build a paper whose id is the hash of its content (not of where it came from)."""
        payload = {
            "title": title,
            "abstract": abstract,
            "sections": [s.model_dump(include={"heading", "level", "text"}) for s in sections],
        }
        return cls(
            id=content_hash(payload), title=title, abstract=abstract, sections=sections, meta=meta
        )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def words(self) -> int:
        return len(self.abstract.split()) + sum(s.words for s in self.sections)

    def top_level_headings(self) -> list[str]:
        """Headings of the outermost sections, in order."""
        if not self.sections:
            return []
        top = min(s.level for s in self.sections)
        return [s.heading for s in self.sections if s.level == top]


# --- build records: paper → stages → instance ------------------------------------------------

StageName = Literal["research_goal", "background", "solution", "experiment"]
STAGE_NAMES: tuple[StageName, ...] = ("research_goal", "background", "solution", "experiment")
LEGACY_STAGE_NAMES: tuple[str, ...] = ("field", "background", "solution", "experiment")
"""The stage set of builds before the goal stage (SPEC §2 once said "field" where it meant the
goal): a build folder recorded with it is refused rather than resumed with the new set."""
RecipeName = Literal["papergym", "innov", "design", "ares"]
BuilderName = Literal["llm", "extractive"]


class Stages(Record):
    """A paper distilled into the four stages the build writes from."""

    paper_id: str
    builder: BuilderName
    research_goal: str = Field(
        description="What the paper sets out to achieve and why (1-3 sentences)."
    )
    background: str = Field(
        description="Overview, prior work and open gaps; no solution, no results."
    )
    solution: str = Field(description="Core idea, architecture, key components, innovations.")
    experiment: str = Field(
        description="Design, data, baselines, metrics, settings; no numeric results."
    )
    sources: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="Per stage, the section headings its text came from."
    )
    discipline: str = Field(default="", description="Broad discipline (metadata, not a stage).")
    subfield: str = Field(default="", description="Sub-field (metadata, not a stage).")
    legacy_field: str | None = Field(
        default=None,
        description="The 'field' stage of a file written before the goal stage existed "
        "(discipline, sub-field and direction); such stages have no goal. None otherwise.",
    )

    @model_validator(mode="before")
    @classmethod
    def _read_legacy(cls, data: Any) -> Any:
        """A stages file of the old stage set (``field``, no goal) reads with an empty goal and
        its field text kept as :attr:`legacy_field`: loaded, never taken for a goal."""
        if isinstance(data, dict) and "field" in data and "research_goal" not in data:
            field = str(data["field"])
            data = {k: v for k, v in data.items() if k != "field"}
            data.update(research_goal="", legacy_field=field)
        return data

    @property
    def legacy(self) -> bool:
        """Whether these stages were written with the old stage set (no goal extracted)."""
        return self.legacy_field is not None


class LeakageVerdict(Record):
    """Whether a criterion can be inferred from the question alone, by one method."""

    method: Literal["overlap", "judge"]
    leaked: bool | None = Field(description="None when the judge's answer could not be scored.")
    score: float | None = Field(default=None, description="Overlap similarity in [0, 1].")
    reason: str = ""


Polarity = Literal["desired", "pitfall"]
"""What a criterion's "met" verdict means: a desired property present, or a mistake made."""


def check_weight(weight: float, what: str) -> float:
    """``weight`` if it is a usable criterion weight: finite and not zero."""
    if not math.isfinite(weight):
        raise ValueError(f"{what}: weight must be a finite number, got {weight!r}")
    if weight == 0:
        raise ValueError(
            f"{what}: weight 0 is refused (a criterion that counts for nothing); "
            "use a positive weight for a desired property or a negative one for a pitfall"
        )
    return weight


def usable_weight(what: str) -> AfterValidator:
    """The check of a record's ``weight`` field (:func:`check_weight`), its errors naming ``what``:
    criteria and verdicts carry the same signed weight, so they refuse the same ones."""

    def check(weight: float) -> float:
        return check_weight(weight, what)

    return AfterValidator(check)


class Criterion(Record):
    """One specific rubric criterion: a binary, checkable statement about a plan.

    ``weight`` (default 1: the paper's unweighted rubric) is signed, and its sign *is* the
    criterion's polarity: positive for a desired property, negative for a **pitfall** (an
    ARES/HealthBench failure mode such as a hallucinated result), whose "met" verdict means the
    answer made the mistake, and which then subtracts ``|weight|``. One signed number rather than
    a weight plus a polarity field, so the two can never disagree, an old file (no weight) reads
    as all-desired, and weighted datasets (RubricHub/HealthBench ``points``, ARES) map onto it
    as written. :attr:`polarity` spells the sign out; zero and non-finite weights are refused.
    """

    id: str
    text: str
    dimension: Literal["method", "experiment", "general"] = Field(
        description="What a paper's criterion checks: the method or the experiments; "
        "``general`` for a criterion about an answer as a whole (instances from documents, "
        "which have no such split)."
    )
    origin: Literal["answer", "question", "extractive"]
    rank: int = Field(ge=1, description="1 = most important.")
    leakage: tuple[LeakageVerdict, ...] = ()
    replaces: str | None = Field(
        default=None,
        description="Id of the leaked criterion the build replaced with this one "
        "(build.leakage.action replace); None for a criterion the merge kept.",
    )
    weight: Annotated[float, usable_weight("criterion")] = Field(
        default=1.0,
        description="Signed weight: > 0 a desired property, < 0 a pitfall (met = the mistake "
        "was made); never 0.",
    )

    @property
    def polarity(self) -> Polarity:
        """``pitfall`` for a negative weight, else ``desired`` (derived, never stored)."""
        return "pitfall" if self.weight < 0 else "desired"

    @property
    def pitfall(self) -> bool:
        return self.weight < 0


class GeneralCriterion(Record):
    """An instance-independent criterion applied to every plan (SPEC §2 step 7)."""

    id: str
    text: str


RUBRIC_SIZE = 10
"""Specific criteria a rubric has (SPEC §2): every builder aims for it, and the fake LLM writes
it; a rubric with fewer says why in its ``note``."""


class Rubric(Record):
    specific: tuple[Criterion, ...]
    general: tuple[GeneralCriterion, ...]
    note: str = Field(default="", description="Why there are fewer than 10 criteria, if so.")
    leaked_out: tuple[Criterion, ...] = Field(
        default=(),
        description="Specific criteria the build took out because the leakage judge found "
        "them inferable from the question (build.leakage.action remove or replace), with "
        "their verdicts: the rubric before the action is these plus the criteria that "
        "replace nothing.",
    )

    @property
    def weighted(self) -> bool:
        """Whether any specific criterion has a weight other than 1 (pitfalls included)."""
        return any(c.weight != 1.0 for c in self.specific)

    @property
    def pitfalls(self) -> tuple[Criterion, ...]:
        """The specific criteria whose "met" means the answer made a mistake."""
        return tuple(c for c in self.specific if c.pitfall)


SourceKind = Literal["paper", "document"]
"""What an instance was built from: a research paper, or a plain document (ARES)."""

DOCUMENT_RECIPES: frozenset[str] = frozenset({"ares"})
"""The recipes that build from plain documents."""


def source_kind_of(recipe: str | None) -> SourceKind:
    """The source kind of a row that carries only its recipe (a TRL export row has no
    source-kind column, so that a paper's rows stay as they were)."""
    return "document" if recipe in DOCUMENT_RECIPES else "paper"


class Instance(Record):
    """One RL task: a question, a reference answer and a rubric, with where they came from.

    Provenance is general: ``source_kind`` says whether the source was a research paper
    (``paper``, the default, so files written before the field existed read unchanged) or a
    plain document (``document``: a web page, a manual, a report). ``paper_id`` is the source's
    content id whatever its kind (:attr:`source_id` names it so); it keeps its name because
    splits, resume and every export key on it. The paper-only field (``arxiv_id``) is optional,
    and so are ``domain`` and ``title`` (a document may have neither).
    """

    id: str
    recipe: RecipeName
    builder: BuilderName
    paper_id: str = Field(description="Content id of the source (a paper's or a document's).")
    title: str = ""
    domain: str = Field(
        default="", description="Broad discipline (computer science, physics, ...); metadata."
    )
    subfield: str = Field(
        default="", description="Sub-field within the discipline, when the build names one."
    )
    arxiv_id: str | None = None
    date: str | None = Field(
        default=None,
        description="The source paper's ISO date (YYYY-MM or YYYY-MM-DD) as ingestion parsed it; "
        "null when unknown (files written before the field existed read as null).",
    )
    source_path: str = ""
    licence: str | None = Field(
        default=None,
        description="The source paper's licence URL as arXiv states it; null when unknown.",
    )
    question: str
    reference_answer: str
    rubric: Rubric
    warnings: tuple[str, ...] = ()
    source_kind: SourceKind = "paper"

    @property
    def source_id(self) -> str:
        """The content id of the paper or document this instance was built from."""
        return self.paper_id

    @staticmethod
    def make_id(recipe: str, builder: str, paper_id: str) -> str:
        return content_hash({"recipe": recipe, "builder": builder, "paper": paper_id})


class Drop(Record):
    """A paper (or instance) the build rejected: at which step and why."""

    source: str
    step: str
    reason: str
    paper_id: str | None = None


class BuildFailure(Record):
    """A paper a build run could not finish because the LLM endpoint failed, not the paper.

    Unlike a :class:`Drop` it does not finish the paper: the next run of the same build retries it.
    """

    source: str
    step: str = Field(description="llm:transport, llm:truncated, llm:budget or llm:error.")
    reason: str
    paper_id: str


# --- reward records: (instance, answer) → verdicts → score ------------------------------------

Normalisation = Literal["positive", "absolute"]
"""How a weighted rubric's raw sum is normalised (see :func:`papergym.reward.scoring.weighted_score`)."""

RewardMode = Literal["rubric", "holistic", "reference_similarity", "generic_only"]
"""What produced a score (``reward.mode``): the rubric reward (SPEC §3), or one of ARES's
ablations — a holistic judge that sees no rubric, the answer's similarity to the reference
answer, or the general criteria alone (SPEC §6)."""

VerdictScale = Literal["binary", "graded"]
"""How the rubric judge decides a criterion (``reward.verdict``): met or not (0/1), or how far
it is met (0, ½, 1)."""


class Verdict(Record):
    """A judge's strict decision on one criterion for one answer, reason first."""

    criterion_id: str
    passed: bool | None = Field(
        description="Whether the criterion is met; None when the judge's answer could not be "
        "scored. For a pitfall (weight < 0), True means the answer made the mistake."
    )
    reason: str = ""
    kind: Literal["specific", "general"] = "specific"
    weight: Annotated[float, usable_weight("verdict")] = Field(
        default=1.0,
        description="The criterion's weight, copied from the rubric by the reward (judges leave "
        "it at 1); negative for a pitfall.",
    )
    quote: str | None = Field(
        default=None,
        description="The span of the answer a quoting judge (the LLM judge) gave as evidence "
        "for 'met'; None for not met, and for judges that quote nothing.",
    )
    unbacked: Literal["quote_missing", "quote_not_found"] | None = Field(
        default=None,
        description="Set when the judge said 'met' but its quote does not back it: none was "
        "given (quote_missing) or it is not in the answer (quote_not_found). Such a verdict "
        "is not met (passed False) and is counted (papergym.quotes.tally).",
    )
    grade: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="A graded judge's answer: how far the criterion is met (0, 0.5 or 1), the "
        "credit scoring uses; None for a binary verdict (its credit is passed). passed is "
        "True when grade > 0.",
    )


class Score(Record):
    """The reward for one answer: a value, or unscored with the reason — never a silent 0."""

    instance_id: str
    value: float | None = Field(description="α·specific + (1-α)·general, or None when unscored.")
    specific: float | None = Field(
        default=None,
        description="The specific criteria's weighted score, clipped to [0, 1] (their pass rate "
        "when every weight is 1).",
    )
    general: float | None = None
    alpha: float = 0.7
    normalisation: Normalisation = Field(
        default="positive",
        description="How the specific part was normalised: by the sum of positive weights "
        "(HealthBench) or of absolute weights (RaR); the same for unweighted rubrics.",
    )
    verdicts: tuple[Verdict, ...] = ()
    unscored_reason: str | None = None
    judge: str = Field(default="", description="Which judge produced the verdicts.")
    answer_truncated: bool = Field(
        default=False, description="The answer was cut to the reward's length limit before judging."
    )
    mode: RewardMode = Field(
        default="rubric",
        description="The reward mode that produced the value: rubric, or an ablation "
        "(holistic, reference_similarity, generic_only).",
    )

    @property
    def scored(self) -> bool:
        return self.value is not None
