"""``papergym audit --usefulness`` on eval and training-run folders, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import typer
import yaml
from typer.testing import CliRunner

from papergym.cli.audit import audit
from papergym.eval.records import EvalQuestion, EvalScore, EvalVerdict
from papergym.jsonl import read_jsonl, write_jsonl
from papergym.records import Criterion, Instance, LeakageVerdict, Rubric
from papergym.train.rollouts import RolloutGroup, verdict_char

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("audit")(audit)


@app.callback()
def _root() -> None:
    """A callback keeps `audit` a sub-command, as in the real CLI."""


runner = CliRunner()

TEXTS = {
    "c1": "Each query block is routed to the top-k key blocks chosen by a learned gate.",
    "c2": "The evaluation measures wall-clock latency against dense FlashAttention.",
    "c3": "Each query block is routed to the top-k key blocks chosen by a gate.",
    "c4": "The plan states a falsifiable hypothesis about sparsity patterns.",
    "c5": "The plan reduces the cost of attention on long sequences.",
}
# eight answers: c1 and c2 vary together, c3 copies c1's text, c4 is always met,
# c5 varies but the leakage audit found it leaked
PATTERN = {
    "c1": [1, 0, 1, 0, 1, 0, 1, 1],
    "c2": [1, 0, 1, 0, 1, 0, 0, 1],
    "c3": [1, 0, 1, 0, 1, 0, 1, 1],
    "c4": [1] * 8,
    "c5": [0, 1, 0, 1, 1, 0, 0, 1],
}


def _instance() -> Instance:
    specific = tuple(
        Criterion(
            id=cid,
            text=text,
            dimension="method",
            origin="answer",
            rank=rank,
            leakage=(LeakageVerdict(method="overlap", leaked=cid == "c5", score=0.5),),
        )
        for rank, (cid, text) in enumerate(TEXTS.items(), start=1)
    )
    return Instance(
        id="inst1",
        recipe="papergym",
        builder="extractive",
        paper_id="p1",
        question="How can attention on long sequences be made cheaper? Propose a plan.",
        reference_answer="A plan.",
        rubric=Rubric(specific=specific, general=()),
    )


def _eval_folder(tmp_path: Path, *, with_data: bool = True) -> Path:
    build = tmp_path / "build"
    write_jsonl(build / "instances.jsonl", [_instance()])
    folder = tmp_path / "eval"
    scores = [
        EvalScore(
            system=f"s{n % 2}",
            instance_id="inst1",
            sample=n // 2,
            value=0.5,
            words=10,
            verdicts=tuple(
                EvalVerdict(criterion_id=cid, kind="specific", rank=r, passed=bool(bits[n]))
                for r, (cid, bits) in enumerate(PATTERN.items(), start=1)
            ),
        )
        for n in range(8)
    ]
    write_jsonl(folder / "scores.jsonl", scores)
    write_jsonl(
        folder / "questions.jsonl",
        [EvalQuestion(instance_id="inst1", question="q", criteria=TEXTS)],
    )
    summary = {"data": str(build)} if with_data else {}
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def _by_id(report: dict) -> dict[str, dict]:
    return {c["criterion_id"]: c for c in report["criteria"]}


def test_eval_folder_report_and_rubric_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "audit",
            "--usefulness",
            str(_eval_folder(tmp_path)),
            "-o",
            str(out),
            "--json",
            "audit.usefulness.min_answers=4",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    criteria = _by_id(report)
    assert report["kind"] == "eval" and report["groups"] == 1 and report["answers"] == 8
    assert report["leakage_measured"] is True
    assert criteria["c1"]["recommendation"] == "keep"
    assert criteria["c1"]["correlation"] > 0.5
    assert criteria["c3"]["recommendation"] == "drop" and criteria["c3"]["duplicate_of"] == "c1"
    assert criteria["c4"]["constant"] == "always" and criteria["c4"]["recommendation"] == "drop"
    assert criteria["c5"]["leaked"] is True and criteria["c5"]["recommendation"] == "drop"
    (written,) = read_jsonl(out / "instances.jsonl", Instance)
    assert [c.id for c in written.rubric.specific] == ["c1", "c2"]
    assert json.loads((out / "usefulness_report.json").read_text())["counts"] == report["counts"]


def test_eval_folder_table_says_what_was_not_measured(tmp_path: Path) -> None:
    folder = _eval_folder(tmp_path, with_data=False)
    result = runner.invoke(app, ["audit", "--usefulness", str(folder)])
    assert result.exit_code == 0, result.output
    assert "leakage: not measured" in result.output
    assert "Criterion usefulness" in result.output and "c3" in result.output
    # texts from questions.jsonl: duplicates are still found without the instances
    as_json = runner.invoke(app, ["audit", "--usefulness", str(folder), "--json"])
    report = json.loads(as_json.output)
    assert report["leakage_measured"] is False and report["instances"] is None
    assert _by_id(report)["c3"]["duplicate_of"] == "c1"
    assert _by_id(report)["c5"]["leaked"] is None  # not measured, never "not leaked"


def test_rubric_file_needs_the_instances(tmp_path: Path) -> None:
    folder = _eval_folder(tmp_path, with_data=False)
    out = tmp_path / "out"
    result = runner.invoke(app, ["audit", "--usefulness", str(folder), "-o", str(out)])
    assert result.exit_code == 2
    assert "pass --instances" in result.output and not out.exists()
    again = runner.invoke(
        app,
        [
            "audit",
            "--usefulness",
            str(folder),
            "-o",
            str(out),
            "--instances",
            str(tmp_path / "build" / "instances.jsonl"),
        ],
    )
    assert again.exit_code == 0, again.output
    assert (out / "instances.jsonl").is_file()


def test_run_folder_reads_the_grpo_groups(tmp_path: Path) -> None:
    build = tmp_path / "build"
    write_jsonl(build / "instances.jsonl", [_instance()])
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump({"data": {"build_dir": str(build)}}))
    groups = []
    for step in range(4):  # c2 never varies within a group, though it varies across groups
        rows = []
        for member in range(4):
            bits = {cid: PATTERN[cid][(member + step) % 8] for cid in TEXTS}
            bits["c2"] = step % 2
            rows.append("".join(verdict_char(bool(bits[cid])) for cid in TEXTS))
        groups.append(
            RolloutGroup(
                step=step,
                instance_id="inst1",
                criteria=tuple(TEXTS),
                weights=(1.0,) * 5,
                rewards=(0.5,) * 4,
                verdicts=tuple(rows),
            )
        )
    write_jsonl(run / "3-grpo" / "rollouts.jsonl", groups)
    result = runner.invoke(app, ["audit", "--usefulness", str(run), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert (report["kind"], report["groups"], report["answers"]) == ("run", 4, 16)
    c2 = _by_id(report)["c2"]
    assert (c2["varied_groups"], c2["groups"]) == (0, 4)
    assert c2["recommendation"] == "reweight" and c2["new_weight"] == 0.5


def test_a_folder_of_neither_kind_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    result = runner.invoke(app, ["audit", "--usefulness", str(tmp_path), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert str(tmp_path) in result.output and "neither an eval folder" in result.output
    assert not (tmp_path / "o").exists()


def test_datasets_and_usefulness_do_not_mix(tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", "--usefulness", str(tmp_path), "x.jsonl"])
    assert result.exit_code == 2 and "one folder" in result.output
