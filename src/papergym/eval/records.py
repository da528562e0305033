"""The records ``papergym eval`` writes, read back by ``compare`` and ``report``.

``answers.jsonl`` holds one :class:`EvalAnswer` per (system, question, sample),
``scores.jsonl`` one :class:`EvalScore` per answer (its per-criterion verdicts with the judge's
reasons), ``summary.json`` one :class:`EvalSummary`. Every statistic is an :class:`Estimate`:
a value with its 95% interval and the denominator it was computed on, so a reader never has to
guess how many questions stand behind a number.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from papergym.records import Record, RewardMode

SystemKind = Literal["run", "model", "endpoint"]
Dimension = Literal["method", "experiment", "general"]  # general: a document's criteria (ARES)

ANSWERS_FILE = "answers.jsonl"
SCORES_FILE = "scores.jsonl"
SUMMARY_FILE = "summary.json"
CONFIG_FILE = "config.yaml"
QUESTIONS_FILE = "questions.jsonl"
JUDGE_USAGE_FILE = "judge_usage.jsonl"


class Estimate(Record):
    """A statistic with its interval and denominator; all None when nothing was measured."""

    value: float | None = Field(description="The point estimate (a mean, a rate, a difference).")
    low: float | None = Field(default=None, description="Lower end of the interval.")
    high: float | None = Field(default=None, description="Upper end of the interval.")
    n: int = Field(ge=0, description="The denominator: questions (or pairs) it was computed on.")
    level: float = Field(default=0.95, description="The interval's confidence level.")


class Correlation(Record):
    """A correlation coefficient with its bootstrap interval (None with fewer than 3 points or
    a constant variable)."""

    method: Literal["pearson", "spearman"]
    r: float | None
    low: float | None = None
    high: float | None = None
    n: int = Field(ge=0, description="Points (answers) it was computed on.")
    level: float = 0.95


class EvalSystem(Record):
    """One system as given on the command line, resolved."""

    name: str = Field(description="The name given (name=SPEC) or derived from the spec.")
    spec: str = Field(description="What was given, with URL credentials masked.")
    kind: SystemKind = Field(
        description="run: a training run folder; model: a local model (hf backend); endpoint: "
        "an OpenAI-compatible server (openai:MODEL@URL)."
    )
    model: str = Field(description="The model loaded or asked for (a path or a model name).")


class EvalQuestion(Record):
    """A question as evaluated, with its criteria's texts: a line of ``questions.jsonl``, so a
    report can show what was asked and what each criterion id says without the build folder."""

    instance_id: str
    question: str
    criteria: dict[str, str] = Field(
        default_factory=dict, description="Criterion id → text, specific and general."
    )


class EvalAnswer(Record):
    """One generated answer: a line of ``answers.jsonl``."""

    system: str
    instance_id: str
    sample: int = Field(ge=0, description="Sample index, 0 .. samples-1.")
    answer: str
    words: int = Field(ge=0, description="Whitespace-separated words of the answer.")
    finish_reason: str | None = Field(
        default=None, description="The generator's finish reason (length = cut by the limit)."
    )
    error: str | None = Field(
        default=None,
        description="Why there is no answer (cut at max_tokens); such an answer is unscored, "
        "never 0.",
    )
    prompt_tokens: int | None = Field(
        default=None, ge=0, description="Prompt tokens of the call (None: not recorded)."
    )
    completion_tokens: int | None = Field(
        default=None, ge=0, description="Tokens of the answer (None: not recorded)."
    )
    latency_s: float | None = Field(
        default=None, ge=0.0, description="Seconds from asking to the whole answer."
    )
    cached: bool = Field(
        default=False, description="The answer came from the response cache (no tokens, no wait)."
    )
    cost_usd: float | None = Field(
        default=None,
        description="Dollars the call cost (0 from the cache); None when the model has no "
        "price, or for answers from before it was recorded (then tokens are None too).",
    )


class EvalJudgeUsage(Record):
    """The LLM judge's calls while scoring one system's answers in one run: a line of
    ``judge_usage.jsonl``; a resumed eval appends its own, so the lines add up."""

    system: str
    answers: int = Field(ge=0, description="Answers scored in this run.")
    calls: int = Field(ge=0, description="Calls sent to the judge's endpoint.")
    cache_hits: int = Field(ge=0)
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    cost_usd: float | None = Field(description="None when the judge's model has no price.")


class EvalVerdict(Record):
    """A judge's verdict on one criterion, with what the report needs to group it."""

    criterion_id: str
    kind: Literal["specific", "general"]
    dimension: Dimension | None = Field(default=None, description="Specific criteria only.")
    rank: int | None = Field(default=None, description="Specific criteria only; 1 = first.")
    weight: float = 1.0
    passed: bool | None = Field(description="None when the judge's answer could not be scored.")
    reason: str = ""
    quote: str | None = Field(
        default=None, description="The span of the answer the LLM judge quoted for 'met'."
    )
    unbacked: Literal["quote_missing", "quote_not_found"] | None = Field(
        default=None,
        description="Why the judge's 'met' was turned to not met: no quote, or a quote not in "
        "the answer.",
    )
    grade: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="A graded judge's grade (0, 0.5, 1); None for a binary verdict.",
    )


class EvalScore(Record):
    """The reward of one answer: a line of ``scores.jsonl``; unscored is None, never 0."""

    system: str
    instance_id: str
    sample: int = Field(ge=0)
    value: float | None
    specific: float | None = None
    general: float | None = None
    method: float | None = Field(
        default=None, description="Pass rate of the method criteria (weighted, clipped)."
    )
    experiment: float | None = Field(
        default=None, description="Pass rate of the experiment criteria (weighted, clipped)."
    )
    words: int = Field(ge=0)
    verdicts: tuple[EvalVerdict, ...] = ()
    unscored_reason: str | None = None
    judge: str = ""
    answer_truncated: bool = False
    alpha: float | None = Field(
        default=None,
        description="The α the reward applied: reward.alpha, or 1 when no general criterion "
        "was graded (the offline judge grades none) and 0 when no specific one was; None "
        "without a judgement.",
    )
    mode: RewardMode = Field(
        default="rubric",
        description="The reward mode that scored the answer (reward.mode): rubric, holistic, "
        "reference_similarity or generic_only.",
    )

    scoring: str | None = Field(
        default=None,
        description="The benchmark rule that gave value (eval.scoring=benchmark: "
        "researchqa_coverage, healthbench_points, criteria_met); None: the rubric reward.",
    )

    @property
    def scored(self) -> bool:
        return self.value is not None


class AlphaUse(Record):
    """One α the reward applied, and how many scored answers it applied to."""

    alpha: float
    answers: int = Field(ge=1)


class SystemSummary(Record):
    """Per-system statistics; means are over questions (each question's mean over samples)."""

    system: EvalSystem
    answers: int = Field(description="Answers generated (questions × samples).")
    scored: int
    unscored: int = Field(description="Answers the judge could not score; excluded from means.")
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    unbacked: int = Field(
        default=0,
        description="The LLM judge's 'met' verdicts whose quote was not in the answer (turned "
        "to not met), over scored answers.",
    )
    met_claimed: int = Field(
        default=0,
        description="The 'met' verdicts the judge gave with a quote checked (backed plus "
        "unbacked); 0 for a judge that quotes nothing.",
    )
    unbacked_rate: float | None = Field(
        default=None, description="unbacked / met_claimed; None when met_claimed is 0."
    )
    reward: Estimate
    specific: Estimate
    general: Estimate
    by_dimension: dict[str, Estimate] = Field(
        description="Specific score split by dimension: method, experiment."
    )
    general_criteria: dict[str, Estimate] = Field(
        description="Pass rate of each general criterion, by criterion id."
    )
    by_rank: dict[str, Estimate] = Field(
        description="Pass rate of specific criteria by rank (keys '1', '2', ...)."
    )
    words: Estimate = Field(description="Mean answer length in words.")
    length_reward: tuple[Correlation, ...] = Field(
        description="Correlation between answer length and reward (pearson, spearman): the "
        "length-hacking signal."
    )


class PairedDifference(Record):
    """``a - b`` over the questions both systems scored."""

    a: str
    b: str
    reward: Estimate = Field(description="Mean of per-question differences, with interval.")
    wins: int = Field(description="Questions where a scored higher.")
    ties: int
    losses: int


class EvalSummary(Record):
    """``summary.json``: the whole evaluation at a glance."""

    version: str = Field(description="PaperGym version that wrote it.")
    data: str = Field(description="The --data given.")
    data_format: str = Field(description="instances, researchplangen, researchqa, ...")
    data_id: str = Field(
        description="Content hash of the evaluated questions and rubrics (ids, questions, "
        "rubrics): two eval folders with the same data_id were run on the same data."
    )
    split: Literal["test", "train", "all"]
    questions: int
    instance_ids: tuple[str, ...] = ()
    samples: int
    temperature: float
    max_tokens: int
    judge: str = Field(description="The judge that scored the answers.")
    alpha: float = Field(description="reward.alpha as configured; alphas says what was applied.")
    alphas: tuple[AlphaUse, ...] = Field(
        default=(),
        description="The α the reward actually applied to the scored answers, with their "
        "counts: 1 where no general criterion was graded (the offline judge grades none), "
        "so reward.alpha did not apply.",
    )
    seed: int
    resamples: int
    level: float = 0.95
    scoring: str = Field(
        default="papergym",
        description="The rule of the reward column: papergym (the rubric reward) or a "
        "benchmark's own (researchqa_coverage, healthbench_points, criteria_met).",
    )
    scoring_definition: str | None = Field(
        default=None, description="The rule in words (benchmark scoring only)."
    )
    protocol_differences: tuple[str, ...] = Field(
        default=(),
        description="What differs from the benchmark's published protocol (judge, prompt, "
        "rating scale); a number beside published ones must be read with these.",
    )
    systems: tuple[SystemSummary, ...]
    pairs: tuple[PairedDifference, ...] = ()
