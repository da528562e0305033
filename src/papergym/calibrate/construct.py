"""Criterion labels known by construction, for calibrating a rubric judge without a human and
without the judge: answers assembled from each criterion's source sentence in the reference,
so whether an answer meets a criterion follows from how it was made.

The extractive builder writes each criterion from one sentence of the reference answer. Each
criterion's source is found without the judge: the one sentence holding every phrase a
requirement-form criterion names ("The plan covers: X; Y."), or for an older copied criterion
the sentence most similar by characters (:mod:`difflib`, not the judge's embeddings);
criteria without a clear source, or sharing one, are left unlabelled. With the
sources of criteria split into two halves A and B (alternately, in rubric order), the answers
of an instance are:

* ``reference``: every source sentence — every criterion met;
* ``drop-half``: only A's sources — A met, B not;
* ``swap-half``: B's sources, with A's replaced by another instance's sources — B met, A not;
* ``word-salad``: every source sentence with its words shuffled — none met (a list of the
  right words in no order states no plan);
* ``other-paper``: another instance's sources — none met.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Sequence

from papergym.calibrate.labels import CriterionLabel
from papergym.records import Instance
from papergym.text import split_sentences

MIN_SOURCE_RATIO = 0.6
"""The least difflib ratio between a criterion and a reference sentence to call it its source."""

_FRAMES = ("the plan specifies that ", "the plan also ", "the plan ")


def _core(criterion: str) -> str:
    text = criterion.strip()
    for frame in _FRAMES:
        if text.lower().startswith(frame):
            return text[len(frame) :]
    return text


def _requirement_items(criterion: str) -> list[str]:
    """The items of a requirement-form criterion ("The plan covers: X; Y."), lower-cased."""
    head, colon, items = criterion.partition(":")
    if not colon or "covers" not in head.lower():
        return []
    return [i.strip().lower() for i in items.strip().rstrip(".").split(";") if i.strip()]


def _source(criterion: str, sentences: Sequence[str]) -> str | None:
    """The reference sentence a criterion was written from, or None when no sentence is clear.

    A requirement-form criterion names phrases of its sentence: the source is the one sentence
    holding every phrase (the most similar one by difflib when several do). An older criterion
    copies its sentence: the source is the most similar sentence, if similar enough."""
    lowered = [s.lower() for s in sentences]
    items = _requirement_items(criterion)
    candidates = (
        [n for n, s in enumerate(lowered) if all(i in s for i in items)]
        if items
        else list(range(len(sentences)))
    )
    core = _core(criterion).lower()
    ratios = {n: difflib.SequenceMatcher(None, core, lowered[n]).ratio() for n in candidates}
    if not ratios:
        return None
    best = max(ratios, key=lambda n: ratios[n])
    return sentences[best] if items or ratios[best] >= MIN_SOURCE_RATIO else None


def criterion_sources(instance: Instance) -> dict[str, str]:
    """Each criterion's source sentence in the reference (see the module), by criterion id."""
    sentences = split_sentences(instance.reference_answer)
    found: dict[str, str] = {}
    for criterion in instance.rubric.specific:
        source = _source(criterion.text, sentences)
        if source is not None:
            found[criterion.id] = source
    shared = {s for s in found.values() if list(found.values()).count(s) > 1}
    return {cid: s for cid, s in found.items() if s not in shared}


def _salad(sentence: str, rng: random.Random) -> str:
    words = sentence.rstrip(".").split()
    rng.shuffle(words)
    return " ".join(words) + "."


def constructed_labels(instance: Instance, other: Instance, seed: int = 0) -> list[CriterionLabel]:
    """The labels of ``instance``'s five constructed answers (see the module); ``other`` is a
    different paper's instance that lends its sources."""
    sources = criterion_sources(instance)
    lent = list(criterion_sources(other).values()) or split_sentences(other.reference_answer)
    ids = [c.id for c in instance.rubric.specific if c.id in sources]
    half_a, half_b = ids[0::2], ids[1::2]
    rng = random.Random(seed)
    swapped = [sources[c] if c in half_b else lent[n % len(lent)] for n, c in enumerate(ids)]
    answers: dict[str, tuple[str, set[str]]] = {
        "reference": (" ".join(sources[c] for c in ids), set(ids)),
        "drop-half": (" ".join(sources[c] for c in half_a), set(half_a)),
        "swap-half": (" ".join(swapped), set(half_b)),
        "word-salad": (" ".join(_salad(sources[c], rng) for c in ids), set()),
        "other-paper": (" ".join(lent), set()),
    }
    return [
        CriterionLabel(
            instance_id=instance.id,
            answer=text,
            criterion_id=c,
            met=1 if c in met else 0,
            note=f"construction: {kind}",
        )
        for kind, (text, met) in answers.items()
        for c in ids
    ]


def labelled_set(instances: Sequence[Instance], seed: int = 0) -> list[CriterionLabel]:
    """Constructed labels of every instance, each lent sources by the next paper's."""
    if len({i.paper_id for i in instances}) < 2:
        raise ValueError("constructed labels need instances of at least two papers")
    made: list[CriterionLabel] = []
    ring = list(instances)
    for n, instance in enumerate(ring):
        other = next(o for o in ring[n + 1 :] + ring[:n] if o.paper_id != instance.paper_id)
        made.extend(constructed_labels(instance, other, seed + n))
    return made
