"""The usefulness statistics and the keep/reweight/drop rule, as pure functions."""

from __future__ import annotations

from typing import Any

import pytest

from papergym.audit.settings import UsefulnessSection
from papergym.audit.usefulness import (
    AnswerGroup,
    CriterionUsefulness,
    RubricCriterion,
    UsefulnessInput,
    criterion_usefulness,
    jaccard,
    leaked,
    measure_all,
    pearson,
    rest_score,
)
from papergym.audit.usefulness_rule import apply_recommendations, recommend
from papergym.records import Criterion, Instance, LeakageVerdict, Rubric

SECTION = UsefulnessSection()


def _criterion(cid: str, text: str = "", weight: float = 1.0, position: int = 0, **kw: Any):
    return RubricCriterion("i1", cid, text, weight, position, **kw)


def _stats(**update: Any) -> CriterionUsefulness:
    base: dict[str, Any] = {
        "instance_id": "i1",
        "criterion_id": "c1",
        "text": "t",
        "weight": 1.0,
        "scored": 20,
        "unscored": 0,
        "met": 10,
        "pass_rate": 0.5,
        "constant": None,
        "groups": 4,
        "varied_groups": 4,
        "spread": 1.0,
        "correlation": 0.3,
        "duplicate_of": None,
        "similarity": None,
        "leaked": False,
        "new_weight": 1.0,
    }
    return CriterionUsefulness(**{**base, **update})


def test_pearson_and_its_undefined_cases() -> None:
    assert pearson([0, 1, 0, 1], [0.0, 1.0, 0.0, 1.0]) == pytest.approx(1.0)
    assert pearson([0, 1, 0, 1], [1.0, 0.0, 1.0, 0.0]) == pytest.approx(-1.0)
    assert pearson([1, 1, 1], [0.1, 0.5, 0.9]) is None  # constant: no correlation, not 0
    assert pearson([0, 1], [0.0, 1.0]) is None  # too few points


def test_rest_score_weights_credit_and_leaves_out_unscored() -> None:
    weights = {"a": 2.0, "b": 1.0, "p": -1.0, "x": 1.0}
    # a met (2), b unscored (left out), p a pitfall not made (credit 1), x is the left-out one
    assert rest_score({"a": True, "b": None, "p": False, "x": True}, weights, "x") == 1.0
    assert rest_score({"a": False, "p": True, "x": True}, weights, "x") == 0.0
    assert rest_score({"b": None, "x": True}, weights, "x") is None


def test_jaccard_on_content_stems() -> None:
    assert jaccard("The plan measures latency.", "The plan measures the latency") == 1.0
    assert jaccard("Routes queries with a gate.", "Evaluates on ImageNet.") == 0.0
    assert jaccard("", "") == 0.0


def test_leakage_verdicts_or_not_measured() -> None:
    judge = LeakageVerdict(method="judge", leaked=None)
    assert leaked(()) is None and leaked((judge,)) is None  # unscored is not "not leaked"
    assert leaked((LeakageVerdict(method="overlap", leaked=False), judge)) is False
    assert leaked((LeakageVerdict(method="overlap", leaked=True),)) is True


def test_statistics_of_a_criterion_over_groups() -> None:
    rubric = [
        _criterion("a", "Routes each query block to key blocks by a learned gate.", 1.0, 0),
        _criterion("b", "Measures latency against dense attention.", 1.0, 1),
        _criterion("c", "Routes each query block to key blocks by a gate.", 1.0, 2),
    ]
    groups = [
        AnswerGroup(
            "i1", "step 0", ({"a": True, "b": True, "c": True}, {"a": False, "b": False, "c": True})
        ),
        AnswerGroup(
            "i1", "step 1", ({"a": True, "b": True, "c": True}, {"a": True, "b": None, "c": True})
        ),
    ]
    a = criterion_usefulness(rubric[0], rubric, groups)
    assert (a.scored, a.met, a.unscored, a.constant) == (4, 3, 0, None)
    assert (a.groups, a.varied_groups, a.spread) == (2, 1, 0.5)
    assert a.correlation is not None and a.correlation > 0.5
    assert a.duplicate_of is None  # the first criterion has no higher-ranked twin
    b = criterion_usefulness(rubric[1], rubric, groups)
    assert (b.scored, b.unscored, b.groups) == (3, 1, 1)  # unscored left out, not counted 0
    c = criterion_usefulness(rubric[2], rubric, groups)
    assert c.constant == "always" and c.pass_rate == 1.0 and c.correlation is None
    assert c.duplicate_of == "a" and c.similarity is not None and c.similarity > 0.6


def test_measure_all_skips_instances_without_answers() -> None:
    criteria = (_criterion("a"), RubricCriterion("i2", "a", "", 1.0, 0))
    data = UsefulnessInput(
        source=__import__("pathlib").Path("."),
        kind="eval",
        groups=(AnswerGroup("i1", "eval", ({"a": True},)),),
        criteria=criteria,
    )
    assert [s.instance_id for s in measure_all(data)] == ["i1"]


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        ({}, "keep"),
        ({"leaked": True}, "drop"),
        ({"duplicate_of": "c0", "similarity": 0.8}, "drop"),
        ({"duplicate_of": "c0", "similarity": 0.3}, "keep"),
        ({"scored": 3, "constant": "never", "met": 0}, "keep"),  # too few answers to judge
        ({"leaked": True, "scored": 3}, "drop"),  # leakage needs no answers
        ({"constant": "always", "met": 20, "spread": 0.0}, "drop"),
        ({"constant": "never", "met": 0, "spread": 0.0}, "keep"),  # hard, not useless
        ({"varied_groups": 0, "spread": 0.0}, "reweight"),
        ({"correlation": -0.5}, "reweight"),
        ({"correlation": None, "spread": None}, "keep"),  # nothing measured: no evidence
    ],
)
def test_rule(update: dict[str, Any], expected: str) -> None:
    decided = recommend(_stats(**update), SECTION)
    assert decided.recommendation == expected
    assert decided.reasons or expected == "keep"


def test_never_met_is_dropped_only_when_asked() -> None:
    never = _stats(constant="never", met=0, pass_rate=0.0, varied_groups=0, spread=0.0)
    assert "never met" in recommend(never, SECTION).reasons[0]
    asked = recommend(never, UsefulnessSection(drop_never_met=True))
    assert asked.recommendation == "drop"


def test_reweight_keeps_the_sign_of_a_pitfall() -> None:
    decided = recommend(_stats(weight=-2.0, new_weight=-2.0, correlation=-0.9), SECTION)
    assert (decided.recommendation, decided.new_weight) == ("reweight", -1.0)


def test_thresholds_come_from_the_section() -> None:
    stats = _stats(varied_groups=1, spread=0.25)
    assert recommend(stats, SECTION).recommendation == "keep"
    assert recommend(stats, UsefulnessSection(min_spread=0.5)).recommendation == "reweight"


def _instance(n: int = 3) -> Instance:
    specific = tuple(
        Criterion(id=f"c{k}", text=f"text {k}", dimension="method", origin="answer", rank=k)
        for k in range(1, n + 1)
    )
    return Instance(
        id="i1",
        recipe="papergym",
        builder="extractive",
        paper_id="p",
        question="q",
        reference_answer="r",
        rubric=Rubric(specific=specific, general=()),
    )


def test_apply_removes_dropped_reranks_and_reweights() -> None:
    decided = [
        _stats(criterion_id="c1", recommendation="drop"),
        _stats(criterion_id="c2", recommendation="reweight", new_weight=0.5),
    ]
    (applied,), warnings = apply_recommendations([_instance()], decided)
    assert [(c.id, c.rank, c.weight) for c in applied.rubric.specific] == [
        ("c2", 1, 0.5),
        ("c3", 2, 1.0),  # undecided: unchanged but re-ranked
    ]
    assert "1 dropped" in applied.rubric.note and not warnings


def test_apply_never_empties_a_rubric() -> None:
    decided = [_stats(criterion_id="c1", recommendation="drop")]
    (applied,), warnings = apply_recommendations([_instance(1)], decided)
    assert applied == _instance(1) and warnings == [
        "i1: every criterion would be dropped; left unchanged"
    ]
