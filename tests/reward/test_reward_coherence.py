"""The offline judge's pure rules: word salad and restating the rubric."""

from __future__ import annotations

import random

from papergym.reward.coherence import (
    function_share,
    is_coherent,
    novelty,
    restates,
    salad_violations,
    templated,
)

PROSE = [
    "We fit the model to each light curve with a Gaussian process and compare it to a baseline.",
    "The identification uses differences in reform timing across regions.",
    "Standard errors are clustered at the regional level.",
    "A greedy search over the kernel grammar picks the structure with the best likelihood.",
]


def test_coherence_prose_passes() -> None:
    for sentence in PROSE:
        assert salad_violations(sentence) == 0, sentence
        assert is_coherent(sentence), sentence


def test_coherence_shuffled_prose_fails() -> None:
    text = " ".join(PROSE)
    rejected = 0
    for seed in range(20):
        words = text.split()
        random.Random(seed).shuffle(words)
        rejected += not is_coherent(" ".join(words))
    assert rejected == 20


def test_coherence_keyword_list_and_orders() -> None:
    assert not is_coherent("base kernels; sums; products; greedy search; kernel grammar.")
    assert function_share("base kernels sums") == 0.0
    assert salad_violations("We use the of model.") == 1  # determiner before a preposition
    assert salad_violations("We fit the model with.") == 1  # a preposition ends it
    assert salad_violations("We fit a model The data.") == 1  # "The" inside a sentence
    assert salad_violations("We fit a model. The data are noisy.") == 0
    assert not is_coherent("")


def test_restates_counts_words_beyond_the_rubric() -> None:
    rubric = {"kernel", "grammar", "search"}
    assert restates(rubric, {"kernel", "grammar"})
    assert restates(rubric, set())
    assert not restates(rubric, {"kernel", "grammar", "greedy", "likelihood", "structure"})
    assert novelty(rubric, {"kernel", "likelihood"}) == 0.5


def test_templated_marks_later_sentences_that_repeat_a_frame() -> None:
    frame = {"careful", "rigorous", "transparent", "protocol"}
    assert templated([frame, frame | {"step"}, frame]) == [False, True, True]
    # frames below three words are too short to call a template
    assert templated([{"evaluate", "model"}, {"evaluate", "model"}]) == [False, False]
    # parallel plan sentences sharing one or two words are not templates
    first = {"fit", "kernel", "marginal", "likelihood", "search"}
    second = {"fit", "kernel", "held-out", "error", "airline"}
    assert templated([first, second]) == [False, False]
    assert templated([]) == []
