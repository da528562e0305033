"""The build's action on leakage verdicts: a pure function of rubric, reserve and settings."""

from __future__ import annotations

from papergym.recipes.leakage_action import act_on_leakage, judged_clean, judged_leaked
from papergym.records import Criterion, LeakageVerdict


def crit(cid: str, dimension: str = "method", leaked: bool | None = False) -> Criterion:
    verdict = LeakageVerdict(method="judge", leaked=leaked, reason="r")
    return Criterion(
        id=cid, text=f"The plan {cid}.", dimension=dimension, origin="answer", rank=1,
        leakage=(verdict,),
    )  # fmt: skip


def rubric() -> list[Criterion]:
    return [
        crit("a"),
        crit("b", leaked=True),
        crit("c", "experiment"),
        crit("d", "experiment", leaked=True),
        crit("e"),
        crit("f", "experiment"),
    ]


def ids(criteria: tuple[Criterion, ...]) -> list[str]:
    return [c.id for c in criteria]


def test_keep_changes_nothing() -> None:
    outcome = act_on_leakage(rubric(), [crit("r1")], "keep", 3)
    assert ids(outcome.criteria) == ["a", "b", "c", "d", "e", "f"]
    assert outcome.leaked_out == () and outcome.drop_reason is None


def test_remove_takes_leaked_out_reranks_and_notes() -> None:
    outcome = act_on_leakage(rubric(), [crit("r1")], "remove", 3)
    assert ids(outcome.criteria) == ["a", "c", "e", "f"]
    assert [c.rank for c in outcome.criteria] == [1, 2, 3, 4]
    assert ids(outcome.leaked_out) == ["b", "d"]
    assert "2 judged inferable" in outcome.note and outcome.drop_reason is None


def test_replace_uses_first_unflagged_reserve_in_the_leaked_ones_place() -> None:
    reserve = [crit("r1", leaked=True), crit("r2", leaked=None), crit("r3"), crit("r4")]
    outcome = act_on_leakage(rubric(), reserve, "replace", 3)
    assert ids(outcome.criteria) == ["a", "r3", "c", "r4", "e", "f"]
    assert [c.replaces for c in outcome.criteria if c.replaces] == ["b", "d"]
    assert outcome.criteria[1].rank == 2 and outcome.note == ""


def test_replace_with_too_few_reserves_removes_the_rest() -> None:
    outcome = act_on_leakage(rubric(), [crit("r1", "experiment")], "replace", 3)
    assert ids(outcome.criteria) == ["a", "r1", "c", "e", "f"]
    assert ids(outcome.leaked_out) == ["b", "d"] and outcome.note


def test_remove_that_would_empty_a_dimension_replaces_within_it() -> None:
    criteria = [crit("a"), crit("x", "experiment", leaked=True), crit("b")]
    reserve = [crit("m1"), crit("e1", "experiment")]
    outcome = act_on_leakage(criteria, reserve, "remove", 2)
    assert ids(outcome.criteria) == ["a", "e1", "b"]
    assert outcome.criteria[1].replaces == "x"


def test_replace_prefers_the_missing_dimension_over_rank() -> None:
    criteria = [crit("a"), crit("x", "experiment", leaked=True)]
    outcome = act_on_leakage(criteria, [crit("m1"), crit("e1", "experiment")], "replace", 1)
    assert ids(outcome.criteria) == ["a", "e1"]


def test_a_lost_dimension_drops_the_instance() -> None:
    criteria = [crit("a"), crit("b"), crit("x", "experiment", leaked=True)]
    outcome = act_on_leakage(criteria, [crit("m1")], "replace", 1)
    assert outcome.drop_reason is not None and "no experiment criterion" in outcome.drop_reason


def test_fewer_than_the_minimum_drops_the_instance() -> None:
    outcome = act_on_leakage(rubric(), [], "remove", 5)
    assert outcome.drop_reason is not None and "4 left" in outcome.drop_reason
    assert act_on_leakage(rubric(), [], "remove", 4).drop_reason is None


def test_unscored_is_neither_leaked_nor_clean() -> None:
    unscored = crit("u", leaked=None)
    assert not judged_leaked(unscored) and not judged_clean(unscored)
    outcome = act_on_leakage([unscored, crit("e", "experiment")], [], "remove", 1)
    assert ids(outcome.criteria) == ["u", "e"]


def test_overlap_verdicts_do_not_trigger_the_action() -> None:
    overlap = LeakageVerdict(method="overlap", leaked=True, score=0.9)
    criterion = crit("a").model_copy(update={"leakage": (overlap,)})
    outcome = act_on_leakage([criterion, crit("e", "experiment")], [], "remove", 1)
    assert ids(outcome.criteria) == ["a", "e"]
