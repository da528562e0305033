"""The quote check: copying forgiven (case, whitespace, typography), paraphrase not."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from papergym.quotes import (
    QUOTE_MISSING,
    QUOTE_NOT_FOUND,
    QuoteTally,
    normalise,
    normalise_quote,
    quote_problem,
    tally,
)

ANSWER = (
    "We train a **sparse** router on the “long-range arena” — five seeds each.\n"
    "Then we\tablate  the gate’s temperature and report the ﬁnal accuracy…"
)


@pytest.mark.parametrize(
    "quote",
    [
        "We train a sparse router",  # the answer's Markdown emphasis is not part of the words
        "we TRAIN a   sparse\nrouter",  # case and whitespace
        '"long-range arena" - five seeds',  # straight quotes and a plain dash for typographic
        "“long-range arena”—five seeds",  # the same characters as the answer
        "the gate's temperature",  # a straight apostrophe for ’
        "report the final accuracy",  # the fi ligature
        "...we ablate the gate's temperature...",  # ellipses marking an excerpt
        "“we ablate the gate’s temperature”",  # the quotation marks a judge wraps it in
        "seeds each. Then we ablate",  # across a sentence and a line break
    ],
)
def test_a_copied_span_is_found(quote: str) -> None:
    assert quote_problem(quote, ANSWER) is None


@pytest.mark.parametrize(
    "quote",
    [
        "We train a sparse gate",  # one word changed
        "we train a router",  # a word left out
        "five seeds each, then we ablate",  # punctuation is part of the span
        "We ablate the gate's temperature ... report the final accuracy",  # an elision
        "sparse router trained on the long-range arena",  # a paraphrase
        "ten seeds",
    ],
)
def test_a_changed_span_is_not_found(quote: str) -> None:
    assert quote_problem(quote, ANSWER) == QUOTE_NOT_FOUND


@pytest.mark.parametrize("quote", [None, "", "   ", '"..."', "…", "- -"])
def test_no_quote_is_missing(quote: str | None) -> None:
    assert quote_problem(quote, ANSWER) == QUOTE_MISSING


def test_normalisation_keeps_words_and_their_order() -> None:
    assert normalise("A  —  B") == normalise("a-b") == "a-b"
    assert normalise("Ｗide\u00a0text") == "wide text"  # NFKC: full-width letters, no-break space
    assert normalise_quote("  'it'  ") == "it"
    assert normalise("b a") != normalise("a b")


@dataclass(frozen=True)
class _Verdict:
    passed: bool | None
    quote: str | None = None
    unbacked: str | None = None


def test_tally_counts_only_checked_met_claims() -> None:
    verdicts = [
        _Verdict(True, "a span"),  # backed
        _Verdict(False, None, QUOTE_NOT_FOUND),  # unbacked
        _Verdict(False, None, QUOTE_MISSING),  # unbacked
        _Verdict(False),  # not met: no claim
        _Verdict(None),  # unscored: no claim
        _Verdict(True),  # met by a judge that does not quote: not checked
    ]
    counted = tally(verdicts)
    assert counted == QuoteTally(backed=1, unbacked=2)
    assert counted.claimed == 3 and counted.rate == pytest.approx(2 / 3)
    assert counted + QuoteTally(1, 0) == QuoteTally(2, 2)


def test_a_judge_that_quotes_nothing_has_no_rate() -> None:
    assert tally([_Verdict(True), _Verdict(False)]).rate is None  # not 0: nothing was checked
