"""The offline build through the CLI, then audit and export on its output."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.export.parquet import read_parquet_instances
from papergym.jsonl import read_jsonl
from papergym.recipes.text import has_numeric_result, numbers_in, prose_sentences
from papergym.records import Instance, Stages
from support.papers import SHARED_PAPERS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers"
runner = CliRunner()


def test_readme_main_job_on_the_example_paper(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["build", str(EXAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    [instance] = read_jsonl(out / "instances.jsonl", Instance)
    assert instance.builder == "extractive"
    assert "baseline" in (out / "card.md").read_text().lower()
    again = runner.invoke(app, ["build", str(EXAMPLE), "-o", str(out), "--json"])
    assert json.loads(again.stdout)["resumed_papers"] == 1
    assert read_jsonl(out / "instances.jsonl", Instance) == [instance]


@pytest.fixture(scope="module")
def offline_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SHARED_PAPERS.is_dir():
        pytest.skip("../shared/papers is not available")
    out = tmp_path_factory.mktemp("env")
    result = runner.invoke(
        app, ["build", str(SHARED_PAPERS), "-o", str(out), "--builder", "extractive"]
    )
    assert result.exit_code == 0, result.output
    return out


def test_every_real_paper_gives_a_clean_instance(offline_build: Path) -> None:
    instances = read_jsonl(offline_build / "instances.jsonl", Instance)
    assert len(instances) == 12
    for instance in instances:
        folder = offline_build / "papers" / instance.paper_id
        stages = Stages.model_validate_json((folder / "stages.json").read_text())
        hidden = prose_sentences(stages.solution) + prose_sentences(stages.experiment)
        assert not any(sentence in instance.question for sentence in hidden), instance.title
        paper = json.loads((folder / "paper.json").read_text())
        result_numbers = set().union(
            *(
                numbers_in(s)
                for section in paper["sections"]
                for s in prose_sentences(section["text"])
                if has_numeric_result(s)
            )
        )
        leaked = numbers_in(instance.reference_answer) & result_numbers
        assert not any(has_numeric_result(s) for s in prose_sentences(instance.reference_answer)), (
            instance.title
        )
        assert not leaked, (instance.title, leaked)
        specific = instance.rubric.specific
        assert len(specific) == 10 or instance.rubric.note
        assert all(
            c.dimension in {"method", "experiment"} and c.rank >= 1 and c.origin for c in specific
        )
        assert all(any(v.method == "overlap" for v in c.leakage) for c in specific)
        assert len(instance.rubric.general) == 7


def test_audit_and_exports_of_the_offline_build(offline_build: Path, tmp_path: Path) -> None:
    audit = runner.invoke(app, ["audit", str(offline_build / "instances.jsonl"), "--json"])
    assert audit.exit_code == 0, audit.output
    assert json.loads(audit.stdout)["rates"]
    export = runner.invoke(
        app, ["export", str(offline_build), "--format", "all", "-o", str(tmp_path)]
    )
    assert export.exit_code == 0, export.output
    instances = read_jsonl(offline_build / "instances.jsonl", Instance)
    assert read_parquet_instances(next((tmp_path / "parquet").glob("*.parquet"))) == instances
    verl = pq.read_table(tmp_path / "verl" / "train.parquet").to_pylist()
    truth = json.loads(verl[0]["reward_model"]["ground_truth"])
    assert truth["question"] == instances[0].question
    trl = datasets.load_from_disk(str(tmp_path / "trl" / "dataset"))
    trl_train = trl["train"] if isinstance(trl, datasets.DatasetDict) else trl
    assert {"prompt", "privileged_context", "rubric", "reference", "question"} <= set(
        trl_train.column_names
    )
    assert len(trl_train) == len(instances)
