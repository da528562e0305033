"""The overlap screen on hand-made cases, with the real bundled MiniLM embedder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from papergym.audit.formats import AuditCriterion, AuditItem
from papergym.audit.overlap import (
    EMBEDDING_THRESHOLD,
    LEXICAL_THRESHOLD,
    content_stems,
    lexical_overlap,
    screen_instances,
    screen_items,
    sentences,
    stem,
)
from papergym.embed import embed
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, LeakageVerdict, Rubric

QUESTION = (
    "Long-context language models are expensive because self-attention scales quadratically "
    "with sequence length. Existing sparse attention methods rely on fixed patterns and lose "
    "accuracy on retrieval tasks. It remains unclear how to reduce the cost of attention on "
    "long sequences without hurting accuracy. Propose a research plan to address this gap."
)
COPY = "The plan reduces the cost of attention on long sequences without hurting accuracy."
PARAPHRASE = "The approach addresses the quadratic scaling of self-attention with sequence length."
DETAIL = "The gating network is trained jointly with the model using a straight-through estimator."
METRIC = "The plan measures wall-clock latency and memory against dense FlashAttention."


def _item(*criteria: str, question: str = QUESTION) -> AuditItem:
    return AuditItem(
        id="q",
        question=question,
        criteria=tuple(AuditCriterion(text=c) for c in criteria),
        source="test",
    )


def test_audit_stemming_and_content_words() -> None:
    assert stem("estimates") == stem("estimation") == stem("estimating") == stem("estimate")
    assert stem("uses") == stem("using") == stem("used")
    assert stem("biases") == stem("bias") and stem("classes") == "class"
    # stopwords and rubric boilerplate ("the plan proposes") carry no content
    assert content_stems("The plan proposes to use the attention layers") == {"attention", "layer"}
    assert lexical_overlap("The plan is good.", "anything") == 0.0  # no content words at all
    assert lexical_overlap("sparse attention mechanism", QUESTION) == 2 / 3


def test_audit_sentences_split_on_punctuation_and_lines() -> None:
    assert sentences("One. Two? Three!\nFour") == ["One.", "Two?", "Three!", "Four"]
    assert sentences("no punctuation") == ["no punctuation"]


def test_audit_overlap_flags_copies_and_paraphrases_not_method_details() -> None:
    [item] = screen_items([_item(COPY, PARAPHRASE, DETAIL, METRIC)])
    copy, paraphrase, detail, metric = (c.verdict("overlap") for c in item.criteria)
    assert copy is not None and copy.leaked is True
    assert copy.reason.startswith("lexical 1.00 / embedding 0.")
    assert paraphrase is not None and paraphrase.leaked is True
    for verdict in (detail, metric):
        assert verdict is not None and verdict.leaked is False
        assert verdict.score is not None and verdict.score < min(
            LEXICAL_THRESHOLD, EMBEDDING_THRESHOLD
        )
    # the score is the larger of the two signals, as the reason shows them
    assert copy.score is not None
    lexical, embedding = (float(part.split()[-1]) for part in copy.reason.split(" / "))
    assert abs(copy.score - max(lexical, embedding)) < 0.006


def test_audit_overlap_thresholds_are_parameters() -> None:
    [strict] = screen_items([_item(COPY)], lexical_threshold=1.01, embedding_threshold=1.01)
    assert strict.criteria[0].leakage[0].leaked is False
    [lenient] = screen_items([_item(METRIC)], lexical_threshold=0.0)
    assert lenient.criteria[0].leakage[0].leaked is True


def test_audit_overlap_embeds_a_whole_batch_once_and_replaces_old_verdicts() -> None:
    calls: list[int] = []

    def counting(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        calls.append(len(texts))
        return embed(texts)

    old_overlap = LeakageVerdict(method="overlap", leaked=True, score=0.99, reason="stale")
    judge = LeakageVerdict(method="judge", leaked=False, reason="kept")
    stale = AuditCriterion(text=DETAIL, leakage=(old_overlap, judge))
    items = [
        AuditItem(id="a", question=QUESTION, criteria=(stale,), source="t"),
        _item(COPY, METRIC, question="Short question about attention cost."),
        AuditItem(id="empty", question="No criteria here.", criteria=(), source="t"),
    ]
    screened = screen_items(items, embedder=counting)
    assert len(calls) == 1  # one embedding call for the whole batch
    first = screened[0].criteria[0]
    assert first.verdict("judge") == judge
    overlap = first.verdict("overlap")
    assert overlap is not None and overlap.reason != "stale" and overlap.leaked is False
    assert [v.method for v in first.leakage].count("overlap") == 1
    assert screened[2] == items[2]


def test_audit_screen_instances_returns_instances_with_verdicts() -> None:
    criteria = tuple(
        Criterion(id=f"c{n}", text=text, dimension="method", origin="answer", rank=n)
        for n, text in enumerate((COPY, DETAIL), start=1)
    )
    instance = Instance(
        id="i1",
        recipe="papergym",
        builder="extractive",
        paper_id="p",
        title="t",
        question=QUESTION,
        reference_answer="r",
        rubric=Rubric(specific=criteria, general=GENERAL_CRITERIA),
    )
    [screened] = screen_instances([instance])
    assert isinstance(screened, Instance)
    verdicts = [c.leakage for c in screened.rubric.specific]
    assert [v[0].method for v in verdicts] == ["overlap", "overlap"]
    assert [v[0].leaked for v in verdicts] == [True, False]
    assert screened.rubric.general == instance.rubric.general
    assert screened.model_dump(exclude={"rubric"}) == instance.model_dump(exclude={"rubric"})
