"""ARES criteria take the neutral dimension ``general`` (not the paper's ``method``): the eval
records, the card and the exports carry it, and a paper's rubric reads as before."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from ares_support import run_documents
from ares_texts import document

from papergym.eval.evaluate import eval_score
from papergym.eval.records import EvalAnswer, EvalScore
from papergym.export.card import card_stats
from papergym.export.parquet import read_parquet_instances, write_parquet
from papergym.recipes.ares.pipeline import to_instance
from papergym.records import Instance
from papergym.reward.offline import OfflineJudge
from papergym.reward.reward import RubricReward


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Instance:
    [outcome], _ = run_documents([document()], tmp_path_factory.mktemp("ares"))
    assert outcome.kept, outcome.reject
    return to_instance(outcome.draft)


def test_ares_criteria_are_general_not_method(instance: Instance) -> None:
    assert {c.dimension for c in instance.rubric.specific} == {"general"}
    assert Instance.model_validate_json(instance.model_dump_json()) == instance


def test_eval_records_carry_general_and_leave_method_and_experiment_empty(
    instance: Instance,
) -> None:
    score = asyncio.run(RubricReward(OfflineJudge()).ascore(instance, instance.reference_answer))
    answer = EvalAnswer(
        system="s",
        instance_id=instance.id,
        sample=0,
        answer=instance.reference_answer,
        words=len(instance.reference_answer.split()),
    )
    record = eval_score(answer, instance, score)
    assert EvalScore.model_validate_json(record.model_dump_json()) == record
    assert {v.dimension for v in record.verdicts if v.kind == "specific"} == {"general"}
    assert record.method is None and record.experiment is None and record.specific is not None


def test_card_counts_general_and_parquet_round_trips_it(instance: Instance, tmp_path: Path) -> None:
    stats = card_stats([instance], [])
    n = len(instance.rubric.specific)
    assert stats["criteria"]["by_dimension"] == {"method": 0, "experiment": 0, "general": n}
    write_parquet([instance], tmp_path)
    assert read_parquet_instances(tmp_path / "train.parquet") == [instance]
