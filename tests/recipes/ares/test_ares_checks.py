"""The offline ARES steps and the pure checks behind the LLM steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ares_support import run_documents
from ares_texts import SWITCH, document
from pydantic import ValidationError

from papergym.audit.settings import AuditSection
from papergym.embed import embed
from papergym.recipes.ares.build import AresJob
from papergym.recipes.ares.cogenerate import cogeneration_schema
from papergym.recipes.ares.domains import EmbeddingDomains, chunks, nearest_domain
from papergym.recipes.ares.pipeline import ares_steps, needs_llm, reason_kind
from papergym.recipes.ares.prompting import excerpt
from papergym.recipes.ares.record import CoGenerated, DraftCriterion
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.ares.verify_qa import QAVerdictOut, qa_failure, screen_criteria
from papergym.recipes.ares.verify_rubric import (
    malformed,
    near_duplicates,
    pure_checks,
    weight_problem,
)
from papergym.recipes.steps import Reject

SECTION = AresSection()


def test_offline_steps_are_the_prefilter_and_the_embedding_domain(tmp_path: Path) -> None:
    job = AresJob()
    steps = ares_steps(job.ares, job.audit, None, embed)
    assert [s.name for s in steps] == ["prefilter", "domain"]
    outcomes, calls = run_documents(
        [document(), document(SWITCH, "switch"), document("Too short.", "short")],
        tmp_path,
        offline=True,
    )
    assert calls == 0
    good, switch, short = outcomes
    assert (good.draft.domain, good.draft.persona) == ("medicine", "patient")
    assert switch.draft.domain == "engineering"
    choice = good.draft.domain_choice
    assert choice is not None and choice.method == "embedding" and choice.default_persona
    assert choice.score is not None and 0 < choice.score <= 1
    assert short.drop[0] == "prefilter"
    line = needs_llm()
    assert "\n" not in line and "--llm-config" in line and "classify" in line


def test_domains_come_from_the_configured_list() -> None:
    section = AresSection(
        domains={"cooking": "Recipes, kitchens, baking and food.", "law": "Courts and statutes."},
        personas={"cooking": ["home cook"]},
        pitfall_domains=[],
    )
    choice = EmbeddingDomains(section, embed).choose("Whisk the eggs, then bake the cake at 180C.")
    assert (choice.domain, choice.persona) == ("cooking", "home cook")
    assert EmbeddingDomains(section, embed).choose("The court ruled on the statute.").persona == (
        "general reader"
    )


def test_nearest_domain_averages_the_chunks() -> None:
    descriptions = np.eye(3, dtype=np.float32)
    document = np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8]], dtype=np.float32)
    index, score = nearest_domain(document, descriptions)
    assert index == 0 and score == pytest.approx(1 / np.sqrt(1 + 0.36 + 0.64), abs=1e-5)
    assert chunks("a b c d e", words=2, limit=2) == ["a b", "c d"]


def test_config_refuses_inconsistent_ares_keys() -> None:
    with pytest.raises(ValidationError, match="min_criteria"):
        AresSection(min_criteria=9, max_criteria=3)
    with pytest.raises(ValidationError, match="unknown domain"):
        AresSection(pitfall_domains=["astrology"])


def test_the_cogeneration_schema_enforces_the_weight_ranges() -> None:
    schema = cogeneration_schema(AresSection(max_weight=3, max_pitfall_weight=2))
    good = {
        "question": "q",
        "reference_answer": "r",
        "criteria": [{"text": "t", "weight": 3}],
        "pitfalls": [{"text": "p", "weight": -2}],
    }
    schema.model_validate(good)
    for criteria, pitfalls in (([4], [-1]), ([0], [-1]), ([1], [-3]), ([1], [1]), ([1], [0])):
        bad = {
            **good,
            "criteria": [{"text": "t", "weight": w} for w in criteria],
            "pitfalls": [{"text": "p", "weight": w} for w in pitfalls],
        }
        with pytest.raises(ValidationError):
            schema.model_validate(bad)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Says so.", "fragment"),
        ("Is the dose right?", "question"),
        ("The answer is accurate.", "generic"),
        ("word " * 61, "more than one statement"),
        ("States A is true. States B is true. States C is true.", "more than one statement"),
    ],
)
def test_malformed_criteria(text: str, problem: str) -> None:
    found = malformed(text)
    assert found is not None and problem in found
    assert malformed("States that home readings need five minutes of rest first.") is None


def criterion(text: str, weight: int) -> DraftCriterion:
    return DraftCriterion(text=text, weight=weight)


def test_weight_problems() -> None:
    ok = [criterion("States a thing here.", 5), criterion("Invents a number here.", -5)]
    assert weight_problem(ok, SECTION) is None
    assert reason_kind(str(weight_problem([criterion("x y z", 6)], SECTION))) == (
        "weight_out_of_range"
    )
    assert "weight_out_of_range" in str(weight_problem([criterion("x y z", -6)], SECTION))
    assert "no_desired_criterion" in str(weight_problem([criterion("x y z", -1)], SECTION))
    many = [criterion(f"States fact number {i}.", 1) for i in range(13)]
    assert "too_many_criteria" in str(weight_problem(many, SECTION))


def test_near_duplicates_keep_the_first_of_each_group() -> None:
    vectors = np.array([[1, 0], [1, 0], [0, 1], [0.6, 0.8]], dtype=np.float32)
    assert near_duplicates(vectors, 0.9) == [1]
    assert near_duplicates(vectors, 0.5) == [1, 3]
    assert near_duplicates(np.zeros((0, 2), dtype=np.float32), 0.9) == []


def fake_embedder(texts: object) -> np.ndarray:
    # every text its own axis: no two criteria alike
    count = len(list(texts))  # type: ignore[call-overload]
    return np.eye(count, dtype=np.float32)


def test_pure_checks_drop_a_pitfall_domain_without_pitfalls() -> None:
    four = [criterion(f"States that fact number {i} holds.", 2) for i in range(4)]
    checked = pure_checks(four, "medicine", SECTION, fake_embedder)
    assert isinstance(checked, Reject) and reason_kind(checked.reason) == "no_pitfall"
    assert not isinstance(pure_checks(four, "science", SECTION, fake_embedder), Reject)
    malformed_ones = [*four[:3], criterion("Too short.", 1)]
    checked = pure_checks(malformed_ones, "science", SECTION, fake_embedder)
    assert isinstance(checked, Reject) and reason_kind(checked.reason) == "too_few_criteria"


def test_qa_failure_names_the_first_failed_check() -> None:
    def verdict(**flags: bool) -> QAVerdictOut:
        base = {"self_contained": True, "faithful": True, "gives_away_answer": False}
        return QAVerdictOut(reason="why", **{**base, **flags})

    assert qa_failure(verdict()) is None
    assert qa_failure(verdict(self_contained=False)) == "not_self_contained: why"
    assert qa_failure(verdict(faithful=False)) == "unfaithful: why"
    assert qa_failure(verdict(gives_away_answer=True)) == "answer_in_question: why"


def test_excerpt_cuts_long_documents_and_says_so() -> None:
    assert excerpt("  a b c ", 5) == "a b c"
    assert excerpt("a b c d e", 2) == "a b\n[... document cut: 3 more words]"
    assert reason_kind("min_words: 3 words") == "min_words"
    assert reason_kind("a reason without a kind: here") == "a reason without a kind: here"


def test_the_leakage_screen_removes_leaked_desired_criteria_only() -> None:
    def same(texts: object) -> np.ndarray:  # every text alike: everything leaks
        return np.ones((len(list(texts)), 2), dtype=np.float32) / np.sqrt(2)  # type: ignore[call-overload]

    qa = CoGenerated(
        question="How is blood pressure measured at home?",
        reference="With an upper-arm cuff after rest.",
        criteria=(criterion("States that a cuff is used.", 3), criterion("Invents a number.", -2)),
    )
    kept, leaked = screen_criteria(qa, AuditSection(), same)
    assert leaked == ("States that a cuff is used.",)
    assert [c.text for c in kept] == ["Invents a number."]
    assert kept[0].leakage[0].leaked is True
