"""``papergym train`` on rubric datasets other than a PaperGym build (the readers ``eval`` and
``audit`` use): generic ``{question, criteria}`` and ResearchQA rows train OPSD and GRPO; the
SFT stage, which needs reference answers they lack, is refused in one line; the held-out split
is the one ``eval --split test`` picks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.eval.data import load_eval_data
from papergym.settings.train import DataSettings
from papergym.train.data import load_instances

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
TOPICS = ["sparse attention", "long context", "retrieval", "tokenisers", "pruning", "curricula"]


def generic_file(folder: Path, count: int = 6) -> Path:
    path = folder / "generic.jsonl"
    rows = [
        {
            "id": f"g{n}",
            "question": f"Plan a study of {topic} for small language models.",
            "criteria": [
                f"Compares {topic} against a dense baseline",
                {"text": f"Evaluates {topic} on a held-out benchmark with seeds"},
            ],
        }
        for n, topic in enumerate(TOPICS[:count])
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def researchqa_file(folder: Path) -> Path:
    path = folder / "researchqa.jsonl"
    rows = [
        {
            "id": f"q{n}",
            "query": f"How does {topic} change the training cost of transformers?",
            "rubric": [
                {"rubric_item": f"Names the cost terms {topic} changes", "type": "method"},
                {"rubric_item": "Reports an experiment measuring wall time", "type": "experiment"},
            ],
        }
        for n, topic in enumerate(TOPICS[:2])
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_foreign_rows_load_with_their_criteria_and_no_reference(tmp_path: Path) -> None:
    splits = load_instances(DataSettings(build_dir=researchqa_file(tmp_path)))
    (first, second) = splits["train"]
    assert first.id == "q0" and first.question.startswith("How does sparse attention")
    assert [c.dimension for c in first.rubric.specific] == ["method", "experiment"]
    assert first.rubric.general  # our general criteria, as eval scores them
    assert first.reference_answer == "" and second.reference_answer == ""


def test_the_held_out_split_is_the_one_eval_uses(tmp_path: Path) -> None:
    path = generic_file(tmp_path)
    splits = load_instances(DataSettings(build_dir=path, test_fraction=0.5))
    evaluated = load_eval_data(path, "test", 0.5).instances
    assert [i.id for i in splits["test"]] == [i.id for i in evaluated]
    ids = {i.id for i in splits["train"]} | {i.id for i in splits["test"]}
    assert ids == {f"g{n}" for n in range(6)}  # every question in exactly one split
    assert not {i.id for i in splits["train"]} & {i.id for i in splits["test"]}


def test_duplicate_ids_and_unknown_formats_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    row = {"id": "x", "question": "Why?", "criteria": ["Says why"]}
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="'x' appears more than once"):
        load_instances(DataSettings(build_dir=path))
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"prompt_text": "hi"}) + "\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="unknown rubric format"):
        load_instances(DataSettings(build_dir=other))


@pytest.mark.parametrize(
    ("stage", "extra", "needs"),
    [
        ("sft", [], "the sft stage trains on"),
        ("opsd", ["opsd.teacher_context=reference"], "opsd.teacher_context=reference"),
    ],
)
def test_a_stage_that_needs_reference_answers_is_refused_in_one_line(
    tmp_path: Path, stage: str, extra: list[str], needs: str
) -> None:
    data = generic_file(tmp_path)
    args = ["train", stage, str(CONFIGS / "tiny-cpu.yaml"), "--data", str(data)]
    args += ["-o", str(tmp_path / "run"), *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert str(data) in line and "6 of 6 training instances have no reference_answer" in line
    assert needs in line
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # ~20 s: two tiny OPSD steps and one GRPO step on 2 shared cores
@pytest.mark.parametrize("write", [generic_file, researchqa_file])
def test_opsd_and_grpo_train_on_a_foreign_rubric_file(tmp_path: Path, write: object) -> None:
    data = write(tmp_path)  # type: ignore[operator]
    base = [str(CONFIGS / "tiny-cpu.yaml"), "--data", str(data), "--json"]
    base += ["eval.steps=0", "eval.final=false", "data.test_fraction=null"]
    opsd = ["train", "opsd", *base, "-o", str(tmp_path / "opsd"), "opsd.steps=2"]
    opsd += ["opsd.batch_size=2", "opsd.micro_batch_size=2", "opsd.max_new_tokens=8"]
    result = CliRunner().invoke(app, opsd)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stages"][0]["steps"] == 2
    grpo = ["train", "grpo", *base, "-o", str(tmp_path / "grpo"), "grpo.steps=1"]
    grpo += ["grpo.num_generations=2", "grpo.max_completion_length=8", "grpo.save_every=1"]
    grpo += ["model.tiny.answer_tokens=4"]
    result = CliRunner().invoke(app, grpo)
    assert result.exit_code == 0, result.output
    (stage,) = json.loads(result.stdout)["stages"]
    assert stage["steps"] == 1 and stage["unscored"] == 0  # the judge scored every answer
