"""Guards of the review reward against texts that flatter a word-weight reviewer.

A reviewer that weighs words (the offline baseline) rates a list of its favourite words, a
paper with those words appended, or a paper pasted twice, above the paper itself. These guards
read the text before the reviewer does, cheaply and offline, and each is a pure function:

- **fluency**: a sentence is fluent when it has a sentence's length and a sentence's share of
  function words ("the", "of", "we", ...); a word list has none. Only fluent sentences and
  headings are passed to the reviewer, and a text with too few fluent words is not reviewed
  (the fluency gate: the scale's lowest rating).
- **duplication**: a sentence seen before is passed once; the share of words in repeated
  sentences costs its weight.
- **repetition**: the share of words inside an n-gram that already occurred (a block pasted
  again, with or without its punctuation), beyond an allowance, costs its weight.
- **local order**: in written text a sentence shares more words with its neighbour than with a
  distant sentence; shuffled sentences do not. Below a ratio the rating is cut.
- **structure**: the written paper's sections (introduction, method, experiments, conclusion),
  each present, in order, and long enough; each one missing costs its share of the weight.

The rating above the scale's lowest value is multiplied by one factor per guard
(:func:`guarded_rating`); a guard *fires* when its factor is below 1, and the score names it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from papergym.records import Record
from papergym.review.settings import GuardSettings

FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "above",
        "below",
        "between",
        "through",
        "during",
        "before",
        "after",
        "since",
        "until",
        "against",
        "among",
        "within",
        "without",
        "upon",
        "via",
        "per",
        "as",
        "than",
        "and",
        "or",
        "but",
        "nor",
        "so",
        "yet",
        "if",
        "then",
        "else",
        "when",
        "while",
        "where",
        "whereas",
        "because",
        "although",
        "though",
        "unless",
        "whether",
        "that",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "this",
        "these",
        "those",
        "there",
        "here",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "we",
        "our",
        "us",
        "you",
        "your",
        "he",
        "she",
        "his",
        "her",
        "i",
        "me",
        "my",
        "one",
        "ones",
        "each",
        "every",
        "all",
        "any",
        "some",
        "such",
        "both",
        "either",
        "neither",
        "no",
        "not",
        "only",
        "also",
        "just",
        "very",
        "more",
        "most",
        "less",
        "least",
        "much",
        "many",
        "few",
        "other",
        "another",
        "same",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "has",
        "have",
        "had",
        "having",
        "do",
        "does",
        "did",
        "can",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "will",
        "would",
        "how",
        "why",
        "thus",
        "hence",
        "therefore",
        "however",
        "moreover",
        "furthermore",
        "indeed",
        "namely",
        "i.e",
        "e.g",
    ]
)
"""English function words: common in any sentence, rare in a list of topic words."""

_PARAGRAPH = re.compile(r"\n\s*\n")
_HEADING_LINE = re.compile(
    r"^[ \t]*(\\(?:sub)*section\*?\{[^}\n]*\}|#{1,4}[ \t][^\n]*)[ \t]*$", re.M
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z]+")
_HEADING = re.compile(
    r"^\s*(?:\\(?:sub)*section\*?\{(?P<latex>[^}]*)\}|#{1,4}\s*(?P<md>.+?)|"
    r"(?P<plain>(?:[0-9]+(?:\.[0-9]+)*\.?|[A-Z]\.?)?\s*[A-Za-z][^\n]{0,80}?))\s*$"
)
"""A heading: LaTeX ``\\section{..}``, markdown ``# ..``, or a short line alone in its
paragraph, optionally numbered ("3 EXPERIMENTS", "4.1 Setup")."""

_CAPTION = re.compile(r"(?i)(?:fig(?:ure)?|table|algorithm|listing)\b")

SECTION_WORDS: dict[str, tuple[str, ...]] = {
    "introduction": ("introduction",),
    "method": (
        "method",
        "approach",
        "model",
        "framework",
        "algorithm",
        "proposed",
        "preliminar",
        "background",
        "problem",
        "formulation",
        "analysis",
        "theory",
        "setting",
        "design",
    ),
    "experiments": ("experiment", "evaluation", "result", "empirical", "benchmark"),
    "conclusion": ("conclusion", "concluding", "discussion", "summary", "future work"),
}
"""Words a heading of each required section starts or contains (lower case, prefixes)."""


class GuardReport(Record):
    """What the guards measured of one text, and which fired."""

    sentences: int
    """Sentences read (headings included)."""
    fluent_words: int
    """Words in the fluent, first-seen sentences and headings passed to the reviewer."""
    nonfluent_share: float
    """Share of the text's words in sentences that are not fluent."""
    duplicate_share: float
    """Share of the text's words in sentences that repeat an earlier one."""
    repetition_share: float
    """Share of the text's words inside an n-gram that occurred earlier."""
    local_order: float | None
    """Neighbour vs distant sentence word overlap (None: too few sentences to say)."""
    sections: list[str]
    """The required sections found, present, in order and long enough."""
    factors: dict[str, float]
    """Each guard's factor on the rating above the scale's lowest (1: no effect)."""
    fired: list[str]
    """The guards whose factor is below 1, or ``fluency_gate`` when the text was not reviewed."""


def paragraphs(text: str) -> list[str]:
    """The text's paragraphs (split at blank lines), each on one line, empty ones left out; a
    LaTeX ``\\section{..}`` or markdown ``#`` line is a paragraph of its own (LaTeX and markdown
    run a heading straight into its text)."""
    spaced = _HEADING_LINE.sub(r"\n\n\1\n\n", text)
    return [" ".join(p.split()) for p in _PARAGRAPH.split(spaced) if p.strip()]


def split_sentences(text: str) -> list[str]:
    """The text's sentences in order: paragraphs split after ``.``, ``!`` or ``?``."""
    return [s for p in paragraphs(text) for s in _SENTENCE_END.split(p) if s]


def words_of(sentence: str) -> list[str]:
    """The sentence's lowercase words (letters only)."""
    return _WORD.findall(sentence.lower())


def heading_of(paragraph: str, max_words: int) -> str | None:
    """The heading text when ``paragraph`` is a heading (see ``_HEADING``), else None."""
    if len(paragraph.split()) > max_words:
        return None
    match = _HEADING.match(paragraph)
    if match is None:
        return None
    heading = next(g for g in match.group("latex", "md", "plain") if g is not None).strip()
    if match.group("plain") is None:
        return heading
    # a plain line in lower case is a fragment, and a caption names a figure, not a section
    first = next((c for c in heading if c.isalpha()), "")
    return heading if first.isupper() and not _CAPTION.match(heading) else None


def function_word_share(words: Sequence[str]) -> float:
    """Share of ``words`` that are function words (0.0 for no words)."""
    return sum(w in FUNCTION_WORDS for w in words) / len(words) if words else 0.0


def is_fluent(words: Sequence[str], settings: GuardSettings) -> bool:
    """Whether a sentence of ``words`` reads as a sentence: a sentence's length and a
    sentence's share of function words."""
    if not settings.min_sentence_words <= len(words) <= settings.max_sentence_words:
        return False
    return function_word_share(words) >= settings.min_function_share


def repetition_share(words: Sequence[str], n: int) -> float:
    """Share of ``words`` inside an ``n``-gram that occurred earlier in them (0.0 when
    shorter than ``n``): a block pasted again counts, a common phrase rarely spans ``n``."""
    if len(words) < n:
        return 0.0
    seen: set[tuple[str, ...]] = set()
    covered = [False] * len(words)
    for start in range(len(words) - n + 1):
        gram = tuple(words[start : start + n])
        if gram in seen:
            covered[start : start + n] = [True] * n
        seen.add(gram)
    return sum(covered) / len(words)


def local_order(sentences: Sequence[Sequence[str]], min_sentences: int) -> float | None:
    """Mean word overlap (Jaccard of content words) of neighbouring sentences over that of
    sentences far apart (a quarter, a third and half the text away, wrapping round); None with
    fewer than ``min_sentences`` non-empty sentences or no overlap far apart. Written text is
    well above 1; shuffled sentences are about 1."""
    bags = [frozenset(w for w in s if w not in FUNCTION_WORDS and len(w) > 2) for s in sentences]
    bags = [b for b in bags if b]
    count = len(bags)
    if count < max(min_sentences, 4):
        return None
    near = math.fsum(_jaccard(bags[i], bags[i + 1]) for i in range(count - 1)) / (count - 1)
    offsets = sorted({count // 4, count // 3, count // 2})
    distant = math.fsum(
        _jaccard(bags[i], bags[(i + k) % count]) for k in offsets for i in range(count)
    ) / (count * len(offsets))
    return near / distant if distant > 0.0 else None


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def section_of(heading: str) -> str | None:
    """The required section a heading names (see :data:`SECTION_WORDS`), or None."""
    lowered = heading.lower()
    for section, words in SECTION_WORDS.items():
        if any(word in lowered for word in words):
            return section
    return None


def found_sections(blocks: Sequence[tuple[str | None, int]], min_words: int) -> list[str]:
    """The required sections found in ``blocks`` — (heading or None, words of the paragraph)
    in order — in the order of :data:`SECTION_WORDS`: a section counts when a heading names
    it and at least ``min_words`` words follow one such heading before the next heading. Order
    is not required (a title naming a "model" comes first; shuffling is local order's job)."""
    lengths: dict[str, int] = {}
    current: str | None = None
    for heading, words in blocks:
        if heading is not None:
            current = section_of(heading)
            if current is not None:
                lengths.setdefault(current, 0)
        elif current is not None:
            lengths[current] = lengths[current] + words
    # the longest stretch under one heading is what counts; a sum over repeats is close enough
    return [name for name in SECTION_WORDS if lengths.get(name, -1) >= min_words]


def _blocks(text: str, settings: GuardSettings) -> list[tuple[str | None, list[str]]]:
    """The text's paragraphs as (section heading or None, its sentences). Only the first
    heading naming each required section is one: other short lines are read as sentences
    (so lines of favourite words dressed as headings are not read)."""
    blocks: list[tuple[str | None, list[str]]] = []
    named: set[str] = set()
    for paragraph in paragraphs(text):
        heading = heading_of(paragraph, settings.max_heading_words)
        section = section_of(heading) if heading is not None else None
        if heading is not None and section is not None and section not in named:
            named.add(section)
            blocks.append((heading, [paragraph]))
        else:
            blocks.append((None, [s for s in _SENTENCE_END.split(paragraph) if s]))
    return blocks


def readable_text(text: str, settings: GuardSettings) -> tuple[str, GuardReport]:
    """(what the reviewer reads of ``text``: its section headings and its fluent sentences,
    each once, as written; what the guards measured, no factors yet: :func:`guarded_rating`)."""
    kept: list[str] = []
    seen: set[tuple[str, ...]] = set()
    count = total = nonfluent = duplicate = 0
    fluent: list[list[str]] = []
    lengths: list[tuple[str | None, int]] = []
    for heading, sentences in _blocks(text, settings):
        kept_here: list[str] = []
        kept_words = 0
        for sentence in sentences:
            words = words_of(sentence)
            count += 1
            total += len(words)
            if heading is None and not is_fluent(words, settings):
                nonfluent += len(words)
            elif tuple(words) in seen:  # read once; a repeated heading is short, not counted
                duplicate += len(words) if heading is None else 0
            else:
                seen.add(tuple(words))
                kept_here.append(sentence)
                kept_words += len(words)
                if heading is None:
                    fluent.append(words)
        lengths.append((heading, 0 if heading is not None else kept_words))
        if kept_here:
            kept.append(" ".join(kept_here))
    report = GuardReport(
        sentences=count,
        fluent_words=sum(len(w) for w in fluent),
        nonfluent_share=nonfluent / total if total else 1.0,
        duplicate_share=duplicate / total if total else 0.0,
        repetition_share=repetition_share(
            [w for words in fluent for w in words], settings.repetition_ngram
        ),
        local_order=local_order(fluent, settings.min_order_sentences),
        sections=found_sections(lengths, settings.min_section_words),
        factors={},
        fired=[],
    )
    return "\n\n".join(kept), report


def guard_factors(report: GuardReport, settings: GuardSettings) -> dict[str, float]:
    """Each guard's factor on the rating above the scale's lowest, from what was measured."""
    excess_repetition = max(0.0, report.repetition_share - settings.repetition_allowance)
    excess_duplicate = max(0.0, report.duplicate_share - settings.duplication_allowance)
    excess_nonfluent = max(0.0, report.nonfluent_share - settings.nonfluent_allowance)
    order = report.local_order
    missing = len(SECTION_WORDS) - len(report.sections)
    return {
        "duplication": _unit(1.0 - settings.duplication_weight * excess_duplicate),
        "repetition": _unit(1.0 - settings.repetition_weight * excess_repetition),
        "fluency": _unit(1.0 - settings.fluency_weight * excess_nonfluent),
        "local_order": settings.order_factor
        if order is not None and order < settings.min_local_order
        else 1.0,
        "structure": _unit(1.0 - settings.structure_weight * missing / len(SECTION_WORDS)),
    }


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def guarded_rating(
    rating: float, report: GuardReport, settings: GuardSettings, low: float
) -> tuple[float, GuardReport]:
    """(the rating after the guards, the report with each factor and the guards that fired):
    the rating above ``low`` times every factor, or ``low`` when too few fluent words were
    read (the fluency gate)."""
    if report.fluent_words < settings.min_fluent_words:
        gated = report.model_copy(update={"factors": {}, "fired": ["fluency_gate"]})
        return low, gated
    factors = guard_factors(report, settings)
    fired = [name for name, factor in factors.items() if factor < 1.0]
    guarded = low + max(0.0, rating - low) * math.prod(factors.values())
    return guarded, report.model_copy(update={"factors": factors, "fired": fired})
