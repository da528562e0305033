"""Tests for papergym.reward.scoring: pass rates, the α-mix, two-pass Scores, weighted rubrics."""

from __future__ import annotations

import doctest
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from papergym.records import Verdict
from papergym.reward import scoring
from papergym.reward.scoring import (
    WeightedCriterion,
    alpha_mix,
    pass_rate,
    rubric_score,
    weighted_score,
)

Kind = Literal["specific", "general"]


def verdicts(flags: list[bool | None], kind: Kind = "specific") -> list[Verdict]:
    prefix = "s" if kind == "specific" else "g"
    return [
        Verdict(criterion_id=f"{prefix}{i}", passed=flag, kind=kind) for i, flag in enumerate(flags)
    ]


def spec(*flags: bool | None) -> list[Verdict]:
    return verdicts(list(flags), "specific")


def gen(*flags: bool | None) -> list[Verdict]:
    return verdicts(list(flags), "general")


def desired(cid: str, w: float) -> WeightedCriterion:
    return WeightedCriterion(id=cid, weight=w, polarity="desired")


def pitfall(cid: str, w: float) -> WeightedCriterion:
    return WeightedCriterion(id=cid, weight=w, polarity="pitfall")


def test_doctests_pass() -> None:
    result = doctest.testmod(scoring)
    assert result.attempted > 0
    assert result.failed == 0


# --- pass_rate ---------------------------------------------------------------------------------


def test_pass_rate_mean() -> None:
    assert pass_rate(spec(True, False, True, True)) == 0.75
    assert pass_rate(spec(True)) == 1.0
    assert pass_rate(spec(False, False)) == 0.0


def test_pass_rate_empty_is_unscored() -> None:
    assert pass_rate([]) is None


@pytest.mark.parametrize("position", [0, 1, 2])
def test_pass_rate_unscored_propagates_wherever_it_is(position: int) -> None:
    flags: list[bool | None] = [True, False, True]
    flags[position] = None
    assert pass_rate(spec(*flags)) is None


def test_pass_rate_unscored_is_not_a_fail() -> None:
    # one scored pass + one unscored must not read as 0.5
    assert pass_rate(spec(True, None)) is None


# --- alpha_mix ---------------------------------------------------------------------------------


def test_alpha_mix_spec_example() -> None:
    assert alpha_mix(0.8, 0.6) == pytest.approx(0.74)
    assert alpha_mix(0.8, 0.6, 0.7) == pytest.approx(0.74)


def test_alpha_mix_extremes_are_exact() -> None:
    assert alpha_mix(0.8, 0.6, alpha=1.0) == 0.8
    assert alpha_mix(0.8, 0.6, alpha=0.0) == 0.6


@pytest.mark.parametrize(("s", "g"), [(None, 0.5), (0.5, None), (None, None)])
def test_alpha_mix_none_propagates(s: float | None, g: float | None) -> None:
    assert alpha_mix(s, g) is None


@pytest.mark.parametrize("alpha", [-0.01, 1.01, float("nan"), float("inf")])
def test_alpha_mix_rejects_bad_alpha(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        alpha_mix(0.5, 0.5, alpha)
    with pytest.raises(ValueError, match="alpha"):
        alpha_mix(None, None, alpha)  # validated even when the result would be None


def test_alpha_mix_stays_within_its_inputs() -> None:
    # 0.3·0.75 + 0.7·0.75 rounds to 0.7499999999999999; a convex mix must stay within its inputs
    assert alpha_mix(0.75, 0.75, 0.3) == 0.75
    assert alpha_mix(1.0, 1.0, 0.7) == 1.0


# --- rubric_score ------------------------------------------------------------------------------


def test_rubric_score_spec_example() -> None:
    s = spec(*([True] * 8 + [False] * 2))
    g = gen(True, True, True, False, False)
    score = rubric_score("inst-1", s, g, judge="judge-x")
    assert score.value == pytest.approx(0.74)
    assert score.specific == 0.8
    assert score.general == 0.6
    assert score.alpha == 0.7
    assert score.verdicts == (*s, *g)
    assert score.unscored_reason is None
    assert score.judge == "judge-x"
    assert score.instance_id == "inst-1"
    assert score.scored


@pytest.mark.parametrize(("alpha", "expected"), [(0.0, 0.25), (1.0, 0.5), (0.5, 0.375)])
def test_rubric_score_alpha(alpha: float, expected: float) -> None:
    score = rubric_score("i", spec(True, False), gen(True, False, False, False), alpha=alpha)
    assert score.value == pytest.approx(expected)
    assert score.alpha == alpha


def test_rubric_score_no_general_uses_specific_alone() -> None:
    score = rubric_score("i", spec(True, False, True, True), [])
    assert score.value == 0.75
    assert score.specific == 0.75
    assert score.general is None
    assert score.alpha == 1.0  # effective α: the absent pass weighs 0
    assert score.unscored_reason is None


def test_rubric_score_no_specific_uses_general_alone() -> None:
    score = rubric_score("i", [], gen(True, False))
    assert score.value == 0.5
    assert score.specific is None
    assert score.general == 0.5
    assert score.alpha == 0.0
    assert score.unscored_reason is None


def test_rubric_score_no_verdicts_is_unscored() -> None:
    score = rubric_score("i", [], [])
    assert score.value is None
    assert not score.scored
    assert score.unscored_reason == "no verdicts in either pass"


def test_rubric_score_unscored_specific() -> None:
    score = rubric_score("i", spec(True, None, False, None), gen(True))
    assert score.value is None
    assert score.specific is None
    assert score.general == 1.0  # the scored pass is still reported
    assert score.unscored_reason is not None
    assert "specific" in score.unscored_reason
    assert "s1" in score.unscored_reason and "s3" in score.unscored_reason
    assert "general" not in score.unscored_reason
    assert len(score.verdicts) == 5


def test_rubric_score_unscored_general() -> None:
    score = rubric_score("i", spec(True), gen(None, True))
    assert score.value is None
    assert score.specific == 1.0
    assert score.general is None
    assert score.unscored_reason is not None
    assert "general pass" in score.unscored_reason and "g0" in score.unscored_reason


def test_rubric_score_unscored_reason_carries_verdict_reasons() -> None:
    bad = [
        Verdict(criterion_id="s1", passed=None, reason="unparseable judge answer"),
        Verdict(criterion_id="s2", passed=None, reason="unparseable judge answer"),
    ]
    score = rubric_score("i", [*spec(True), *bad], gen(True))
    assert score.unscored_reason == (
        "specific pass unscored: no verdict for criteria s1, s2 (unparseable judge answer)"
    )


def test_rubric_score_unscored_both() -> None:
    score = rubric_score("i", spec(None), gen(None))
    assert score.value is None
    assert score.unscored_reason is not None
    assert "specific pass" in score.unscored_reason
    assert "general pass" in score.unscored_reason


def test_rubric_score_unscored_with_other_pass_absent() -> None:
    assert rubric_score("i", spec(None, True), []).value is None
    assert rubric_score("i", [], gen(True, None)).value is None


def test_rubric_score_rejects_kind_mismatch() -> None:
    with pytest.raises(ValueError, match="kind"):
        rubric_score("i", gen(True), [])
    with pytest.raises(ValueError, match="kind"):
        rubric_score("i", spec(True), spec(True))


def test_rubric_score_rejects_duplicate_criterion() -> None:
    dup = [*spec(True), *spec(False)]  # both are "s0"
    with pytest.raises(ValueError, match="twice"):
        rubric_score("i", dup, gen(True))


@pytest.mark.parametrize("alpha", [-0.1, 1.1])
def test_rubric_score_rejects_bad_alpha(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        rubric_score("i", spec(True), gen(True), alpha=alpha)


# --- WeightedCriterion -------------------------------------------------------------------------


def test_weighted_criterion_valid() -> None:
    c = desired("a", 3)
    assert (c.id, c.weight, c.polarity) == ("a", 3.0, "desired")
    assert pitfall("h", -2).weight == -2.0


@pytest.mark.parametrize(
    ("polarity", "weight"),
    [("desired", -1.0), ("desired", 0.0), ("pitfall", 1.0), ("pitfall", 0.0)],
)
def test_weighted_criterion_sign_must_match_polarity(
    polarity: Literal["desired", "pitfall"], weight: float
) -> None:
    with pytest.raises(ValueError, match="weight"):
        WeightedCriterion(id="x", weight=weight, polarity=polarity)


def test_weighted_criterion_needs_explicit_polarity_and_finite_weight() -> None:
    with pytest.raises(ValueError):
        WeightedCriterion(id="x", weight=1.0)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        WeightedCriterion(id="x", weight=1.0, polarity="good")
    with pytest.raises(ValueError):
        WeightedCriterion(id="x", weight=float("inf"), polarity="desired")
    with pytest.raises(ValueError):
        WeightedCriterion(id="x", weight=float("nan"), polarity="desired")


def test_weighted_criterion_is_frozen() -> None:
    c = desired("a", 1)
    with pytest.raises(ValueError):
        c.weight = 2.0  # type: ignore[misc]


# --- weighted_score ----------------------------------------------------------------------------

# HealthBench-style rubric: P = 6 + 4 = 10, N = 8 + 2 = 10, W = 20
HB = [desired("a", 6), desired("b", 4), pitfall("h", -8), pitfall("u", -2)]


def test_weighted_positive_by_hand() -> None:
    met = {"a": True, "b": False, "h": False, "u": False}
    assert weighted_score(HB, met) == pytest.approx(0.6)
    met = {"a": True, "b": True, "h": False, "u": False}
    assert weighted_score(HB, met) == 1.0
    met = {"a": True, "b": True, "h": False, "u": True}  # (10 - 2) / 10
    assert weighted_score(HB, met) == pytest.approx(0.8)


def test_weighted_met_pitfall_goes_negative_before_clipping() -> None:
    met = {"a": False, "b": True, "h": True, "u": False}  # (4 - 8) / 10
    assert weighted_score(HB, met, clip=None) == pytest.approx(-0.4)
    assert weighted_score(HB, met) == 0.0  # default clip (0, 1)
    assert weighted_score(HB, met, clip=(-1.0, 1.0)) == pytest.approx(-0.4)
    worst = {"a": False, "b": False, "h": True, "u": True}  # -N/P
    assert weighted_score(HB, worst, clip=None) == pytest.approx(-1.0)


def test_weighted_absolute_by_hand() -> None:
    best = {"a": True, "b": True, "h": False, "u": False}  # P / W
    assert weighted_score(HB, best, normalisation="absolute") == pytest.approx(0.5)
    worst = {"a": False, "b": False, "h": True, "u": True}  # -N / W
    assert weighted_score(HB, worst, normalisation="absolute", clip=None) == pytest.approx(-0.5)
    assert weighted_score(HB, worst, normalisation="absolute") == 0.0
    mixed = {"a": True, "b": False, "h": False, "u": True}  # (6 - 2) / 20
    assert weighted_score(HB, mixed, normalisation="absolute") == pytest.approx(0.2)


def test_weighted_clip_custom_range() -> None:
    met = {"a": True, "b": True, "h": False, "u": False}
    assert weighted_score(HB, met, clip=(0.0, 0.5)) == 0.5


@pytest.mark.parametrize("cid", ["a", "h"])
def test_weighted_unscored_propagates(cid: str) -> None:
    met: dict[str, bool | None] = {"a": True, "b": True, "h": False, "u": False}
    met[cid] = None
    assert weighted_score(HB, met) is None
    assert weighted_score(HB, met, normalisation="absolute", clip=None) is None


def test_weighted_zero_denominator_is_unscored() -> None:
    assert weighted_score([], {}) is None
    assert weighted_score([], {}, normalisation="absolute") is None
    only_pitfalls = [pitfall("h", -1)]
    assert weighted_score(only_pitfalls, {"h": False}) is None  # P = 0
    assert weighted_score(only_pitfalls, {"h": True}, normalisation="absolute", clip=None) == -1.0


def test_weighted_missing_id_is_key_error() -> None:
    with pytest.raises(KeyError, match="'u'"):
        weighted_score(HB, {"a": True, "b": True, "h": False})


def test_weighted_unknown_id_is_value_error() -> None:
    with pytest.raises(ValueError, match="unknown"):
        weighted_score(HB, {"a": True, "b": True, "h": False, "u": False, "zz": True})


def test_weighted_duplicate_criterion_is_value_error() -> None:
    with pytest.raises(ValueError, match="more than once"):
        weighted_score([desired("a", 1), desired("a", 2)], {"a": True})


def test_weighted_bad_options() -> None:
    met = {"a": True, "b": True, "h": False, "u": False}
    with pytest.raises(ValueError, match="normalisation"):
        weighted_score(HB, met, normalisation="sum")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="clip"):
        weighted_score(HB, met, clip=(1.0, 0.0))


# --- properties --------------------------------------------------------------------------------

flag_lists = st.lists(st.booleans(), min_size=1, max_size=12)
alphas = st.floats(min_value=0.0, max_value=1.0)
unit = st.floats(min_value=0.0, max_value=1.0)
FAST = settings(max_examples=150, deadline=None)


@FAST
@given(s=st.lists(st.booleans(), max_size=12), g=st.lists(st.booleans(), max_size=12), a=alphas)
def test_prop_unweighted_value_in_unit_interval(s: list[bool], g: list[bool], a: float) -> None:
    score = rubric_score("i", spec(*s), gen(*g), alpha=a)
    if s or g:
        assert score.value is not None
        assert 0.0 <= score.value <= 1.0
    else:
        assert score.value is None


@FAST
@given(s=flag_lists, g=st.lists(st.booleans(), max_size=12), a=alphas, data=st.data())
def test_prop_flipping_specific_fail_to_pass_never_lowers(
    s: list[bool], g: list[bool], a: float, data: st.DataObject
) -> None:
    i = data.draw(st.integers(min_value=0, max_value=len(s) - 1))
    before, after = list(s), list(s)
    before[i], after[i] = False, True
    lo = rubric_score("i", spec(*before), gen(*g), alpha=a).value
    hi = rubric_score("i", spec(*after), gen(*g), alpha=a).value
    assert lo is not None and hi is not None
    assert hi >= lo


@FAST
@given(s=st.lists(st.booleans(), max_size=12), g=flag_lists, a=alphas, data=st.data())
def test_prop_flipping_general_fail_to_pass_never_lowers(
    s: list[bool], g: list[bool], a: float, data: st.DataObject
) -> None:
    i = data.draw(st.integers(min_value=0, max_value=len(g) - 1))
    before, after = list(g), list(g)
    before[i], after[i] = False, True
    lo = rubric_score("i", spec(*s), gen(*before), alpha=a).value
    hi = rubric_score("i", spec(*s), gen(*after), alpha=a).value
    assert lo is not None and hi is not None
    assert hi >= lo


@FAST
@given(
    s=st.lists(st.one_of(st.booleans(), st.none()), min_size=1, max_size=10),
    g=st.lists(st.one_of(st.booleans(), st.none()), max_size=10),
    a=alphas,
)
def test_prop_any_unscored_verdict_unscores(
    s: list[bool | None], g: list[bool | None], a: float
) -> None:
    score = rubric_score("i", spec(*s), gen(*g), alpha=a)
    if None in s or None in g:
        assert score.value is None
        assert score.unscored_reason is not None
    else:
        assert score.value is not None
        assert score.unscored_reason is None


@FAST
@given(s1=unit, g1=unit, s2=unit, g2=unit, a=alphas, lam=unit)
def test_prop_alpha_mix_is_linear(
    s1: float, g1: float, s2: float, g2: float, a: float, lam: float
) -> None:
    f1, f2 = alpha_mix(s1, g1, a), alpha_mix(s2, g2, a)
    combined = alpha_mix(lam * s1 + (1 - lam) * s2, lam * g1 + (1 - lam) * g2, a)
    assert f1 is not None and f2 is not None and combined is not None
    assert combined == pytest.approx(lam * f1 + (1 - lam) * f2, abs=1e-12)
    # affine in α too: g + α·(s − g)
    assert f1 == pytest.approx(g1 + a * (s1 - g1), abs=1e-12)
    assert min(s1, g1) <= f1 <= max(s1, g1)


@FAST
@given(s=flag_lists, g=flag_lists, a=alphas, data=st.data())
def test_prop_rubric_score_permutation_invariant(
    s: list[bool], g: list[bool], a: float, data: st.DataObject
) -> None:
    vs, vg = spec(*s), gen(*g)
    ps = data.draw(st.permutations(vs))
    pg = data.draw(st.permutations(vg))
    assert rubric_score("i", ps, pg, alpha=a).value == rubric_score("i", vs, vg, alpha=a).value
    assert pass_rate(ps) == pass_rate(vs)


weights = st.floats(min_value=0.01, max_value=100.0, allow_nan=False)


@st.composite
def weighted_rubrics(
    draw: st.DrawFn,
) -> tuple[list[WeightedCriterion], dict[str, bool]]:
    n_desired = draw(st.integers(min_value=1, max_value=6))
    n_pitfall = draw(st.integers(min_value=0, max_value=6))
    criteria = [desired(f"d{i}", draw(weights)) for i in range(n_desired)]
    criteria += [pitfall(f"p{i}", -draw(weights)) for i in range(n_pitfall)]
    met = {c.id: draw(st.booleans()) for c in criteria}
    return criteria, met


normalisations = st.sampled_from(["positive", "absolute"])
clips = st.sampled_from([None, (0.0, 1.0), (-1.0, 1.0)])


@FAST
@given(rubric=weighted_rubrics(), norm=normalisations, clip=clips, data=st.data())
def test_prop_met_pitfall_never_raises_weighted_score(
    rubric: tuple[list[WeightedCriterion], dict[str, bool]],
    norm: Literal["positive", "absolute"],
    clip: tuple[float, float] | None,
    data: st.DataObject,
) -> None:
    criteria, met = rubric
    pitfalls = [c.id for c in criteria if c.polarity == "pitfall"]
    if not pitfalls:
        return
    pid = data.draw(st.sampled_from(pitfalls))
    clean = weighted_score(criteria, {**met, pid: False}, normalisation=norm, clip=clip)
    hit = weighted_score(criteria, {**met, pid: True}, normalisation=norm, clip=clip)
    assert clean is not None and hit is not None
    assert hit <= clean
    if clip is None:
        assert hit < clean


@FAST
@given(rubric=weighted_rubrics(), norm=normalisations, clip=clips, data=st.data())
def test_prop_met_desired_never_lowers_weighted_score(
    rubric: tuple[list[WeightedCriterion], dict[str, bool]],
    norm: Literal["positive", "absolute"],
    clip: tuple[float, float] | None,
    data: st.DataObject,
) -> None:
    criteria, met = rubric
    did = data.draw(st.sampled_from([c.id for c in criteria if c.polarity == "desired"]))
    miss = weighted_score(criteria, {**met, did: False}, normalisation=norm, clip=clip)
    hit = weighted_score(criteria, {**met, did: True}, normalisation=norm, clip=clip)
    assert miss is not None and hit is not None
    assert hit >= miss


@FAST
@given(rubric=weighted_rubrics(), norm=normalisations)
def test_prop_weighted_unclipped_range(
    rubric: tuple[list[WeightedCriterion], dict[str, bool]],
    norm: Literal["positive", "absolute"],
) -> None:
    criteria, met = rubric
    p = sum(c.weight for c in criteria if c.weight > 0)
    n = sum(-c.weight for c in criteria if c.weight < 0)
    value = weighted_score(criteria, met, normalisation=norm, clip=None)
    assert value is not None
    denom = p if norm == "positive" else p + n
    assert -n / denom - 1e-9 <= value <= p / denom + 1e-9
    clipped = weighted_score(criteria, met, normalisation=norm)
    assert clipped is not None and 0.0 <= clipped <= 1.0


@FAST
@given(rubric=weighted_rubrics(), norm=normalisations, clip=clips, data=st.data())
def test_prop_weighted_permutation_invariant(
    rubric: tuple[list[WeightedCriterion], dict[str, bool]],
    norm: Literal["positive", "absolute"],
    clip: tuple[float, float] | None,
    data: st.DataObject,
) -> None:
    criteria, met = rubric
    shuffled = data.draw(st.permutations(criteria))
    assert weighted_score(shuffled, met, normalisation=norm, clip=clip) == weighted_score(
        criteria, met, normalisation=norm, clip=clip
    )


@FAST
@given(rubric=weighted_rubrics(), norm=normalisations, data=st.data())
def test_prop_weighted_any_none_unscores(
    rubric: tuple[list[WeightedCriterion], dict[str, bool]],
    norm: Literal["positive", "absolute"],
    data: st.DataObject,
) -> None:
    criteria, met = rubric
    cid = data.draw(st.sampled_from([c.id for c in criteria]))
    partial: dict[str, bool | None] = {**met, cid: None}
    assert weighted_score(criteria, partial, normalisation=norm) is None
