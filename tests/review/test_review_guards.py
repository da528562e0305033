"""The review reward's guards, each a pure function, and how they combine into a rating."""

from __future__ import annotations

import pytest

from papergym.review.guards import (
    GuardReport,
    found_sections,
    function_word_share,
    guard_factors,
    guarded_rating,
    heading_of,
    is_fluent,
    local_order,
    readable_text,
    repetition_share,
    section_of,
    split_sentences,
    words_of,
)
from papergym.review.probes import shuffled_sentences
from papergym.review.settings import GuardSettings
from support.review_papers import synthetic_paper

SETTINGS = GuardSettings()
SENTENCE = "We show that the method improves the accuracy of the model on every benchmark."
WORD_LIST = "robust accuracy benchmark novel efficient theoretical scalable"


def report(**measured: object) -> GuardReport:
    values: dict[str, object] = {
        "sentences": 100,
        "fluent_words": 2000,
        "nonfluent_share": 0.1,
        "duplicate_share": 0.0,
        "repetition_share": 0.0,
        "local_order": 3.0,
        "sections": ["introduction", "method", "experiments", "conclusion"],
        "factors": {},
        "fired": [],
    }
    values.update(measured)
    return GuardReport.model_validate(values)


def test_function_word_share_tells_a_sentence_from_a_word_list() -> None:
    assert function_word_share(words_of(SENTENCE)) > 0.3
    assert function_word_share(words_of(WORD_LIST)) == 0.0
    assert function_word_share([]) == 0.0


def test_a_fluent_sentence_has_a_sentences_length_and_function_words() -> None:
    assert is_fluent(words_of(SENTENCE), SETTINGS)
    assert not is_fluent(words_of(WORD_LIST), SETTINGS)
    assert not is_fluent(["the", "of"], SETTINGS)  # too short
    long = words_of(" ".join([SENTENCE.rstrip(".")] * 10))
    assert not is_fluent(long, SETTINGS)  # no full stop in 140 words
    assert is_fluent(
        words_of(WORD_LIST + " the of"), SETTINGS.model_copy(update={"min_function_share": 0.2})
    )


def test_repetition_share_counts_words_in_an_ngram_seen_before() -> None:
    words = words_of(SENTENCE)
    assert repetition_share(words, 8) == 0.0
    assert repetition_share(words + words, 8) == pytest.approx(0.5)
    assert repetition_share(words[:5], 8) == 0.0  # shorter than n


def test_local_order_is_high_for_written_text_and_about_one_shuffled() -> None:
    paper = synthetic_paper(paragraphs_per_section=4)
    ordered = [words_of(s) for s in split_sentences(paper)]
    shuffled = [words_of(s) for s in split_sentences(shuffled_sentences(paper, "seed"))]
    high, low = local_order(ordered, 20), local_order(shuffled, 20)
    assert high is not None and low is not None
    assert high > SETTINGS.min_local_order > low
    assert local_order(ordered[:10], 20) is None  # too few sentences to say


def test_headings_and_the_sections_they_name() -> None:
    assert heading_of("3 EXPERIMENTS", 12) == "3 EXPERIMENTS"
    assert heading_of("## Method", 12) == "Method"
    assert heading_of(r"\section{Conclusion}", 12) == "Conclusion"
    assert heading_of(SENTENCE * 2, 12) is None  # too long to be a heading
    assert section_of("4.2 Experimental results") == "experiments"
    assert section_of("5 Related work") is None
    blocks = [("1 Introduction", 0), (None, 50), ("2 Our approach", 0), (None, 10)]
    assert found_sections(blocks, 40) == ["introduction"]  # the method section is too short
    assert found_sections(blocks, 5) == ["introduction", "method"]


def test_readable_text_reads_fluent_sentences_once_and_measures_the_rest() -> None:
    paper = synthetic_paper()
    readable, measured = readable_text(paper, SETTINGS)
    assert measured.sections == ["introduction", "method", "experiments", "conclusion"]
    assert measured.duplicate_share == 0.0 and measured.nonfluent_share == 0.0
    doubled, twice = readable_text(paper + "\n\n" + paper + "\n\n" + WORD_LIST * 3, SETTINGS)
    assert doubled == readable  # the copy and the word list are not read
    assert 0.4 < twice.duplicate_share < 0.5 and twice.nonfluent_share > 0.0
    nothing, listed = readable_text(WORD_LIST, SETTINGS)
    assert nothing == "" and listed.fluent_words == 0 and listed.nonfluent_share == 1.0


def test_each_guard_has_its_factor() -> None:
    assert set(guard_factors(report(), SETTINGS).values()) == {1.0}
    duplicated = guard_factors(report(duplicate_share=0.5), SETTINGS)["duplication"]
    assert duplicated == pytest.approx(1 - SETTINGS.duplication_weight * 0.4)
    repeated = guard_factors(report(repetition_share=0.2), SETTINGS)["repetition"]
    assert repeated == pytest.approx(1 - SETTINGS.repetition_weight * 0.1)
    assert guard_factors(report(nonfluent_share=0.55), SETTINGS)["fluency"] == pytest.approx(0.8)
    assert guard_factors(report(local_order=1.0), SETTINGS)["local_order"] == 0.5
    assert guard_factors(report(local_order=None), SETTINGS)["local_order"] == 1.0
    half = guard_factors(report(sections=["introduction", "method"]), SETTINGS)["structure"]
    assert half == pytest.approx(1 - SETTINGS.structure_weight / 2)


def test_guarded_rating_multiplies_above_the_lowest_and_names_what_fired() -> None:
    rating, unchanged = guarded_rating(6.0, report(), SETTINGS, 1.0)
    assert rating == 6.0 and unchanged.fired == []
    rating, fired = guarded_rating(6.0, report(local_order=1.0, duplicate_share=0.5), SETTINGS, 1)
    assert rating == pytest.approx(1 + 5 * 0.5 * (1 - 1.5 * 0.4))
    assert fired.fired == ["duplication", "local_order"]
    assert fired.factors["local_order"] == 0.5
    gated, closed = guarded_rating(9.0, report(fluent_words=10), SETTINGS, 1.0)
    assert gated == 1.0 and closed.fired == ["fluency_gate"]
    below, _ = guarded_rating(0.5, report(local_order=1.0), SETTINGS, 1.0)
    assert below == 1.0  # clipped to the scale


def test_latex_and_markdown_headings_run_into_their_text_still_count() -> None:
    def body(topic: str) -> str:  # sentences of their own: a repeated one is not read
        return " ".join(f"We show that the {w} of the {topic} is sound and useful." for w in "abcd")

    latex = f"\\section{{Introduction}}\n{body('model')}\n\\section{{Method}}\n{body('data')}"
    assert readable_text(latex, SETTINGS)[1].sections == ["introduction", "method"]
    markdown = f"## Experiments\n{body('task')}\n## Conclusion\n{body('work')}"
    assert readable_text(markdown, SETTINGS)[1].sections == ["experiments", "conclusion"]
