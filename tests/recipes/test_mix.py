"""The discipline mix: parsing, counts, the seeded sample and the metadata.json reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.recipes.mix import (
    MixSelection,
    achieved_mix,
    parse_mix,
    read_categories,
    select_mix,
    target_counts,
)


def test_a_mix_parses_to_shares() -> None:
    assert parse_mix("cs=0.5, physics=0.25,econ=0.25") == {
        "cs": 0.5,
        "physics": 0.25,
        "econ": 0.25,
    }
    assert parse_mix("math=1") == {"math": 1.0}
    assert parse_mix("cs=0.3333333,stat=0.6666667") == {"cs": 0.3333333, "stat": 0.6666667}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cs=0.5,physics=0.4", "sum to 0.9"),
        ("cs=1.5,physics=-0.5", "each must be in \\(0, 1\\]"),
        ("cs=0,physics=1", "each must be in"),
        ("chem=1", "unknown discipline 'chem' \\(known: cs, physics, econ, math, stat, bio"),
        ("cs", "not KEY=SHARE"),
        ("cs=half", "not a number"),
        ("", "names no discipline"),
    ],
)
def test_a_bad_mix_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_mix(text)


def test_counts_round_by_largest_remainder_to_the_target() -> None:
    assert target_counts({"cs": 0.5, "physics": 0.25, "econ": 0.25}, 10) == {
        "cs": 5,
        "physics": 3,
        "econ": 2,
    }
    counts = target_counts({"cs": 1 / 3, "stat": 1 / 3, "bio": 1 / 3}, 100)
    assert sum(counts.values()) == 100 and sorted(counts.values()) == [33, 33, 34]


def _pool(n_cs: int, n_physics: int) -> dict[str, str]:
    found = {f"cs/{i:02d}": "computer science" for i in range(n_cs)}
    found.update({f"ph/{i:02d}": "physics" for i in range(n_physics)})
    found["other/x"] = "unknown"
    return found


def test_the_same_seed_selects_the_same_papers_and_another_seed_others() -> None:
    pool = _pool(20, 20)
    first = select_mix(pool, {"cs": 0.5, "physics": 0.5}, 10, seed=3)
    assert first == select_mix(dict(reversed(pool.items())), {"cs": 0.5, "physics": 0.5}, 10, 3)
    assert first.selected != select_mix(pool, {"cs": 0.5, "physics": 0.5}, 10, 4).selected
    assert sum(s.startswith("cs/") for s in first.selected) == 5
    assert "other/x" not in first.selected and first.shortfalls() == []


def test_a_discipline_short_of_papers_gives_all_it_has_and_is_not_topped_up() -> None:
    selection = select_mix(_pool(2, 20), {"cs": 0.5, "physics": 0.5}, 10, seed=0)
    rows = {row.key: row for row in selection.rows}
    assert (rows["cs"].wanted, rows["cs"].available, rows["cs"].selected) == (5, 2, 2)
    assert rows["physics"].selected == 5 and len(selection.selected) == 7
    [line] = selection.shortfalls()
    assert "cs has 2 paper(s), fewer than the 5" in line


def test_adding_papers_of_one_discipline_leaves_the_others_sample_alone() -> None:
    mix = {"cs": 0.5, "physics": 0.5}
    before = select_mix(_pool(20, 20), mix, 10, seed=1)
    after = select_mix(_pool(20, 40), mix, 10, seed=1)
    assert [s for s in before.selected if s.startswith("cs/")] == [
        s for s in after.selected if s.startswith("cs/")
    ]


def test_achieved_mix_counts_instances_per_discipline_and_others_apart() -> None:
    selection = MixSelection.model_validate(
        select_mix(_pool(4, 4), {"cs": 0.5, "physics": 0.5}, 4, seed=0).model_dump()
    )
    rows = achieved_mix(selection, ["computer science", "physics", "physics", "chemistry"])
    by = {row["discipline"]: row for row in rows}
    assert by["cs"]["instances"] == 1 and by["physics"]["instance_share"] == 0.5
    assert by["cs"]["selected_share"] == 0.5 and by["other"]["instances"] == 1


def test_categories_are_read_primary_first_ignoring_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "metadata.json"
    assert read_categories(path) == ()  # no file: no categories
    path.write_text(
        json.dumps(
            {
                "id": "1",
                "categories": ["stat.ML", "cs.LG"],
                "primary_category": "cs.LG",
                "licence": "cc-by",
                "new_key": {"x": 1},
            }
        )
    )
    assert read_categories(path) == ("cs.LG", "stat.ML")
    path.write_text(json.dumps({"categories": "hep-th gr-qc"}))
    assert read_categories(path) == ("hep-th", "gr-qc")
    path.write_text(json.dumps({"id": "2"}))
    assert read_categories(path) == ()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"categories": [1]}'])
def test_a_broken_metadata_file_is_bad_input_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "metadata.json"
    path.write_text(text)
    with pytest.raises(BadInputError) as caught:
        read_categories(path)
    assert "metadata.json" in str(caught.value) and "\n" not in str(caught.value)
