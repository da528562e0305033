from __future__ import annotations

import json
from pathlib import Path

from export_samples import instance, sample_drops, sample_instances

from papergym.export.card import card_stats, usage_stats, write_card
from papergym.records import BuildFailure, Drop
from papergym.redact import register_secret


def test_export_card_stats_counts_and_shares() -> None:
    stats = card_stats(sample_instances(), sample_drops())
    assert stats["papers"] == 3 and stats["instances"] == 3
    assert stats["recipes"] == {"design": 1, "innov": 1, "papergym": 1}
    assert stats["builders"] == {"llm": 2, "extractive": 1}
    assert stats["domains"] == {"Computer science": 1, "Physics": 1, "unknown": 1}
    criteria = stats["criteria"]
    # 6 + 10 + 0 method criteria out of 30
    assert criteria["specific"] == 30
    assert criteria["by_dimension"] == {"method": 16, "experiment": 14}
    assert criteria["dimension_share"] == {
        "method": round(16 / 30, 6),
        "experiment": round(14 / 30, 6),
    }
    assert criteria["by_origin"] == {"answer": 15, "question": 15}
    assert criteria["per_instance"] == {"mean": 10, "min": 10, "max": 10, "histogram": {"10": 3}}
    assert criteria["general_per_instance"]["mean"] == 7
    assert stats["instances_with_warnings"] == 1


def test_export_card_stats_leakage_and_drops() -> None:
    stats = card_stats(sample_instances(), sample_drops())
    # Two instances carry verdicts: overlap leaks rank 1; judge leaks rank 2, rank 10 unscored.
    assert stats["leakage"]["overlap"] == {"criteria": 20, "leaked": 2, "unscored": 0, "rate": 0.1}
    judge = stats["leakage"]["judge"]
    assert (judge["criteria"], judge["leaked"], judge["unscored"]) == (20, 2, 2)
    assert judge["rate"] == round(2 / 18, 6)
    drops = stats["drops"]
    assert drops["total"] == 4 and drops["papers"] == 3
    assert drops["by_step"] == {"gates": 3, "ingest": 1}
    assert drops["by_reason"]["gates"] == {"numbers in reference": 2, "question mentions method": 1}


def test_export_card_stats_of_nothing_has_no_division_by_zero() -> None:
    stats = card_stats([], [])
    assert stats["criteria"]["dimension_share"] == {"method": None, "experiment": None}
    assert stats["leakage"] == {} and stats["words"]["question_mean"] is None


def test_export_usage_stats_per_instance_and_unpriced() -> None:
    rows = [
        {"stage": "map", "role": "extractor", "model": "a", "calls": 10, "cache_hits": 2,
         "prompt_tokens": 1000, "completion_tokens": 200, "cost_usd": 0.5},
        {"stage": "judge", "role": "judge", "model": "local", "calls": 4, "cache_hits": 0,
         "prompt_tokens": 400, "completion_tokens": 40, "cost_usd": None},
    ]  # fmt: skip
    usage = usage_stats(rows, instances=2)
    assert (usage["calls"], usage["tokens_in"], usage["tokens_out"]) == (14, 1400, 240)
    assert usage["cost_usd"] == 0.5 and usage["unpriced_models"] == ["local"]
    assert usage["per_instance"] == {
        "calls": 7, "cache_hits": 1, "tokens_in": 700, "tokens_out": 120, "cost_usd": 0.25
    }  # fmt: skip
    assert usage["by_stage"]["judge"] == {"calls": 4, "tokens_in": 400, "tokens_out": 40}
    only_unpriced = usage_stats(rows[1:], instances=2)
    assert only_unpriced["cost_usd"] is None and only_unpriced["per_instance"]["cost_usd"] is None


def test_export_card_files_say_what_the_dataset_is(tmp_path: Path) -> None:
    usage = [{"stage": "judge", "role": "judge", "model": "local", "calls": 3,
              "prompt_tokens": 30, "completion_tokens": 3, "cost_usd": None}]  # fmt: skip
    write_card(
        tmp_path,
        sample_instances(),
        sample_drops(),
        config={"recipe": "papergym", "alpha": 0.7},
        usage=usage,
        builder_note="Built offline for CI.",
        leakage={"judge_rate": 0.0411, "restatement": {"specific_reward": 0.02}},
    )
    text = (tmp_path / "card.md").read_text(encoding="utf-8")
    assert "baseline" in text and "selected" in text
    assert "53.3%" in text and "63.8%" in text  # our method share and the paper's
    assert "4.1%" in text and "restatement.specific_reward" in text
    assert "unpriced" in text and "Built offline for CI." in text
    assert "load_from_disk" in text and "compute_score" in text
    assert "numbers in reference" in text and '"alpha": 0.7' in text
    data = json.loads((tmp_path / "card.json").read_text(encoding="utf-8"))
    assert data["stats"] == json.loads(json.dumps(card_stats(sample_instances(), sample_drops())))
    assert data["usage"]["cost_usd"] is None and data["leakage_audit"]["judge_rate"] == 0.0411


def test_export_card_for_llm_builds_does_not_call_them_a_baseline(tmp_path: Path) -> None:
    write_card(
        tmp_path, [instance("a")], [], config={}, usage=None, builder_note=None, leakage=None
    )
    text = (tmp_path / "card.md").read_text(encoding="utf-8")
    assert "baseline" not in text.lower()
    assert "No usage was recorded" in text


def test_export_card_masks_secrets_and_lists_unfinished_papers(tmp_path: Path) -> None:
    key = "sk-card-test-key-5551234"
    register_secret(key)
    url = "http://me:hunter2-password@llm.example/v1"
    failure = BuildFailure(
        source="p1", step="llm:transport", reason=f"{url}: HTTP 500 (key {key})", paper_id="a"
    )
    write_card(
        tmp_path,
        [instance("b")],
        [Drop(source="p2", step="llm:output", reason=f"echoed {key}")],
        config={"base_url": url},
        usage=None,
        builder_note=None,
        leakage=None,
        failures=[failure],
    )
    text = (tmp_path / "card.md").read_text(encoding="utf-8")
    data = (tmp_path / "card.json").read_text(encoding="utf-8")
    for recorded in (text, data):
        assert key not in recorded and "hunter2" not in recorded
        assert "http://***@llm.example/v1" in recorded
    assert "Not finished: the LLM endpoint failed" in text and "retries them" in text
    assert json.loads(data)["failed"][0]["step"] == "llm:transport"
