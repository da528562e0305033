"""The both-dimensions gate after the merge (SPEC §2 step 6): a pure rule, checked by hand."""

from __future__ import annotations

from papergym.recipes.dimensions import Coverage, cover_dimensions

BOTH = ("method", "experiment")


def test_a_selection_holding_both_dimensions_is_kept_as_it_is() -> None:
    dims = ["method", "experiment", "method", "experiment"]
    assert cover_dimensions([2, 1, 0], [3], dims, BOTH) == Coverage((2, 1, 0))


def test_a_missing_dimension_is_repaired_by_one_swap_at_the_bottom() -> None:
    # candidates 0-3 are method, 4 and 5 experiment; the merge kept 0, 2, 1, 3 (best first)
    dims = ["method"] * 4 + ["experiment"] * 2
    result = cover_dimensions([0, 2, 1, 3], [4, 5], dims, BOTH)
    assert isinstance(result, Coverage)
    # the last-ranked method criterion (3) gives its place to the best dropped experiment (4)
    assert result.selected == (0, 2, 1, 4)
    assert "experiment" in result.repaired


def test_the_repair_takes_the_best_dropped_candidate_of_the_missing_dimension() -> None:
    dims = ["experiment", "experiment", "method", "experiment", "method", "method"]
    result = cover_dimensions([0, 1, 3], [4, 2, 5], dims, BOTH)
    assert isinstance(result, Coverage) and result.selected == (0, 1, 4)


def test_no_candidate_of_the_missing_dimension_drops_with_the_reason() -> None:
    dims = ["method"] * 5
    reason = cover_dimensions([0, 1, 2], [3, 4], dims, BOTH)
    assert reason == "no experiment criterion among the selected or the dropped candidates"


def test_a_single_criterion_cannot_give_up_its_place() -> None:
    dims = ["method", "experiment"]
    reason = cover_dimensions([0], [1], dims, BOTH)
    assert isinstance(reason, str) and "can give up its place" in reason


def test_a_one_dimension_recipe_asks_only_for_its_own() -> None:
    dims = ["method", "method"]
    assert cover_dimensions([0, 1], [], dims, ("method",)) == Coverage((0, 1))
    assert isinstance(cover_dimensions([0, 1], [], dims, ("experiment",)), str)
