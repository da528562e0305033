"""Pure rules the offline judge applies before a passage may count as meeting a criterion.

Two ways to earn the offline judge's reward without writing a plan, and the rule against each:

Word salad (:func:`salad_violations`, :func:`is_coherent`)
    Sentence embeddings and word coverage barely notice word order, so the words of a good
    answer (or of the criteria) shuffled score nearly as well as the answer. English puts
    function words in a narrow set of orders: a determiner is followed by a noun phrase, not by
    another determiner, a preposition or a full stop; a preposition does not end a sentence;
    "The" and "We" are capitalised only where a sentence starts. A shuffle breaks these orders
    several times per sentence, while prose breaks them almost never. A passage with more
    breaks than :data:`SALAD_ALLOWANCE` allows, or with almost no function words at all (a
    keyword list, :data:`MIN_FUNCTION_SHARE`), is not a sentence and meets nothing.

Restating the rubric (:func:`restates`)
    The extractive builder writes a criterion as the handful of distinctive words a plan must
    cover ("The plan covers: parallel scan; sequence length."). An answer passage made only of
    the rubric's words (its novelty, the share of its key words no criterion has, below
    :data:`MIN_NOVELTY`) says nothing the rubric did not: a copied criterion, a fragment of
    one, or several criteria run together. A plan sentence names them *and* says what is done
    with them.

One frame filled with the rubric's words (:func:`templated`)
    The restating rule is met by any filler: "In this plan we will carefully study the X, Y
    and Z, with a rigorous protocol for every step." repeated with each criterion's words
    passes both rules above. What gives it away is the frame: the words beyond the rubric's
    (the passage's *frame*) are the same in every sentence, while each sentence of a plan says
    something of its own. A sentence whose frame mostly repeats an earlier sentence's frame
    (:data:`TEMPLATE_OVERLAP`) counts for nothing; the first of them still counts. This stops
    the one template a policy converges to first; a policy that varies its filler sentence by
    sentence is not stopped by any rule of this module (docs/reward.md says so).
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set

DETERMINERS = frozenset({"the", "a", "an", "this", "these", "those", "its", "their", "our"})
"""Words that must be followed by (a modifier of) a noun."""
PREPOSITIONS = frozenset(
    {"of", "in", "on", "at", "for", "with", "by", "from", "into", "onto", "over", "under"}
    | {"between", "through", "across", "via", "within", "among", "towards", "upon"}
)
"""Prepositions that need an object ("to" is left out: "to be", "to use" are fine)."""
CONJUNCTIONS = frozenset({"and", "or", "nor", "but"})
AUXILIARIES = frozenset({"is", "are", "was", "were", "be", "been", "will", "can", "should"})
PRONOUNS = frozenset({"we", "it", "they"})
FUNCTION_WORDS = DETERMINERS | PREPOSITIONS | CONJUNCTIONS | AUXILIARIES | PRONOUNS | {"to"}
"""The words whose order :func:`salad_violations` checks, and whose share it counts."""

_CANNOT_FOLLOW_DETERMINER = DETERMINERS | PREPOSITIONS | CONJUNCTIONS | AUXILIARIES | PRONOUNS
_CANNOT_FOLLOW_PREPOSITION = PREPOSITIONS | CONJUNCTIONS | AUXILIARIES
_CAPITALISED_INSIDE = frozenset({"The", "We", "Our", "In", "For", "Of", "And", "This", "These"})

SALAD_ALLOWANCE = 1
"""Order breaks a passage may have per full :data:`WORDS_PER_ALLOWANCE` words (LaTeX
leftovers break an order now and then in a long sentence; a shuffle breaks several per
sentence). A shorter passage may have none."""
WORDS_PER_ALLOWANCE = 40
MIN_FUNCTION_SHARE = 0.08
"""Below this share of function words a passage is a word list, not a sentence."""
MIN_NOVELTY = 0.3
"""An answer passage needs this share of key words beyond the criterion's to count for it."""

TEMPLATE_OVERLAP = 0.6
"""Jaccard overlap of two sentences' frames above which the later one is a template copy."""
MIN_FRAME_WORDS = 3
"""Frames smaller than this are too short to call a template (short plan sentences share
"evaluate" and "model" by chance)."""

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|[.,;:!?]")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def salad_violations(text: str) -> int:
    """How many times ``text`` breaks an order English keeps between function words.

    Counted: a determiner followed by a determiner, preposition, conjunction, auxiliary,
    pronoun or punctuation; a preposition followed by a preposition, conjunction, auxiliary or
    punctuation; a determiner or preposition ending the text; "The", "We", "In", ...
    capitalised after the first word other than after a full stop or colon.

    >>> salad_violations("We parallelize the recurrence over the sequence length.")
    0
    >>> salad_violations("sequence the over We recurrence the parallelize length.")
    2
    """
    tokens = _tokens(text)
    count = 0
    for n, token in enumerate(tokens):
        after = tokens[n + 1].lower() if n + 1 < len(tokens) else None
        count += _breaks_order(token.lower(), after)
        if n > 0 and token in _CAPITALISED_INSIDE and tokens[n - 1] not in {".", ":", "!", "?"}:
            count += 1
    return count


_PUNCTUATION = frozenset({".", ",", ";", ":", "!", "?"})


def _breaks_order(word: str, after: str | None) -> bool:
    """Whether ``word`` followed by ``after`` (None: the end) breaks a function-word order."""
    if word in DETERMINERS:
        return after is None or after in _CANNOT_FOLLOW_DETERMINER or after in _PUNCTUATION
    if word in PREPOSITIONS:
        return after is None or after in _CANNOT_FOLLOW_PREPOSITION or after in _PUNCTUATION
    return False


def function_share(text: str) -> float:
    """The share of ``text``'s words that are function words (0 for no words)."""
    words = [t.lower() for t in _tokens(text) if t[0].isalpha()]
    return sum(w in FUNCTION_WORDS for w in words) / len(words) if words else 0.0


def is_coherent(text: str) -> bool:
    """Whether ``text`` reads as prose: few order breaks for its length, and function words.

    >>> is_coherent("We fit the model to each light curve with a Gaussian process.")
    True
    >>> is_coherent("model light each curve Gaussian process fit.")
    False
    """
    words = sum(1 for t in _tokens(text) if t[0].isalpha())
    if words == 0:
        return False
    allowed = SALAD_ALLOWANCE * (words // WORDS_PER_ALLOWANCE)
    if salad_violations(text) > allowed:
        return False
    return function_share(text) >= MIN_FUNCTION_SHARE


def novelty(criterion_words: Set[str], passage_words: Set[str]) -> float:
    """The share of the passage's key words that the criterion does not have (0 for none)."""
    if not passage_words:
        return 0.0
    return len(passage_words - criterion_words) / len(passage_words)


def restates(criterion_words: Set[str], passage_words: Set[str]) -> bool:
    """Whether a passage only repeats the criterion's own words (see the module docstring).

    >>> restates({"parallel", "scan"}, {"parallel", "scan"})
    True
    >>> restates({"parallel", "scan"}, {"parallel", "scan", "recurrence", "gpu", "kernel"})
    False
    """
    return novelty(criterion_words, passage_words) < MIN_NOVELTY


def frame(passage_words: Set[str], rubric_words: Set[str]) -> frozenset[str]:
    """The passage's key words that no criterion has: what the passage adds to the rubric."""
    return frozenset(passage_words) - frozenset(rubric_words)


def templated(frames: Sequence[Set[str]]) -> list[bool]:
    """Per sentence (in answer order), whether its frame repeats an earlier sentence's frame.

    Two frames repeat when both have :data:`MIN_FRAME_WORDS` words or more and their Jaccard
    overlap reaches :data:`TEMPLATE_OVERLAP`; the earlier sentence is not marked.

    >>> templated([{"careful", "rigorous", "protocol"}, {"careful", "rigorous", "protocol"}])
    [False, True]
    >>> templated([{"fit", "kernel", "curve"}, {"held-out", "error", "compare"}])
    [False, False]
    """
    marked: list[bool] = []
    for j, later in enumerate(frames):
        marked.append(
            len(later) >= MIN_FRAME_WORDS
            and any(
                len(earlier) >= MIN_FRAME_WORDS and _jaccard(earlier, later) >= TEMPLATE_OVERLAP
                for earlier in frames[:j]
            )
        )
    return marked


def _jaccard(a: Set[str], b: Set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0
