"""The LLM rubric judge (SPEC §3): per criterion, a reason and then a strict 0/1 verdict.

A frozen judge model sees the question, the reference answer, the rubric and the policy's
answer with any ``<think>…</think>`` removed (:func:`~papergym.llm.structured.strip_reasoning`),
in two passes:

* **specific** — the instance's own criteria, with question, reference answer and rubric;
* **general** — the instance-independent criteria, with question and answer (the reference is
  added only when ``general_reference=True``).

Each pass is judged in one call for all its criteria (``mode="all"``), one call per criterion
(``"one"``) or in chunks of ``k`` (``"k"``). Criteria are numbered 1..n inside a chunk and the
answer is ``{"verdicts": [{"criterion_id", "reason", "verdict": 0|1}]}``, reason first so the
model argues before it decides. The schema sent for a chunk of ``n`` criteria requires exactly
``n`` verdicts with ids 1..n (any order), so structured decoding enforces the count and a model
that ignores it gets a precise repair message from the LLM layer. What is still wrong after the
layer's repairs — or never arrives — makes every criterion of that chunk **unscored**
(``passed=None``) with the reason: never ``False``, which would punish the policy for the
judge's failure. Sampling is at temperature 0; calls and tokens are accounted in the LLM layer's
tracker under the stages :data:`SPECIFIC_STAGE` and :data:`GENERAL_STAGE`.

``advisory_reference=True`` words the reference as one possible approach rather than the bar
to match, for tasks with many valid plans.

**Pitfalls.** A specific criterion with a negative weight describes a mistake. It is listed as
``[PITFALL] …`` and the prompt tells the judge that its verdict 1 means the plan makes the
mistake; the verdict stays "met or not", and the reward's weights turn a met pitfall into a
penalty. Weights are not shown to the judge. A chunk without pitfalls gets the same prompt as
before weights existed.

**Documents.** An instance built from a plain document (``source_kind="document"``, ARES) asks
a question, not for a research plan: its prompts (``prompts/*_document.md`` and the
``DOCUMENT_*`` wordings) speak of an answer. A paper's prompts are unchanged, byte for byte, so
cached judgements of paper instances stay valid.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Literal

from pydantic import Field

from papergym.llm.client import LLMClient
from papergym.llm.structured import strip_reasoning
from papergym.llm.types import LLMError, Message, Role, SamplingParams
from papergym.llm.verdicts import (
    Judgement,
    NumberedVerdict,
    failure_reason,
    in_order,
    with_room_for,
    wrong_count_reason,
)
from papergym.llm.verdicts import judgement_schema as schema_for
from papergym.quotes import quote_problem
from papergym.records import (
    Criterion,
    GeneralCriterion,
    Instance,
    SourceKind,
    Verdict,
    VerdictScale,
)
from papergym.reward.ablations import grade_value

Kind = Literal["specific", "general"]
Mode = Literal["all", "one", "k"]

SPECIFIC_STAGE = "reward:specific"
GENERAL_STAGE = "reward:general"
STAGES: dict[Kind, str] = {"specific": SPECIFIC_STAGE, "general": GENERAL_STAGE}
"""The stage names the judge's calls are accounted under in the usage table."""

TOKENS_PER_VERDICT = 224
"""Room for one verdict (id, a short reason, a quoted span, the 0/1) when sizing ``max_tokens``.

More than the leakage judge's :data:`papergym.audit.judge.TOKENS_PER_VERDICT` on purpose: the
rubric prompt asks for one or two sentences of reason, the leakage prompt for one."""

REFERENCE_INTRO = (
    "A reference answer, written from the paper the task comes from, is given for context: use "
    "it to understand what each criterion means. The plan does not have to match it; it only "
    "has to meet the criteria, in its own words."
)
ADVISORY_REFERENCE_INTRO = (
    "A reference answer is given below as one possible approach, not the bar to match. Many "
    "different plans can be good: use the reference only to understand what a criterion means, "
    "and never mark a criterion unmet because the plan takes a different route than the "
    "reference."
)

PITFALL_TAG = "[PITFALL]"
"""How a pitfall criterion (negative weight) is marked in the judge's list of criteria."""
PITFALL_RULES = (
    f"Criteria marked {PITFALL_TAG} describe a mistake, not a quality. For those, the verdict "
    "says whether the plan makes the mistake: 1 only when the plan clearly and explicitly makes "
    "it, otherwise 0 (a plan that avoids or warns against the mistake gets 0). The reason names "
    "where the plan makes the mistake, or says that it does not; the quote copies where."
)

GRADED_PITFALL_RULES = (
    f"Criteria marked {PITFALL_TAG} describe a mistake, not a quality. For those, the grade "
    "says how far the {noun} makes the mistake: 2 when it clearly and explicitly makes it, 1 "
    "when it partly or implicitly makes it, 0 otherwise (a {noun} that avoids or warns against "
    "the mistake gets 0). The reason names where the {noun} makes the mistake, or says that it "
    "does not; the quote copies where."
)

DOCUMENT_REFERENCE_INTRO = (
    "A reference answer, written from the document the question comes from, is given for "
    "context: use it to understand what each criterion means. The answer to grade does not have "
    "to match it; it only has to meet the criteria, in its own words."
)
DOCUMENT_ADVISORY_REFERENCE_INTRO = (
    "A reference answer is given below as one possible answer, not the bar to match. Many "
    "different answers can be good: use the reference only to understand what a criterion "
    "means, and never mark a criterion unmet because the answer takes a different route than "
    "the reference."
)
DOCUMENT_PITFALL_RULES = (
    f"Criteria marked {PITFALL_TAG} describe a mistake, not a quality. For those, the verdict "
    "says whether the answer makes the mistake: 1 only when the answer clearly and explicitly "
    "makes it, otherwise 0 (an answer that avoids or warns against the mistake gets 0). The "
    "reason names where the answer makes the mistake, or says that it does not; the quote "
    "copies where."
)


class JudgeVerdict(NumberedVerdict):
    """The judge's answer for one criterion: the reason, the quote that backs a "met", then
    the 0/1 verdict."""

    reason: str = Field(description="One or two sentences: what meets the criterion, or not.")
    quote: str | None = Field(
        default=None,
        description="For verdict 1: the span of the text that meets the criterion, copied "
        "word for word. null for verdict 0.",
    )
    verdict: Literal[0, 1] = Field(description="1 if the plan clearly meets the criterion.")


class RubricJudgement(Judgement[JudgeVerdict]):
    """All verdicts for one chunk of criteria."""


class GradedJudgeVerdict(NumberedVerdict):
    """A graded judge's answer for one criterion: the reason, the quote that backs a grade
    above 0, then the grade (0 not met, 1 partly met, 2 fully met)."""

    reason: str = Field(description="One or two sentences: what meets the criterion, or not.")
    quote: str | None = Field(
        default=None,
        description="For grade 1 or 2: the span of the text that meets the criterion, copied "
        "word for word. null for grade 0.",
    )
    grade: Literal[0, 1, 2] = Field(description="2 fully met, 1 partly or vaguely met, 0 not met.")


class GradedJudgement(Judgement[GradedJudgeVerdict]):
    """All graded verdicts for one chunk of criteria."""


def judgement_schema(count: int) -> type[RubricJudgement]:
    """The schema for a chunk of ``count`` criteria: exactly one verdict per id 1..count."""
    return schema_for(RubricJudgement, count)


def graded_judgement_schema(count: int) -> type[GradedJudgement]:
    """The graded schema for a chunk of ``count`` criteria: one grade per id 1..count."""
    return schema_for(GradedJudgement, count)


@functools.cache
def _template(
    kind: Kind, source_kind: SourceKind = "paper", scale: VerdictScale = "binary"
) -> Template:
    name = kind if source_kind == "paper" else f"{kind}_{source_kind}"
    if scale == "graded":  # the binary prompts stay byte for byte (cached judgements)
        name = f"{name}_graded"
    path = resources.files("papergym.reward").joinpath("prompts", f"{name}.md")
    return Template(path.read_text("utf-8"))


def chunked(items: Sequence[Criterion | GeneralCriterion], size: int) -> list[list[int]]:
    """Indices of ``items`` in consecutive chunks of at most ``size`` (one chunk when 0)."""
    indices = list(range(len(items)))
    if not indices:
        return []
    if size <= 0:
        return [indices]
    return [indices[i : i + size] for i in range(0, len(indices), size)]


def judge_messages(
    kind: Kind,
    question: str,
    criteria: Sequence[str],
    answer: str,
    *,
    reference: str | None = None,
    advisory_reference: bool = False,
    pitfalls: Sequence[bool] = (),
    source_kind: SourceKind = "paper",
    scale: VerdictScale = "binary",
) -> list[Message]:
    """The single user message asking about every criterion of one chunk.

    ``scale="graded"`` asks for a grade 0/1/2 per criterion (``prompts/*_graded.md``) instead
    of a 0/1 verdict; everything else is the same.

    ``pitfalls[i]`` marks criterion ``i`` as a pitfall (a negative weight): it is listed with
    :data:`PITFALL_TAG` and the prompt says that its verdict 1 means the plan makes the
    mistake. Without pitfalls the message is exactly what it was before weights existed, so
    cached judgements of unweighted rubrics stay valid. Weights themselves are never shown:
    each verdict is a strict yes/no on its criterion alone. ``source_kind="document"`` words
    the message for an answer to a question rather than a research plan.
    """
    document = source_kind == "document"
    if pitfalls and len(pitfalls) != len(criteria):
        raise ValueError(f"{len(pitfalls)} pitfall flags for {len(criteria)} criteria")
    flags = list(pitfalls) or [False] * len(criteria)
    numbered = "\n".join(
        f"{n}. {PITFALL_TAG + ' ' if pitfall else ''}{' '.join(c.split())}"
        for n, (c, pitfall) in enumerate(zip(criteria, flags, strict=True), start=1)
    )
    if reference is not None and reference.strip():
        if document:
            intro = (
                DOCUMENT_ADVISORY_REFERENCE_INTRO
                if advisory_reference
                else DOCUMENT_REFERENCE_INTRO
            )
        else:
            intro = ADVISORY_REFERENCE_INTRO if advisory_reference else REFERENCE_INTRO
        possible = "answer" if document else "approach"
        label = (
            f"Reference answer (one possible {possible}, not the bar to match)"
            if advisory_reference
            else "Reference answer"
        )
        block = f"{label}:\n<<<\n{reference.strip()}\n>>>\n"
    else:
        intro, block = "", ""
    rules = DOCUMENT_PITFALL_RULES if document else PITFALL_RULES
    if scale == "graded":
        rules = GRADED_PITFALL_RULES.format(noun="answer" if document else "plan")
    content = _template(kind, source_kind, scale).substitute(
        count=len(criteria),
        question=question.strip(),
        reference_intro=intro,
        reference_block=block,
        criteria=numbered,
        answer=answer,
        pitfall_rules=rules if any(flags) else "",
    )
    while "\n\n\n" in content:
        content = content.replace("\n\n\n", "\n\n")
    return [Message(role="user", content=content.strip())]


def unscored(ids: Sequence[str], kind: Kind, reason: str) -> list[Verdict]:
    """One unscored verdict per criterion id, all with ``reason``."""
    return [Verdict(criterion_id=i, passed=None, reason=reason, kind=kind) for i in ids]


def checked_verdict(ident: str, verdict: JudgeVerdict, answer: str, kind: Kind) -> Verdict:
    """One criterion's verdict, a "met" kept only when its quote is in ``answer``.

    A "met" whose quote is missing or not in the answer (:func:`~papergym.quotes.quote_problem`:
    case, whitespace, typographic quotes and dashes forgiven, paraphrase not) becomes not met,
    with ``unbacked`` saying why: the judge claimed evidence the answer does not hold. A "not
    met" keeps no quote.
    """
    reason = " ".join(verdict.reason.split())
    if verdict.verdict != 1:
        return Verdict(criterion_id=ident, passed=False, reason=reason, kind=kind)
    return _backed(ident, reason, verdict.quote, answer, kind, grade=None)


def checked_grade(ident: str, verdict: GradedJudgeVerdict, answer: str, kind: Kind) -> Verdict:
    """One criterion's graded verdict, a grade above 0 kept only when its quote is in
    ``answer``; else grade 0 with ``unbacked`` saying why (as :func:`checked_verdict`)."""
    reason = " ".join(verdict.reason.split())
    if verdict.grade == 0:
        return Verdict(criterion_id=ident, passed=False, reason=reason, kind=kind, grade=0.0)
    return _backed(ident, reason, verdict.quote, answer, kind, grade=grade_value(verdict.grade))


def _backed(
    ident: str, reason: str, quote: str | None, answer: str, kind: Kind, grade: float | None
) -> Verdict:
    """A claimed "met" (or a grade above 0) kept only when its quote is in ``answer``."""
    quote = " ".join(quote.split()) if quote is not None else None
    problem = quote_problem(quote, answer)
    return Verdict(
        criterion_id=ident,
        passed=problem is None,
        reason=reason,
        kind=kind,
        quote=quote or None,
        unbacked=problem,
        grade=None if grade is None else (grade if problem is None else 0.0),
    )


def verdicts_from(
    judgement: RubricJudgement | GradedJudgement, ids: Sequence[str], kind: Kind, answer: str
) -> list[Verdict] | None:
    """Verdicts in criterion order, each "met" (or grade above 0) checked against ``answer``
    (the text the judge saw), or ``None`` unless there is exactly one per id 1..n."""
    if isinstance(judgement, GradedJudgement):
        graded = in_order(judgement.verdicts, len(ids))
        if graded is None:
            return None
        return [checked_grade(i, v, answer, kind) for i, v in zip(ids, graded, strict=True)]
    ordered = in_order(judgement.verdicts, len(ids))
    if ordered is None:
        return None
    return [
        checked_verdict(ident, verdict, answer, kind)
        for ident, verdict in zip(ids, ordered, strict=True)
    ]


class RubricJudge:
    """Grades an answer against an instance's rubric with a frozen LLM judge (two passes)."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        mode: Mode = "all",
        k: int = 5,
        advisory_reference: bool = False,
        general_reference: bool = False,
        role: Role = "judge",
        verdict: VerdictScale = "binary",
    ) -> None:
        if verdict not in ("binary", "graded"):
            raise ValueError(f"verdict must be 'binary' or 'graded', not {verdict!r}")
        if mode not in ("all", "one", "k"):
            raise ValueError(f"mode must be 'all', 'one' or 'k', not {mode!r}")
        if mode == "k" and k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        self.llm = llm
        self.mode: Mode = mode
        self.k = k
        self.advisory_reference = advisory_reference
        self.general_reference = general_reference
        self.role: Role = role
        self.verdict: VerdictScale = verdict

    @property
    def name(self) -> str:
        """A short description of this judge, for :attr:`papergym.records.Score.judge`."""
        model = self.llm.config.for_role(self.role).model
        chunk = {"all": "all", "one": "one", "k": f"k={self.k}"}[self.mode]
        graded = ":graded" if self.verdict == "graded" else ""  # a binary name stays as it was
        return f"llm:{model}:{chunk}{graded}"

    @property
    def identity(self) -> str:
        """Everything that can change this judge's verdicts, for the reward's score cache.

        The name alone would let two judges on different endpoints, sampling settings or
        reference wordings share cached scores. Which model answers is the LLM layer's
        :meth:`~papergym.llm.client.LLMClient.identity` (the normalised endpoints, credentials
        stripped, or a local model's weights), as in the response cache's key.
        """
        backend = self.llm.config.for_role(self.role)
        return json.dumps(
            {
                "name": self.name,
                "role": self.role,
                "advisory_reference": self.advisory_reference,
                "general_reference": self.general_reference,
                "backend": self.llm.identity(self.role),
                "params": backend.params.model_dump(mode="json"),
                "repair_attempts": backend.repair_attempts,
                "max_tokens_ceiling": backend.max_tokens_ceiling,
            },
            sort_keys=True,
        )

    @property
    def chunk_size(self) -> int:
        """Criteria per call: 0 means all of a pass in one call."""
        return {"all": 0, "one": 1, "k": self.k}[self.mode]

    def _params(self, count: int) -> SamplingParams:
        params = self.llm.config.for_role(self.role).params.model_copy(update={"temperature": 0.0})
        return with_room_for(params, count, TOKENS_PER_VERDICT)

    async def _judge_chunk(
        self,
        kind: Kind,
        instance: Instance,
        criteria: Sequence[Criterion | GeneralCriterion],
        answer: str,
    ) -> list[Verdict]:
        ids = [c.id for c in criteria]
        with_reference = kind == "specific" or self.general_reference
        messages = judge_messages(
            kind,
            instance.question,
            [c.text for c in criteria],
            answer,
            reference=instance.reference_answer if with_reference else None,
            advisory_reference=self.advisory_reference,
            pitfalls=[isinstance(c, Criterion) and c.pitfall for c in criteria],
            source_kind=instance.source_kind,
            scale=self.verdict,
        )
        schema = (
            graded_judgement_schema(len(criteria))
            if self.verdict == "graded"
            else judgement_schema(len(criteria))
        )
        try:
            result = await self.llm.call(
                self.role,
                messages,
                schema=schema,
                params=self._params(len(criteria)),
                stage=STAGES[kind],
            )
        except LLMError as error:
            return unscored(ids, kind, failure_reason(error))
        verdicts = (
            verdicts_from(result.parsed, ids, kind, answer) if result.parsed is not None else None
        )
        if verdicts is None:
            return unscored(ids, kind, wrong_count_reason(len(ids)))
        return verdicts

    async def _judge_pass(
        self,
        kind: Kind,
        instance: Instance,
        criteria: Sequence[Criterion | GeneralCriterion],
        answer: str,
    ) -> list[Verdict]:
        if not criteria:
            return []
        if not answer:
            return [
                Verdict(criterion_id=c.id, passed=False, reason="the answer is empty", kind=kind)
                for c in criteria
            ]
        chunks = chunked(criteria, self.chunk_size)
        results = await asyncio.gather(
            *(
                self._judge_chunk(kind, instance, [criteria[i] for i in chunk], answer)
                for chunk in chunks
            )
        )
        return [v for chunk_verdicts in results for v in chunk_verdicts]

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        """(specific, general) verdicts for ``answer``, in rubric order; failures unscored."""
        plan = strip_reasoning(answer)
        specific, general = await asyncio.gather(
            self._judge_pass("specific", instance, instance.rubric.specific, plan),
            self._judge_pass("general", instance, instance.rubric.general, plan),
        )
        return specific, general
