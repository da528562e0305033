"""The ARES LLM steps end to end against the scripted loopback server, and each fault's drop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ares_support import run_documents
from ares_texts import GOOD, document

from papergym.recipes.ares.build import AresJob
from papergym.recipes.ares.pipeline import reason_kind, to_instance
from papergym.recipes.ares.scripted import AresScript
from papergym.recipes.ares.settings import AresSection


def test_a_good_document_becomes_a_weighted_instance_in_five_calls(tmp_path: Path) -> None:
    (outcome,), calls = run_documents([document()], tmp_path)
    assert outcome.kept, outcome.reject
    draft = outcome.draft
    assert draft.domain == "medicine" and draft.persona == "patient"
    assert draft.domain_choice is not None and draft.domain_choice.method == "llm"
    assert calls == 5  # classify, domain, cogenerate, verify_qa, coverage
    instance = to_instance(draft)
    assert instance.recipe == "ares" and instance.source_kind == "document"
    assert instance.domain == "medicine" and instance.rubric.general == ()
    weights = [c.weight for c in instance.rubric.specific]
    assert [w for w in weights if w > 0] == [5.0, 4.0, 3.0, 2.0, 2.0]
    assert sorted(w for w in weights if w < 0) == [-3.0, -2.0]
    assert [c.rank for c in instance.rubric.specific] == list(range(1, len(weights) + 1))
    assert all(c.leakage and c.leakage[0].method == "overlap" for c in instance.rubric.specific)
    assert draft.rubric_check is not None and draft.rubric_check.coverage == pytest.approx(
        5 / 6, abs=1e-4
    )


def test_a_finished_document_is_not_asked_again(tmp_path: Path) -> None:
    run_documents([document()], tmp_path)
    (outcome,), calls = run_documents([document()], tmp_path)
    assert outcome.kept and calls == 0


@pytest.mark.parametrize(
    ("fault", "step", "kind"),
    [
        ("reject", "classify", "unsuitable"),
        ("garbage", "classify", "invalid_output"),
        ("leak", "verify_qa", "leaked_criteria"),
        ("not_self_contained", "verify_qa", "not_self_contained"),
        ("unfaithful", "verify_qa", "unfaithful"),
        ("giveaway", "verify_qa", "answer_in_question"),
        ("duplicate", "verify_rubric", "too_few_criteria"),
        ("no_pitfalls", "verify_rubric", "no_pitfall"),
        ("low_coverage", "verify_rubric", "low_coverage"),
    ],
)
def test_each_fault_drops_at_its_step_with_its_reason(
    fault: str, step: str, kind: str, tmp_path: Path
) -> None:
    (outcome,), _ = run_documents([document()], tmp_path, faults=[fault])
    assert not outcome.kept
    dropped_at, reason = outcome.drop
    assert (dropped_at, reason_kind(reason)) == (step, kind), reason


def test_duplicates_are_named_and_a_leaked_criterion_alone_is_removed(tmp_path: Path) -> None:
    # with a lower minimum the leaked criteria leave the rubric and the rest is kept
    config = AresJob(ares=AresSection(min_criteria=2, min_coverage=0.0))
    (outcome,), _ = run_documents([document()], tmp_path / "leak", faults=["leak"], config=config)
    assert outcome.kept, outcome.reject
    assert outcome.draft.qa_check is not None and len(outcome.draft.qa_check.leaked) == 2
    assert (
        to_instance(outcome.draft).rubric.note == "2 co-generated criteria removed by verification"
    )
    (dup,), _ = run_documents([document()], tmp_path / "dup", faults=["duplicate"], config=config)
    assert dup.kept and dup.draft.rubric_check is not None
    assert len(dup.draft.rubric_check.duplicates) == 4


def test_a_pitfall_is_optional_outside_the_pitfall_domains(tmp_path: Path) -> None:
    config = AresJob(ares=AresSection(pitfall_domains=[]))
    (outcome,), _ = run_documents([document()], tmp_path, faults=["no_pitfalls"], config=config)
    assert outcome.kept and not to_instance(outcome.draft).rubric.pitfalls


def test_the_prefilter_saves_the_classifier_call(tmp_path: Path) -> None:
    short = document("Too short to ask anything about.", "short")
    (outcome,), calls = run_documents([short], tmp_path / "on")
    assert outcome.drop[0] == "prefilter" and reason_kind(outcome.drop[1]) == "min_words"
    assert calls == 0
    config = AresJob(ares=AresSection(prefilter=False))
    (outcome,), calls = run_documents([short], tmp_path / "off", config=config)
    assert outcome.drop == ("classify", outcome.drop[1]) and calls == 1


def test_domain_by_embedding_saves_the_domain_call(tmp_path: Path) -> None:
    config = AresJob(ares=AresSection(domain_by="embedding"))
    (outcome,), calls = run_documents([document()], tmp_path, config=config)
    assert outcome.kept and calls == 4
    assert outcome.draft.domain_choice is not None
    assert outcome.draft.domain_choice.method == "embedding"


def test_the_script_refuses_unknown_faults() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        AresScript(frozenset({"wrong"}))


def test_long_documents_are_cut_in_the_prompts(tmp_path: Path) -> None:
    long = document(GOOD + "\n\n" + " ".join(f"word{i} is here." for i in range(2000)), "long")
    config = AresJob(ares=AresSection(max_prompt_words=300, max_duplicate_lines=1.0))
    (outcome,), _ = run_documents([long], tmp_path, config=config)
    assert outcome.kept, outcome.reject


def test_a_domain_outside_the_configured_list_is_invalid_output(tmp_path: Path) -> None:
    script = AresScript()

    def astrologer(request: dict[str, Any]) -> str | dict[str, Any]:
        answer = script(request)
        if isinstance(answer, dict) and "domain" in answer:
            return {**answer, "domain": "astrology"}
        return answer

    (outcome,), calls = run_documents([document()], tmp_path, responder=astrologer)
    assert outcome.drop[0] == "domain" and reason_kind(outcome.drop[1]) == "invalid_output"
    assert calls > 2  # the LLM layer asked for a repair before giving up
