"""The cheap leakage screen: how much of a criterion is already in the question.

A criterion that restates the question can be satisfied by a plan that merely paraphrases the
question (SPEC §1), so the screen flags criteria that overlap the question in wording or in
meaning. It needs no LLM and runs on every build; the LLM judge (:mod:`.judge`) is the
authority, this is the candidate filter.

Two signals, per criterion:

* **lexical** — the share of the criterion's content words (lower-cased, stopwords and rubric
  boilerplate such as "the plan proposes" removed, lightly stemmed) that occur in the question.
  It is asymmetric on purpose: a long question mentioning everything should not dilute the
  score of a short criterion that copies a piece of it.
* **embedding** — the highest cosine similarity between the criterion and any sentence of the
  question (MiniLM, :mod:`papergym.embed`). Comparing against sentences, not the whole question,
  catches a criterion that paraphrases one sentence of a long question.

Thresholds (``leaked`` when either is met):

* :data:`LEXICAL_THRESHOLD` = 0.75 — three quarters of the criterion's content words in the
  question. A criterion about the method normally names components the question does not
  (the question is written from background only), so sharing the topic words gives ~0.3–0.6;
  near-copies score 0.8–1.0.
* :data:`EMBEDDING_THRESHOLD` = 0.80 — on all-MiniLM-L6-v2, same-topic but different-content
  sentence pairs sit around 0.4–0.7, paraphrases 0.8 and above. Below 0.8 the screen would flag
  most on-topic criteria, which is what a rubric for the question should be.

Both are parameters; the reported ``score`` is the larger of the two signals, so criteria can
be ranked regardless of which signal fired.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from papergym.audit.formats import AuditItem, item_from_instance
from papergym.audit.settings import EMBEDDING_THRESHOLD as EMBEDDING_THRESHOLD
from papergym.audit.settings import LEXICAL_THRESHOLD as LEXICAL_THRESHOLD
from papergym.embed import cosine_matrix, embed
from papergym.records import Instance, LeakageVerdict


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


Embedder = Callable[[Sequence[str]], npt.NDArray[np.float32]]
"""Texts → unit-length row vectors (default :func:`papergym.embed.embed`)."""

STOPWORDS = _words(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either
    else etc even ever every few for from further had has have having he her here hers him his
    how however i if in into is it its itself just least less like may me might more most much
    must my neither no nor not now of off on once one only or other others our ours out over
    own per rather same shall she should so some such than that the their theirs them then
    there these they this those though through thus to too under until up upon us very via
    was we were what when where whether which while who whom whose why will with within
    without would yet you your e g
    """
)
"""Function words: they carry no content, so sharing them says nothing about leakage."""

RUBRIC_FRAME_WORDS = _words(
    """
    plan plans proposal proposed propose proposes response answer answers solution approach
    include includes including included describe describes described mention mentions
    explain explains explicitly clearly specify specifies discuss discusses address addresses
    provide provides use uses using used method research study task question way make makes
    ensure ensures new novel
    """
)
"""Words that frame a criterion or a question ("the plan proposes...", "propose a research plan")
rather than say anything about its content; without them every criterion overlaps every question."""

_TOKEN = re.compile(r"[a-z][a-z0-9]*")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")

_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("izations", "ize"),
    ("ization", "ize"),
    ("ational", "ate"),
    ("ations", "ate"),
    ("ation", "ate"),
    ("ments", ""),
    ("ment", ""),
    ("ities", ""),
    ("ity", ""),
    ("nesses", ""),
    ("ness", ""),
    ("ingly", ""),
    ("ings", ""),
    ("ing", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("edly", ""),
    ("ed", ""),
    ("ly", ""),
)


def stem(word: str) -> str:
    """A light suffix-stripping stem, enough to match "estimates"/"estimation"/"estimating".

    Deliberately crude (no dictionary, no dependency): both sides go through the same function,
    so a consistent over-stemming still matches, and a screen tolerates a rare collision.
    """
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)] + replacement
            break
    else:
        if re.search(r"(?:s|x|z|ch|sh)es$", word) and len(word) > 4:
            word = word[:-2]
        elif word.endswith("s") and not re.search(r"(?:ss|us|is|as)$", word) and len(word) > 3:
            word = word[:-1]
    if len(word) > 2 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def content_stems(text: str) -> set[str]:
    """Stems of the words that carry content: no stopwords, frame words or single letters."""
    words = _TOKEN.findall(text.lower())
    return {
        stem(w) for w in words if len(w) > 1 and w not in STOPWORDS and w not in RUBRIC_FRAME_WORDS
    }


def lexical_overlap(criterion: str, question: str) -> float:
    """Share of the criterion's content words that the question contains (0 when it has none)."""
    wanted = content_stems(criterion)
    if not wanted:
        return 0.0
    return len(wanted & content_stems(question)) / len(wanted)


def sentences(text: str) -> list[str]:
    """The question's sentences (split at . ! ? ; and line breaks); the text itself if one."""
    parts = [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]
    return parts or [text.strip() or text]


def overlap_verdict(
    lexical: float,
    embedding: float,
    *,
    lexical_threshold: float = LEXICAL_THRESHOLD,
    embedding_threshold: float = EMBEDDING_THRESHOLD,
) -> LeakageVerdict:
    """The screen's verdict from its two signals."""
    leaked = lexical >= lexical_threshold or embedding >= embedding_threshold
    return LeakageVerdict(
        method="overlap",
        leaked=leaked,
        score=round(float(min(max(lexical, embedding, 0.0), 1.0)), 4),
        reason=f"lexical {lexical:.2f} / embedding {embedding:.2f}",
    )


def screen_items(
    items: Sequence[AuditItem],
    *,
    lexical_threshold: float = LEXICAL_THRESHOLD,
    embedding_threshold: float = EMBEDDING_THRESHOLD,
    embedder: Embedder = embed,
) -> list[AuditItem]:
    """Items with an overlap verdict on every criterion (an older one replaced).

    All criteria and question sentences of the batch are embedded in one call: the model's
    fixed cost and batching make that far faster than one call per item.
    """
    texts: list[str] = []
    index: dict[str, int] = {}

    def slot(text: str) -> int:
        if text not in index:
            index[text] = len(texts)
            texts.append(text)
        return index[text]

    plan = [
        ([slot(s) for s in sentences(item.question)], [slot(c.text) for c in item.criteria])
        for item in items
    ]
    vectors = embedder(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    screened: list[AuditItem] = []
    for item, (sentence_rows, criterion_rows) in zip(items, plan, strict=True):
        if not item.criteria:
            screened.append(item)
            continue
        similarity = cosine_matrix(vectors[criterion_rows], vectors[sentence_rows]).max(axis=1)
        verdicts = [
            overlap_verdict(
                lexical_overlap(criterion.text, item.question),
                float(similarity[row]),
                lexical_threshold=lexical_threshold,
                embedding_threshold=embedding_threshold,
            )
            for row, criterion in enumerate(item.criteria)
        ]
        screened.append(item.with_verdicts(verdicts))
    return screened


def attach_verdicts(instance: Instance, item: AuditItem) -> Instance:
    """``instance`` with the verdicts of its audited item on its specific criteria."""
    if len(item.criteria) != len(instance.rubric.specific):
        raise ValueError(f"instance {instance.id}: audited item has a different criterion count")
    specific = tuple(
        criterion.model_copy(update={"leakage": audited.leakage})
        for criterion, audited in zip(instance.rubric.specific, item.criteria, strict=True)
    )
    rubric = instance.rubric.model_copy(update={"specific": specific})
    return instance.model_copy(update={"rubric": rubric})


def screen_instances(
    instances: Sequence[Instance],
    *,
    lexical_threshold: float = LEXICAL_THRESHOLD,
    embedding_threshold: float = EMBEDDING_THRESHOLD,
    embedder: Embedder = embed,
) -> list[Instance]:
    """Instances whose specific criteria carry an overlap verdict (replacing an older one).

    What the build calls after writing rubrics; judge verdicts already there are kept.
    """
    items = [item_from_instance(i, source="") for i in instances]
    screened = screen_items(
        items,
        lexical_threshold=lexical_threshold,
        embedding_threshold=embedding_threshold,
        embedder=embedder,
    )
    return [attach_verdicts(i, s) for i, s in zip(instances, screened, strict=True)]
