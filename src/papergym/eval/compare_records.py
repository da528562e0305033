"""The records ``papergym compare`` writes: ``verdicts.jsonl`` and ``summary.json``.

``verdicts.jsonl`` holds one :class:`CompareVerdict` per question × ordering × judge: the order
the answers were shown in, the label the judge picked for each criterion and the system it
maps back to, and the judge's reason. An answer the judge gave that could not be parsed (after
the LLM layer's repairs) is a verdict with no picks and its reason: counted apart, never a loss.
``summary.json`` is one :class:`CompareSummary`; every rate is an
:class:`~papergym.eval.records.Estimate` whose ``n`` is the number of questions behind it, beside
the verdict counts it was computed on.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from papergym.eval.records import CONFIG_FILE as CONFIG_FILE  # the same names as eval's
from papergym.eval.records import SUMMARY_FILE as SUMMARY_FILE
from papergym.eval.records import Estimate
from papergym.records import Record

CompareCriterion = Literal["overall", "method", "experiment"]
CRITERIA: tuple[CompareCriterion, ...] = ("overall", "method", "experiment")
TIE = "tie"
"""The pick (raw and mapped) of a judge that finds no answer better than the others."""

VERDICTS_FILE = "verdicts.jsonl"


class Pick(Record):
    """One criterion's choice: the label as the judge wrote it and the system it stands for."""

    label: str = Field(description="The label picked (A, B, ...) or 'tie'.")
    system: str = Field(description="The system shown under that label, or 'tie'.")


class CompareVerdict(Record):
    """One judge's verdict on one question shown in one ordering: a line of verdicts.jsonl."""

    instance_id: str
    judge: str = Field(description="The judge: a role name or openai:MODEL@URL (masked).")
    model: str = Field(description="The model that answered for the judge.")
    backend: str = Field(
        default="",
        description="Where the judge's model is served: its normalised endpoint (no "
        "credentials) or local folder. One model name behind another server can be another "
        "model, so its verdicts are never mixed in.",
    )
    ordering: tuple[str, ...] = Field(
        description="The systems in the order shown: the first was labelled A, the next B, ..."
    )
    setup: str = Field(
        description="Hash of what decides the prompt (template, reference shown, answer limit, "
        "samples compared): verdicts of another setup are never mixed in."
    )
    picks: dict[CompareCriterion, Pick] | None = Field(
        description="Per criterion (overall, method, experiment); null when unparsed."
    )
    reason: str = Field(default="", description="The judge's reasoning, as it wrote it.")
    unparsed_reason: str | None = Field(
        default=None, description="Why the judge's answer could not be used (null when parsed)."
    )
    truncated: tuple[str, ...] = Field(
        default=(), description="Systems whose answer was cut to the answer limit to be shown."
    )

    @property
    def parsed(self) -> bool:
        return self.picks is not None

    @property
    def key(self) -> tuple[str, tuple[str, ...], str, str, str, str]:
        """What identifies a verdict for resuming: question, ordering, judge, its model and
        where it is served, setup."""
        return (self.instance_id, self.ordering, self.judge, self.model, self.backend, self.setup)


class SystemRates(Record):
    """One system's results on one criterion; rates are over parsed verdicts."""

    system: str
    wins: int = Field(description="Parsed verdicts that picked this system.")
    ties: int = Field(description="Parsed verdicts that picked no system (a tie).")
    losses: int = Field(description="Parsed verdicts that picked another system.")
    win: Estimate
    tie: Estimate
    loss: Estimate


class PositionBias(Record):
    """How often the answer shown first wins, among the decisive (non-tie) parsed verdicts.

    A judge without position bias picks each position 1/n of the time when every ordering is
    shown, whatever the systems' quality: every system sits in every position equally often.
    """

    first: Estimate = Field(description="Share of decisive verdicts that picked position A.")
    expected: float = Field(description="1/n: the share an unbiased judge gives position A.")
    by_position: dict[str, float | None] = Field(
        description="Share of decisive verdicts that picked each label."
    )
    decisive: int = Field(description="Parsed verdicts that picked a system (the denominator).")


class CriterionResult(Record):
    """Everything about one criterion (overall, method or experiment)."""

    criterion: CompareCriterion
    verdicts: int = Field(description="Verdicts asked for: questions × orderings × judges.")
    parsed: int = Field(description="Verdicts the rates are computed on (the denominator).")
    unparsed: int = Field(description="Verdicts the judge's answer could not be parsed for.")
    systems: tuple[SystemRates, ...]
    position_bias: PositionBias
    position_bias_by_judge: dict[str, PositionBias] = Field(default_factory=dict)


class Agreement(Record):
    """Fleiss' κ between judges on one criterion.

    Items are question × ordering; each judge rates an item into a category (a system or a
    tie). Items where any judge's verdict is unparsed are left out (κ needs every judge on
    every item) and counted in ``excluded``.
    """

    criterion: CompareCriterion
    kappa: float | None = Field(description="Fleiss' κ; null when every rating is the same.")
    observed: float | None = Field(description="P̄: mean share of agreeing judge pairs.")
    expected: float | None = Field(description="P̄e: the agreement expected by chance.")
    items: int = Field(description="Items rated by every judge (the denominator).")
    excluded: int = Field(description="Items left out because a judge's verdict is unparsed.")
    judges: int


class CompareSummary(Record):
    """``summary.json``: the whole comparison at a glance."""

    version: str
    eval_dirs: tuple[str, ...]
    data_id: str = Field(description="The data all EVAL_DIRs were built on.")
    systems: tuple[str, ...] = Field(description="In command-line order; position 0 is index 0.")
    judges: tuple[str, ...]
    judge_models: dict[str, str] = Field(
        default_factory=dict, description="The model that answered for each judge."
    )
    reference_shown: bool
    design: Literal["permutations", "williams"] = Field(
        description="permutations: every order of the systems; williams: a balanced Latin "
        "square (each system in each position equally often, and after each other system "
        "equally often)."
    )
    orderings: tuple[tuple[str, ...], ...]
    questions: int
    verdicts: int
    parsed: int
    unparsed: int
    unparsed_reasons: dict[str, int] = Field(default_factory=dict)
    resamples: int
    seed: int
    level: float = 0.95
    criteria: tuple[CriterionResult, ...]
    agreement: tuple[Agreement, ...] = Field(
        default=(), description="Per criterion, when several judges were asked."
    )
    usage: tuple[dict[str, object], ...] = Field(
        default=(), description="LLM calls, tokens and cost of this run, per stage and model."
    )
