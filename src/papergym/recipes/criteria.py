"""Rubric criteria of the extractive builder: written, screened, deduplicated and ranked.

The criteria come from the most central answer-stage sentences that can stand alone, written
in requirement form (:func:`requirement_form`): "The plan covers: X; Y; Z." with the sentence's
rarest terms, the paper's own names left out. A criterion is not a copy of a reference
sentence, so listing the rubric is not a plan: the offline judge does not count an answer
sentence made only of a criterion's words (``papergym.reward.coherence``), while the reference
sentence says what is done with them. The overlap gate drops those the
question already states (cosine or content-word overlap); near-duplicates are skipped; a
method-heavy quota splits the rubric between the two dimensions (SPEC §2, DESIGN.md).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
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
from papergym.reward.offline import PLAN_FRAMING, key_words

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


KEY_TERMS_MAX = 5
"""Terms a criterion names at most; at most half (rounded up) of the sentence's key words."""
_WORD = re.compile(r"[A-Za-z][A-Za-z-]*")


_GENERIC = frozenset(
    {"furthermore", "moreover", "additionally", "respectively", "approximately", "possible"}
    | {"interesting", "important", "different", "several", "various", "certain", "example"}
    | {"consider", "allows", "provide", "provides", "able", "particular", "general", "first"}
)
"""Words that say nothing about what a plan does, never named in a criterion."""


def _term_rank(
    word: str, frequency: Mapping[str, int], in_term: set[str], order: Mapping[str, int]
) -> tuple[bool, bool, int, int, int]:
    """Sort key, best first: a word the paper uses more than once (a topic word, not a passing
    adverb), part of a multi-word term, rarer, longer, earlier; "-ly" adverbs last."""
    count = frequency.get(word, 0)
    return (word.endswith("ly") or count < 2, word not in in_term, count, -len(word), order[word])


def sentence_frequency(sentences: Mapping[StageName, list[str]]) -> Counter[str]:
    """In how many of the stage sentences each content word occurs (rare = distinctive)."""
    counts: Counter[str] = Counter()
    for stage_sentences in sentences.values():
        for sentence in stage_sentences:
            counts.update(content_words(sentence))
    return counts


def requirement_form(sentence: str, frequency: Mapping[str, int], terms: set[str]) -> str | None:
    """The sentence as "The plan covers: X; Y." naming its rarest content words.

    Up to :data:`KEY_TERMS_MAX` words and at most half (rounded up) of its key words (so the
    sentence itself says more than the criterion), rarest first by ``frequency`` (ties: longer,
    then earlier), the paper's own names (``terms``) and plan-framing words left out. Chosen
    words next to each other in the sentence stay together as one phrase. None when fewer
    than two words qualify.
    """
    tokens = _WORD.findall(sentence)
    named = {t.lower() for t in terms}
    allowed = content_words(sentence) - named - PLAN_FRAMING
    budget = min(KEY_TERMS_MAX, math.ceil(len(key_words(sentence)) / 2))
    lowered = [t.lower() for t in tokens]
    order = {w: n for n, w in enumerate(dict.fromkeys(lowered))}
    in_term = {  # a word next to another content word: part of a term ("parallel scan")
        w
        for n, w in enumerate(lowered)
        if w in allowed
        and (
            (n > 0 and lowered[n - 1] in allowed)
            or (n + 1 < len(lowered) and lowered[n + 1] in allowed)
        )
    }
    ranked = sorted(allowed - _GENERIC, key=lambda w: _term_rank(w, frequency, in_term, order))
    chosen = set(ranked[:budget])
    if len(chosen) < 2:
        return None
    phrases: list[list[str]] = []
    previous = -2
    for n, token in enumerate(tokens):
        if token.lower() not in chosen:
            continue
        word = token if token.isupper() or token[1:] != token[1:].lower() else token.lower()
        if n == previous + 1:
            phrases[-1].append(word)
        else:
            phrases.append([word])
        previous = n
        chosen.discard(token.lower())
    return "The plan covers: " + "; ".join(" ".join(p) for p in phrases) + "."


def _criterion_candidates(
    spec: RecipeSpec,
    sentences: dict[StageName, list[str]],
    question_sentences: list[str],
    terms: set[str],
    vocabulary: frozenset[str],
) -> list[Pick]:
    """Every answer-stage sentence fit to be a criterion, scored, best first."""
    frequency = sentence_frequency(sentences)
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
            if not criterion_source(sentence) or as_plan_criterion(sentence, vocabulary) is None:
                continue
            written = requirement_form(_unnamed(sentence, terms), frequency, terms)
            if written is None:
                continue
            words = content_words(sentence)
            pool.append(
                Pick(
                    text=written,
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
