"""Rubric criteria of the extractive builder: written, screened, deduplicated and ranked.

The criteria are the most central answer-stage sentences that can stand alone, turned into
"The plan ..." statements with the paper's own names removed. The overlap gate drops those the
question already states (cosine or content-word overlap); near-duplicates are skipped; a
method-heavy quota splits the rubric between the two dimensions (SPEC §2, DESIGN.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from papergym.embed import cosine_matrix
from papergym.recipes.sections import SCORE_DIGITS, Vectors, cached_vectors
from papergym.recipes.specs import STAGE_DIMENSION, RecipeSpec
from papergym.recipes.text import (
    as_plan_criterion,
    content_words,
    has_numeric_result,
    has_result_claim,
    is_mathy,
    talks_about_document,
    without_lead_in,
)
from papergym.records import RUBRIC_SIZE, StageName

# MiniLM cosine: paraphrases score about 0.8 and above, near-duplicates above 0.85.
DUPLICATE_SIMILARITY = 0.85
QUESTION_SIMILARITY = 0.8
# Above it, a question-side sentence restates (reveals) an answer-side one, in both builders.
REVEAL_SIMILARITY = 0.8
QUESTION_OVERLAP = 0.7

# Openings that lean on an antecedent the sentence does not carry.
ANAPHORA = re.compile(
    r"^(?:It|Its|This|These|They|Their|Such|Thus|Hence|Therefore|Here|He|She)\b", re.IGNORECASE
)
# Asides and imperatives ("We note ...", "Consider the GILR ...") are not statements about a plan.
_COMMENTARY = re.compile(
    r"^(?:We (?:note|remark|emphasi[sz]e|stress|mention|recall|refer)|Now|Consider|Note|Recall|"
    r"Suppose|Let|Assume|Observe|Imagine)\b",
    re.IGNORECASE,
)


def centrality(vectors: Vectors) -> list[float]:
    """Cosine of each row to the normalised centroid of all rows, rounded."""
    if len(vectors) == 0:
        return []
    centroid = vectors.mean(axis=0)
    centroid = centroid / (float(np.linalg.norm(centroid)) or 1.0)
    return [round(float(x), SCORE_DIGITS) for x in vectors @ centroid]


@dataclass(frozen=True)
class Pick:
    """One candidate criterion, with the scores that rank and screen it."""

    text: str  # the criterion as written
    source: str  # the paper sentence it came from
    dimension: Literal["method", "experiment"]
    score: float
    position: int
    similarity: float  # to the closest question sentence
    overlap: float  # share of its content words found in the question's sentences


@dataclass
class Screen:
    """What the criteria selection threw away, for the rubric note."""

    usable: int = 0
    duplicates: int = 0
    leaked: int = 0


def criterion_source(sentence: str) -> bool:
    """A stage sentence fit to become a criterion: self-contained, about design, no numbers."""
    opening = without_lead_in(sentence)
    return (
        not has_numeric_result(sentence)
        and not has_result_claim(sentence)
        and "[ref]" not in sentence
        and not sentence.endswith("?")
        and not is_mathy(sentence)
        and not ANAPHORA.match(opening)
        and not _COMMENTARY.match(opening)
        and not talks_about_document(sentence)
        and len(content_words(sentence)) >= 5
    )


def _quotas(spec: RecipeSpec) -> dict[str, int]:
    """Method-heavy split when both dimensions are wanted (the paper reports about 64/36)."""
    if len(spec.dimensions) == 1:
        return {spec.dimensions[0]: RUBRIC_SIZE}
    return {"method": 6, "experiment": 4}


_PRODUCT_NOUNS = (
    r"(?:library|package|model|method|code|codes|kernel|estimator|framework|software|features?|"
    r"project|api|implementation|developers|community|ecosystem|users|functions?|algorithm|"
    r"process|term|terms|approach|system)\b"
)


def _unnamed(text: str, terms: set[str]) -> str:
    """``text`` with the paper's own names replaced: a plan cannot be expected to use them."""
    for term in sorted(terms, key=len, reverse=True):
        name = re.escape(term)
        # "the main SciPy library" → "the main library"; "using LEGWORK," → "using the method,"
        text = re.sub(rf"(?<![\w-]){name}\s+(?={_PRODUCT_NOUNS})", "", text)
        text = re.sub(rf"(?<![\w-])(?:[Tt]he\s+)?{name}(?![\w-])", "the method", text)
    return text[:1].upper() + text[1:]


def _criterion_candidates(
    spec: RecipeSpec,
    sentences: dict[StageName, list[str]],
    question_sentences: list[str],
    terms: set[str],
    vocabulary: frozenset[str],
) -> list[Pick]:
    """Every answer-stage sentence fit to be a criterion, scored, best first."""
    question_words = content_words(" ".join(question_sentences))
    question_vectors = cached_vectors(question_sentences)
    pool: list[Pick] = []
    for stage in spec.answer_stages:
        stage_sentences = sentences[stage]
        if not stage_sentences:
            continue
        vectors = cached_vectors(stage_sentences)
        scores = centrality(vectors)
        closest = (
            cosine_matrix(vectors, question_vectors).max(axis=1)
            if question_sentences
            else np.zeros(len(stage_sentences), np.float32)
        )
        for index, sentence in enumerate(stage_sentences):
            written = as_plan_criterion(sentence, vocabulary)
            if not criterion_source(sentence) or written is None:
                continue
            words = content_words(sentence)
            pool.append(
                Pick(
                    text=_unnamed(written, terms),
                    source=sentence,
                    dimension=STAGE_DIMENSION[stage],
                    score=scores[index],
                    position=index,
                    similarity=round(float(closest[index]), SCORE_DIGITS),
                    overlap=round(len(words & question_words) / len(words), SCORE_DIGITS),
                )
            )
    return sorted(pool, key=lambda p: (-p.score, p.dimension != "method", p.position))


def select_criteria(
    spec: RecipeSpec,
    sentences: dict[StageName, list[str]],
    question_sentences: list[str],
    screen: Screen,
    terms: set[str],
    vocabulary: frozenset[str],
) -> list[Pick]:
    """Up to 10 criteria: screened against the question, deduplicated, quota per dimension."""
    pool = _criterion_candidates(spec, sentences, question_sentences, terms, vocabulary)
    screen.usable = len(pool)
    # The overlap screen: a criterion the question already states would reward restating it.
    leaked = [
        p for p in pool if p.similarity > QUESTION_SIMILARITY or p.overlap >= QUESTION_OVERLAP
    ]
    screen.leaked = len(leaked)
    quotas = _quotas(spec)
    kept: list[Pick] = []
    duplicates: set[str] = set()
    # First pass fills each dimension's quota; the second fills what is left from either.
    for respect_quota in (True, False):
        for pick in pool:
            if len(kept) >= RUBRIC_SIZE:
                break
            if pick in kept or pick in leaked or pick.source in duplicates:
                continue
            if respect_quota and [k.dimension for k in kept].count(pick.dimension) >= quotas.get(
                pick.dimension, 0
            ):
                continue
            vector = cached_vectors([pick.source])[0]
            if any(
                float(vector @ cached_vectors([k.source])[0]) > DUPLICATE_SIMILARITY for k in kept
            ):
                duplicates.add(pick.source)
                continue
            kept.append(pick)
    screen.duplicates = len(duplicates)
    return sorted(kept, key=lambda p: (-p.score, p.dimension != "method", p.position))


def rubric_note(count: int, spec: RecipeSpec, screen: Screen) -> str:
    if count >= RUBRIC_SIZE:
        return ""
    stages = " and ".join(spec.answer_stages)
    return (
        f"{count} criteria instead of {RUBRIC_SIZE}: the {stages} stage(s) gave "
        f"{screen.usable} usable sentences (numeric, result, anaphoric and short ones excluded); "
        f"{screen.duplicates} near-duplicates and {screen.leaked} too close to the question "
        "were dropped."
    )
