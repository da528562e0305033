"""``papergym compare``'s pure parts: orderings, labels, the judge's schema and prompt, Fleiss'
κ, rates with intervals, and the summary of scripted verdicts."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from pydantic import ValidationError

from papergym.eval.compare.orderings import design, labels, orderings_of, williams_design
from papergym.eval.compare.prompt import answer_schema, compare_messages, map_picks, shown_answer
from papergym.eval.compare.records import CRITERIA, TIE, CompareSummary, CompareVerdict, Pick
from papergym.eval.compare.settings import CompareSection
from papergym.eval.compare.summary import summarise
from papergym.eval.stats import bootstrap_ratio, fleiss_kappa

# -- orderings ----------------------------------------------------------------------------------


def _position_counts(rows: list[tuple[int, ...]]) -> Counter[tuple[int, int]]:
    return Counter((value, position) for row in rows for position, value in enumerate(row))


def _carryover_counts(rows: list[tuple[int, ...]]) -> Counter[tuple[int, int]]:
    return Counter((row[i], row[i + 1]) for row in rows for i in range(len(row) - 1))


@pytest.mark.parametrize("count", [2, 3])
def test_up_to_three_systems_every_permutation_is_shown(count: int) -> None:
    kind, rows = design(count)
    assert kind == "permutations"
    assert sorted(rows) == sorted(itertools.permutations(range(count)))
    assert len(set(rows)) == math.factorial(count)


@pytest.mark.parametrize("count", [4, 6, 8, 10])
def test_williams_even_square_balances_positions_and_carryover(count: int) -> None:
    rows = williams_design(count)
    assert len(rows) == count
    assert all(sorted(row) == list(range(count)) for row in rows)
    # a Latin square: each system in each position exactly once
    positions = _position_counts(rows)
    assert set(positions.values()) == {1}
    assert len(positions) == count * count
    # first-order carryover: each system directly after each other system exactly once
    carry = _carryover_counts(rows)
    assert len(carry) == count * (count - 1)
    assert set(carry.values()) == {1}


@pytest.mark.parametrize("count", [5, 7])
def test_williams_odd_pair_of_squares_balances_positions_and_carryover(count: int) -> None:
    rows = williams_design(count)
    assert len(rows) == 2 * count
    assert len(set(rows)) == 2 * count
    positions = _position_counts(rows)
    assert len(positions) == count * count
    assert set(positions.values()) == {2}
    carry = _carryover_counts(rows)
    assert len(carry) == count * (count - 1)
    assert set(carry.values()) == {2}


def test_a_single_cyclic_square_would_not_balance_carryover() -> None:
    # why Williams: the plain cyclic square puts 1 after 0 in every row
    cyclic = [tuple((i + s) % 4 for i in range(4)) for s in range(4)]
    assert max(_carryover_counts(cyclic).values()) > 1
    assert max(_carryover_counts(williams_design(4)).values()) == 1


def test_beyond_three_systems_the_design_is_williams_on_the_names() -> None:
    kind, rows = orderings_of(["w", "x", "y", "z"])
    assert kind == "williams"
    assert rows[0] == ("w", "x", "z", "y")
    assert all(sorted(row) == ["w", "x", "y", "z"] for row in rows)


def test_labels() -> None:
    assert labels(3) == ("A", "B", "C")
    assert labels(26)[-1] == "Z"
    with pytest.raises(ValueError):
        labels(27)


# -- the judge's answer ------------------------------------------------------------------------


def test_picks_map_back_from_labels_to_the_systems_shown_there() -> None:
    schema = answer_schema(3)
    parsed = schema.model_validate(
        {"reason": "r", "overall": "B", "method": "tie", "experiment": "C"}
    )
    picks = map_picks(parsed, ("y", "x", "z"))
    assert picks["overall"] == Pick(label="B", system="x")
    assert picks["method"] == Pick(label=TIE, system=TIE)
    assert picks["experiment"] == Pick(label="C", system="z")


def test_the_schema_only_accepts_the_labels_shown_or_a_tie() -> None:
    schema = answer_schema(2)
    with pytest.raises(ValidationError):
        schema.model_validate({"reason": "r", "overall": "C", "method": "A", "experiment": "A"})
    properties = schema.model_json_schema()["properties"]
    assert list(properties) == ["reason", "overall", "method", "experiment"]  # reason first


def test_the_prompt_shows_the_answers_in_order_under_their_labels() -> None:
    (message,) = compare_messages("How to X?", ["first plan", "second plan", "third plan"])
    text = message.content
    assert "How to X?" in text
    a, b, c = (
        text.index(f"Plan {label}:\n<<<\n{n} plan")
        for label, n in zip("ABC", ["first", "second", "third"], strict=True)
    )
    assert a < b < c
    assert "A, B and C" in text
    assert "Reference plan" not in text and "reference" not in text.lower()


def test_the_reference_is_shown_only_when_given_and_as_one_approach() -> None:
    (message,) = compare_messages("Q?", ["p1", "p2"], reference="the paper's plan")
    assert "Reference plan:\n<<<\nthe paper's plan\n>>>" in message.content
    assert "not the bar" in message.content


def test_shown_answer_drops_reasoning_and_cuts_at_the_limit() -> None:
    assert shown_answer("<think>hmm</think>The plan.", 0) == ("The plan.", False)
    assert shown_answer("abcdef", 4) == ("abcd", True)
    assert shown_answer("abc", 4) == ("abc", False)


# -- Fleiss' kappa -------------------------------------------------------------------------------

# The worked example of Fleiss' κ used in textbooks (and Wikipedia): 10 items, 14 raters, 5
# categories. By hand: p_j = (20, 28, 39, 21, 32) / 140; P̄e = Σ p_j² = 0.21276;
# P_i = (Σ n_ij² − 14) / (14·13), e.g. item 1: (196 − 14)/182 = 1, item 2: (4+36+16+4−14)/182
# = 0.25275; P̄ = 0.37802; κ = (0.37802 − 0.21276) / (1 − 0.21276) = 0.20993.
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_the_textbook_example() -> None:
    result = fleiss_kappa(FLEISS_TABLE)
    shares = [20 / 140, 28 / 140, 39 / 140, 21 / 140, 32 / 140]
    assert result.expected == pytest.approx(sum(p * p for p in shares))
    assert result.expected == pytest.approx(0.21276, abs=1e-5)
    assert result.observed == pytest.approx(0.37802, abs=1e-5)
    assert result.kappa == pytest.approx(0.20993, abs=1e-5)
    assert (result.items, result.raters) == (10, 14)


def test_fleiss_kappa_edges() -> None:
    assert fleiss_kappa([[2, 0], [0, 2], [2, 0]]).kappa == pytest.approx(1.0)
    # two raters who always disagree on two balanced categories: P̄ = 0, P̄e = 0.5
    assert fleiss_kappa([[1, 1], [1, 1]]).kappa == pytest.approx(-1.0)
    # everything in one category: agreement is all chance, κ is 0/0
    assert fleiss_kappa([[3, 0], [3, 0]]).kappa is None
    assert fleiss_kappa([]).kappa is None
    with pytest.raises(ValueError, match="every item needs"):
        fleiss_kappa([[2, 0], [1, 0]])
    with pytest.raises(ValueError, match="at least 2 raters"):
        fleiss_kappa([[1, 0]])


# -- rates with intervals ----------------------------------------------------------------------


def test_bootstrap_ratio_pools_counts_and_resamples_questions() -> None:
    wins = [3.0, 0.0, 6.0, 1.0, 5.0, 2.0]
    verdicts = [6.0, 6.0, 6.0, 6.0, 6.0, 4.0]
    estimate = bootstrap_ratio(wins, verdicts, resamples=500, seed=1)
    assert estimate.value == pytest.approx(17 / 34)
    assert estimate.n == 6
    assert estimate.low is not None and estimate.high is not None
    assert 0.0 <= estimate.low < estimate.value < estimate.high <= 1.0
    again = bootstrap_ratio(wins, verdicts, resamples=500, seed=1)
    assert (again.low, again.high) == (estimate.low, estimate.high)  # seeded


def test_bootstrap_ratio_edges() -> None:
    same = bootstrap_ratio([2.0, 4.0], [4.0, 8.0])
    assert (same.value, same.low, same.high, same.n) == (0.5, 0.5, 0.5, 2)
    # a question with no parsed verdict is no unit at all, not a 0
    assert bootstrap_ratio([1.0, 0.0], [2.0, 0.0]).n == 1
    assert bootstrap_ratio([0.0], [0.0]).value is None


# -- the summary of scripted verdicts ----------------------------------------------------------

SYSTEMS = ["x", "y", "z"]
QUESTIONS = [f"q{n}" for n in range(5)]


def _verdicts(
    pick: str | None, *, judge: str = "j", questions: list[str] = QUESTIONS
) -> list[CompareVerdict]:
    """A verdict per question × ordering; ``pick`` is a position label, a system, or None
    (unparsed)."""
    _, orderings = orderings_of(SYSTEMS)
    verdicts = []
    for question in questions:
        for ordering in orderings:
            if pick is None:
                picks = None
            else:
                label = pick if pick in labels(3) else labels(3)[ordering.index(pick)]
                chosen = Pick(label=label, system=ordering[labels(3).index(label)])
                picks = dict.fromkeys(CRITERIA, chosen)
            verdicts.append(
                CompareVerdict(
                    instance_id=question,
                    judge=judge,
                    model="m",
                    ordering=ordering,
                    setup="s",
                    picks=picks,
                    unparsed_reason=None
                    if picks
                    else f"judge failed: LLMOutputError: judge: no valid X: bad JSON: column {len(verdicts)}",
                )
            )
    return verdicts


def _summary(verdicts: list[CompareVerdict], judges: tuple[str, ...] = ("j",)) -> CompareSummary:
    kind, orderings = orderings_of(SYSTEMS)
    return summarise(
        verdicts,
        folders=[],
        data_id="d",
        systems=SYSTEMS,
        judges=list(judges),
        questions=QUESTIONS,
        kind=kind,
        orderings=orderings,
        section=CompareSection(resamples=200),
    )


def test_a_judge_that_always_picks_position_a_is_all_bias_and_no_winner() -> None:
    summary = _summary(_verdicts("A"))
    for result in summary.criteria:
        assert result.position_bias.first.value == 1.0
        assert result.position_bias.expected == pytest.approx(1 / 3)
        assert [r.win.value for r in result.systems] == pytest.approx([1 / 3] * 3)
        assert all(r.tie.value == 0.0 for r in result.systems)


def test_a_judge_that_always_picks_one_system_shows_no_position_bias() -> None:
    summary = _summary(_verdicts("y"))
    overall = summary.criteria[0]
    rates = {r.system: r for r in overall.systems}
    assert rates["y"].win.value == 1.0 and rates["y"].wins == 30
    assert rates["x"].loss.value == 1.0 and rates["x"].wins == 0
    assert overall.position_bias.first.value == pytest.approx(1 / 3)
    assert overall.position_bias.by_position == pytest.approx({"A": 1 / 3, "B": 1 / 3, "C": 1 / 3})


def test_unparsed_verdicts_are_counted_apart_never_as_losses() -> None:
    verdicts = _verdicts("y", questions=QUESTIONS[:3]) + _verdicts(None, questions=QUESTIONS[3:])
    summary = _summary(verdicts)
    assert (summary.verdicts, summary.parsed, summary.unparsed) == (30, 18, 12)
    # counted by how they failed, without the parser's line and column
    assert summary.unparsed_reasons == {
        "judge failed: LLMOutputError: judge: no valid X: bad JSON": 12
    }
    overall = summary.criteria[0]
    assert (overall.parsed, overall.unparsed) == (18, 12)
    rates = {r.system: r for r in overall.systems}
    assert rates["x"].losses == 18  # not 30: the unparsed are no one's loss
    assert rates["y"].win.value == 1.0
    assert rates["y"].win.n == 3  # questions behind the rate


def test_agreement_between_judges() -> None:
    same = _summary(_verdicts("A", judge="j1") + _verdicts("A", judge="j2"), ("j1", "j2"))
    assert same.agreement[0].kappa == pytest.approx(1.0)
    # always A against always B: never agreeing; each system gets 1/3 of the ratings, so
    # P̄ = 0, P̄e = 3·(1/3)² = 1/3 and κ = (0 − 1/3) / (1 − 1/3) = −0.5
    apart = _summary(_verdicts("A", judge="j1") + _verdicts("B", judge="j2"), ("j1", "j2"))
    kappa = apart.agreement[0]
    assert kappa.kappa == pytest.approx(-0.5)
    assert (kappa.items, kappa.excluded, kappa.judges) == (30, 0, 2)
    assert apart.criteria[0].position_bias_by_judge["j2"].first.value == 0.0
    # an item one judge has no parsed verdict on is left out, and counted
    partial = _verdicts("A", judge="j2", questions=QUESTIONS[:2]) + _verdicts(
        None, judge="j2", questions=QUESTIONS[2:]
    )
    mixed = _summary(_verdicts("A", judge="j1") + partial, ("j1", "j2"))
    assert (mixed.agreement[0].items, mixed.agreement[0].excluded) == (12, 18)
