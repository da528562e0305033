"""arXiv categories → disciplines: the shipped data file and the pure lookup."""

from __future__ import annotations

import pytest

from papergym.recipes.disciplines import (
    discipline_of,
    key_of_label,
    label_of_key,
    load_disciplines,
    parse_disciplines,
)


def test_the_shipped_file_names_the_eight_disciplines_by_their_mix_keys() -> None:
    found = {d.key: d.label for d in load_disciplines().disciplines}
    assert found == {
        "cs": "computer science",
        "physics": "physics",
        "econ": "economics",
        "math": "mathematics",
        "stat": "statistics",
        "bio": "biology",
        "finance": "finance",
        "eng": "engineering",
    }


@pytest.mark.parametrize(
    ("categories", "label"),
    [
        (["cs.LG"], "computer science"),
        (["astro-ph.GA"], "physics"),
        (["astro-ph"], "physics"),
        (["cond-mat.str-el"], "physics"),
        (["hep-th"], "physics"),
        (["gr-qc"], "physics"),
        (["quant-ph"], "physics"),
        (["nucl-ex"], "physics"),
        (["nlin.CD"], "physics"),
        (["math.AG"], "mathematics"),
        (["math.ST"], "statistics"),  # the exact category wins over its archive
        (["stat.ML"], "statistics"),
        (["q-bio.NC"], "biology"),
        (["q-fin.PR"], "finance"),
        (["econ.EM"], "economics"),
        (["eess.SP"], "engineering"),
    ],
)
def test_a_category_maps_to_its_discipline(categories: list[str], label: str) -> None:
    assert discipline_of(categories) == label


def test_the_first_known_category_decides_the_primary_first() -> None:
    assert discipline_of(["stat.ML", "cs.LG"]) == "statistics"
    assert discipline_of(["cs.LG", "stat.ML"]) == "computer science"
    assert discipline_of(["no-such.XX", " q-fin.ST "]) == "finance"


def test_unknown_or_no_categories_give_none() -> None:
    assert discipline_of([]) is None
    assert discipline_of(["chem-dyn", "xx.YY"]) is None


def test_keys_and_labels_convert_both_ways_and_an_unknown_key_lists_the_known() -> None:
    assert label_of_key("bio") == "biology"
    assert key_of_label("biology") == "bio"
    assert key_of_label("chemistry") is None
    with pytest.raises(KeyError, match="known: cs, physics"):
        label_of_key("chem")


def test_a_category_claimed_by_two_disciplines_is_refused() -> None:
    data = {"a": {"key": "a", "categories": ["cs"]}, "b": {"key": "b", "categories": ["cs"]}}
    with pytest.raises(ValueError, match="two disciplines"):
        parse_disciplines(data)
    custom = parse_disciplines({"a": {"key": "a", "categories": ["cs"]}})
    assert discipline_of(["cs.AI"], custom) == "a"
