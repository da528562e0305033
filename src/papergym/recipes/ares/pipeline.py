"""The ARES steps, in order, and the instance a finished draft becomes.

=============  =================================================================  ============
step           what it does                                                        LLM calls
=============  =================================================================  ============
prefilter      heuristic rules (:mod:`.prefilter`); off with ``ares.prefilter``   0
classify       suitable for questions? reason first (:mod:`.classify`)            1
domain         one of the configured domains + persona (:mod:`.domains`)          1 (0 offline
                                                                                   or embedding)
cogenerate     question, reference, weighted rubric in one call                   1
verify_qa      leakage screen per criterion, then self-contained / faithful /     1
               gives-away check (:mod:`.verify_qa`)
verify_rubric  well-formed, weights, pitfall, diversity, then coverage            1
=============  =================================================================  ============

Offline (no client) the list is prefilter → domain by embedding; :func:`needs_llm` is the one
line that says what the rest needs. Every drop is a :class:`~papergym.recipes.steps.Reject`
whose reason starts with a short kind (``min_words: ...``, ``unsuitable: ...``), so drops are
counted by step and kind (:func:`reason_kind`).
"""

from __future__ import annotations

from collections.abc import Callable

from papergym.audit.overlap import Embedder
from papergym.audit.settings import AuditSection
from papergym.embed import embed
from papergym.llm.client import LLMClient
from papergym.recipes.ares.classify import Classifier
from papergym.recipes.ares.cogenerate import CoGenerator
from papergym.recipes.ares.domains import EmbeddingDomains, LLMDomains
from papergym.recipes.ares.prefilter import prefilter_reason
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.ares.verify_qa import QAVerifier
from papergym.recipes.ares.verify_rubric import RubricVerifier
from papergym.recipes.steps import Reject, Step, in_thread
from papergym.records import Criterion, Instance, Rubric, content_hash

DOMAIN_FIELDS = ("domain", "persona", "domain_choice")
LLM_STEPS = ("classify", "cogenerate", "verify_qa", "verify_rubric")


def ares_steps(
    section: AresSection,
    audit: AuditSection,
    client: LLMClient | None,
    embedder: Embedder = embed,
) -> list[Step[AresDraft]]:
    """The ARES steps of ``section`` (``audit``: the leakage screen's thresholds); with
    ``client`` None only those that need no LLM."""
    steps: list[Step[AresDraft]] = []
    if section.prefilter:
        steps.append(Step("prefilter", in_thread(prefilter_step(section))))
    if client is None or section.domain_by == "embedding":
        domains = EmbeddingDomains(section, embedder)
        domain_step = Step("domain", in_thread(domains.run), DOMAIN_FIELDS)
    else:
        domain_step = Step("domain", LLMDomains(client, section).run, DOMAIN_FIELDS)
    if client is None:
        return [*steps, domain_step]
    return [
        *steps,
        Step("classify", Classifier(client, section.max_classify_words).run, ("suitability",)),
        domain_step,
        Step("cogenerate", CoGenerator(client, section).run, ("qa",)),
        Step("verify_qa", QAVerifier(client, section, audit, embedder).run, ("qa", "qa_check")),
        Step(
            "verify_rubric", RubricVerifier(client, section, embedder).run, ("qa", "rubric_check")
        ),
    ]


def prefilter_step(section: AresSection) -> Callable[[AresDraft], AresDraft | Reject]:
    """The prefilter as a step function: the draft unchanged, or the first failing rule."""

    def run(draft: AresDraft) -> AresDraft | Reject:
        reason = prefilter_reason(draft.document.text, section)
        return draft if reason is None else Reject(reason)

    return run


def needs_llm() -> str:
    """The one line an offline ARES build ends with: what the remaining steps need."""
    return (
        f"ARES's {', '.join(LLM_STEPS)} steps need an LLM: pass --llm-config FILE, or --base-url "
        "and --model, or set llm in the -c file (or $PAPERGYM_LLM_CONFIG); the documents the "
        "offline steps kept are written"
    )


def reason_kind(reason: str) -> str:
    """The short kind a drop reason starts with (``min_words``, ``unsuitable``...)."""
    head = reason.split(":", 1)[0].strip()
    return head if head and " " not in head else reason


def to_instance(draft: AresDraft) -> Instance:
    """A finished draft as an :class:`Instance` (``source_kind="document"``, recipe ``ares``).

    Desired criteria keep their positive weights, pitfalls their negative ones, both with the
    leakage screen's verdicts; rank 1 is the heaviest. There is no general rubric: ARES's
    reward is the weighted sum over the question-specific criteria (SPEC §3).
    """
    qa = draft.need_qa()
    document = draft.document
    source_id = content_hash({"text": document.text})
    ordered = sorted(qa.criteria, key=lambda c: -abs(c.weight))
    criteria = tuple(
        Criterion(
            id="c-" + content_hash({"document": source_id, "text": c.text}, 12),
            text=c.text,
            # the paper-shaped dimension field: ARES criteria are all about the answer's content
            dimension="general",
            origin="answer",
            rank=rank,
            leakage=c.leakage,
            weight=float(c.weight),
        )
        for rank, c in enumerate(ordered, start=1)
    )
    removed = len(draft.qa_check.leaked) if draft.qa_check else 0
    if draft.rubric_check is not None:
        removed += len(draft.rubric_check.duplicates) + len(draft.rubric_check.removed)
    note = f"{removed} co-generated criteria removed by verification" if removed else ""
    title = document.meta.get("title")
    return Instance(
        id=Instance.make_id("ares", "llm", source_id),
        recipe="ares",
        builder="llm",
        paper_id=source_id,
        title=title if isinstance(title, str) else "",
        domain=draft.domain or "",
        source_path=document.url or f"{document.source}#{document.id}",
        question=qa.question,
        reference_answer=qa.reference,
        rubric=Rubric(specific=criteria, general=(), note=note),
        source_kind="document",
    )
