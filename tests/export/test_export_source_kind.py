"""Exports, the dataset card and the LLM judge's prompt are source-aware: an instance built from
a plain document (ARES) is a question-answering task, not a research plan, while a paper's
exports, card and judge prompts stay byte for byte what they were (``data/paper_exports.json``
was written from the code before documents were told apart)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from export_samples import sample_drops, sample_instances, weighted_instance

from papergym.export.card import card_stats, render_card
from papergym.export.trl import privileged_context, trl_row
from papergym.export.verl import verl_row
from papergym.records import BuildFailure, Instance
from papergym.reward.judge import DOCUMENT_PITFALL_RULES, PITFALL_TAG, judge_messages
from papergym.reward.reward import score_key

GOLDEN = Path(__file__).parent / "data" / "paper_exports.json"
FAILURES = [BuildFailure(source="s", step="llm:transport", reason="down", paper_id="p")]


def paper_samples() -> list[Instance]:
    """One instance per recipe and builder, and a weighted paper rubric with pitfalls."""
    weighted = weighted_instance().model_copy(update={"source_kind": "paper"})
    return [*sample_instances(), weighted]


def document(instance: Instance) -> Instance:
    return instance.model_copy(update={"source_kind": "document", "recipe": "ares"})


def card_text(instances: list[Instance]) -> str:
    stats = card_stats(instances, sample_drops())
    card = render_card(
        stats,
        config={},
        usage=None,
        builder_note=None,
        leakage=None,
        formats=("verl",),
        failures=FAILURES,
    )
    return card.split("## LLM cost")[0]  # the rest holds the version and the format snippets


def capture() -> dict[str, Any]:
    items = paper_samples()
    prompts = []
    for kind in ("specific", "general"):
        for reference, advisory, pitfalls in (
            (None, False, ()),
            ("ref text", False, ()),
            ("ref", True, (True, False)),
        ):
            messages = judge_messages(
                kind,
                "Q?",
                ["crit one", "crit two"],
                "ans",
                reference=reference,
                advisory_reference=advisory,
                pitfalls=pitfalls,
            )
            prompts.append([m.content for m in messages])
    return {
        "verl": [verl_row(i, n, system_prompt="sys" if n else None) for n, i in enumerate(items)],
        "trl": [trl_row(i) for i in items],
        "card_stats": card_stats(items, sample_drops()),
        "card_md": card_text(items),
        "judge": prompts,
    }


def test_paper_exports_card_and_judge_prompts_are_unchanged() -> None:
    now = json.loads(json.dumps(capture(), ensure_ascii=False, sort_keys=True))
    assert now == json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_verl_ability_is_rubric_qa_for_a_document_and_research_planning_for_a_paper() -> None:
    paper = sample_instances()[0]
    assert verl_row(paper, 0)["ability"] == "research_planning"
    assert verl_row(document(paper), 0)["ability"] == "rubric_qa"


def test_trl_teacher_context_of_a_document_speaks_of_an_answer() -> None:
    for inst in (document(sample_instances()[0]), document(weighted_instance())):
        text = trl_row(inst)["privileged_context"]
        assert "A strong answer satisfies" in text and "research plan" not in text
        assert text.split("\n", 1)[1] == privileged_context(inst.rubric).split("\n", 1)[1]


def test_card_of_a_document_build_speaks_of_documents_not_papers() -> None:
    docs = [document(weighted_instance())]
    stats = card_stats(docs, [])
    assert stats["source_kinds"] == {"document": 1}
    text = card_text(docs)
    assert "question answering, built from plain documents" in text
    assert "research plan" not in text and "63.8% method" not in text
    assert "| documents | 1 |" in text and "`ares` (1 instance): question-answering" in text
    assert "`llm` (1 instance): written by language models in the ARES steps" in text
    assert "1 document could not be built" in text and "per-section extraction" not in text
    mixed = card_text([*sample_instances(), *docs])
    assert "| sources | 4 |" in mixed and "research planning" in mixed and "63.8%" in mixed


def test_judge_prompt_for_a_document_grades_an_answer_not_a_plan() -> None:
    for kind in ("specific", "general"):
        [message] = judge_messages(
            kind, "Q?", ["crit"], "ans", reference="ref", source_kind="document"
        )
        assert "plan" not in message.content.lower()
        assert "Answer to grade:" in message.content and "the document" in message.content
    [pitfall] = judge_messages(
        "specific", "Q?", ["x", "y"], "ans", pitfalls=(True, False), source_kind="document"
    )
    assert DOCUMENT_PITFALL_RULES in pitfall.content and f"1. {PITFALL_TAG} x" in pitfall.content


def test_a_document_and_a_paper_with_the_same_content_do_not_share_a_cached_score() -> None:
    paper = sample_instances()[0]
    assert score_key(paper, "a", "j", 0.7) != score_key(document(paper), "a", "j", 0.7)
