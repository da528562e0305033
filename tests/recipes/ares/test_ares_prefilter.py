"""The heuristic prefilter: each rule on a document made to fail it, and good prose passing."""

from __future__ import annotations

import pytest
from ares_texts import GOOD

from papergym.recipes.ares.prefilter import (
    RULES,
    duplicate_share,
    paragraphs_of,
    prefilter_reason,
    rule_of,
)
from papergym.recipes.ares.settings import AresSection

LIMITS = AresSection(min_words=50, max_words=1000)
LINES = GOOD.splitlines()[2:]
THIRDS = ["\n".join(LINES[0:4]), "\n".join(LINES[4:8]), "\n".join(LINES[8:])]


def test_good_prose_passes_every_rule() -> None:
    assert prefilter_reason(GOOD, LIMITS) is None
    assert all(rule(GOOD, LIMITS) is None for rule in RULES)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("", "empty"),
        ("   \n\n ", "empty"),
        ("Too short to ask anything about, really.", "min_words"),
        (GOOD * 40, "max_words"),
        ("a b c d e f g h i j. " * 20, "mean_word_length"),
        (
            "internationalisation-configuration-management-responsibilities " * 60,
            "mean_word_length",
        ),
        (GOOD + " #tag" * 40, "symbol_ratio"),
        (GOOD + "\n" + "12345 67890 3.14 2718 " * 30, "alpha_words"),
        (GOOD + "\n" + "a1b2c3d4e5f6=+/%$ " * 80, "non_alpha_chars"),
        ("Cats dogs birds fish horses cows sheep goats pigs ducks. " * 10, "stop_words"),
        (GOOD + "\nLorem ipsum dolor sit amet, consectetur adipiscing elit.", "boilerplate"),
        (
            "\n".join(f"- item number {i} of the list of things to buy" for i in range(30)),
            "bullet_lines",
        ),
        (
            "\n".join(f"The best offer of the year for the house {i}..." for i in range(30)),
            "ellipsis_lines",
        ),
        ("\n".join(f"Home of the year {i} and the news" for i in range(30)), "punctuated_lines"),
        (
            GOOD + "\n".join(["Subscribe to the newsletter and save with the offer."] * 20),
            "duplicate_lines",
        ),
        (
            "\n\n".join(f"{part}\n\nCall us today for a free quote." for part in THIRDS),
            "duplicate_paragraphs",
        ),
        (
            GOOD
            + "\n".join(
                f"We use cookies, see the privacy policy of the site ({i})." for i in range(6)
            ),
            "boilerplate",
        ),
    ],
)
def test_each_rule_names_itself(text: str, rule: str) -> None:
    reason = prefilter_reason(text, LIMITS)
    assert reason is not None and rule_of(reason) == rule, reason


def test_limits_come_from_the_config() -> None:
    assert prefilter_reason(GOOD, AresSection(min_words=10_000)) is not None
    lenient = AresSection(min_words=1, min_punctuated_lines=0.0, min_stop_words=0)
    assert prefilter_reason("Home of the year\nNews\nSport", lenient) is None


def test_duplicate_share_counts_repeats_of_earlier_items() -> None:
    assert duplicate_share(["a", "b", "a", "a"]) == 0.5
    assert duplicate_share([]) == 0.0
    assert paragraphs_of("one\n\n  two  words\n \nthree") == ["one", "two words", "three"]
