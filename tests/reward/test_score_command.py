"""``papergym score`` refuses answers it cannot score as text, and ``check-reward``'s CLI."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm.server import FakeOpenAIServer
from papergym.records import Instance
from support.instances import rubric_instance

runner = CliRunner()


def make_instance(ident: str, topic: str) -> Instance:
    criteria = [f"The plan runs {topic} experiment number {n} on held-out data." for n in (1, 2)]
    return rubric_instance(
        ident,
        criteria,
        question=f"How would you study {topic}?",
        reference_answer=" ".join(criteria),
        title=f"Paper on {topic}",
        dimension="experiment",
    )


@pytest.fixture
def built(tmp_path: Path) -> Path:
    path = tmp_path / "instances.jsonl"
    path.write_text(
        "".join(
            make_instance(i, t).model_dump_json() + "\n"
            for i, t in (("a", "sparse attention"), ("b", "pulsar timing"))
        )
    )
    return path


def score(built: Path, answers_text: str | bytes, tmp_path: Path) -> tuple[int, str, Path]:
    answers = tmp_path / "answers.jsonl"
    if isinstance(answers_text, bytes):
        answers.write_bytes(answers_text)
    else:
        answers.write_text(answers_text)
    out = tmp_path / "scores.jsonl"
    result = runner.invoke(
        app, ["score", str(built), str(answers), "-o", str(out), "--judge", "offline"]
    )
    return result.exit_code, result.output, out


def lines(*rows: object) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


GOOD = {"instance_id": "a", "answer": "A plan."}


@pytest.mark.parametrize(
    ("row", "line", "message"),
    [
        ({"instance_id": "b", "answer": None}, 2, "answer must be a string, not null"),
        ({"instance_id": "b"}, 2, "no answer field (expected one of answer, response, completion)"),
        ({"instance_id": "b", "answer": 3.14}, 2, "answer must be a string, not a number"),
        ({"instance_id": "b", "answer": ["x"]}, 2, "answer must be a string, not a list"),
        ({"instance_id": "b", "text": "plan"}, 2, "no answer field"),
        ({"answer": "plan"}, 2, "no instance_id field (expected one of instance_id, id)"),
        ({"instance_id": 7, "answer": "plan"}, 2, "instance_id must be a string, not a number"),
        ({"instance_id": "a", "answer": "again"}, 2, "duplicate instance_id 'a' (first on line 1)"),
        ({"instance_id": "b", "answer": "x", "sample": 0}, 2, "sample field on some lines but"),
        (["a", "plan"], 2, "expected a JSON object"),
        ({"instance_id": "zzz", "answer": "plan"}, 2, "instance_id 'zzz' is not in"),
    ],
)
def test_bad_answer_rows_are_one_line_errors_and_nothing_is_written(
    built: Path, tmp_path: Path, row: object, line: int, message: str
) -> None:
    code, output, out = score(built, lines(GOOD, row), tmp_path)
    assert code == 2
    assert f"answers.jsonl:{line}" in output and message in output
    assert len(output.strip().splitlines()) == 1
    assert not out.exists()


def test_folders_bom_and_invalid_utf8(built: Path, tmp_path: Path) -> None:
    folder = runner.invoke(app, ["score", str(built), str(tmp_path), "--judge", "offline"])
    assert folder.exit_code == 2 and "is a folder" in folder.output
    empty = tmp_path / "not-a-build"
    empty.mkdir()
    as_instances = runner.invoke(app, ["score", str(empty), str(built), "--judge", "offline"])
    assert as_instances.exit_code == 2
    assert "no instances.jsonl in this folder" in as_instances.output
    code, output, out = score(built, b'{"instance_id": "a", "answer": "caf\xe9"}\n', tmp_path)
    assert code == 2 and "answers.jsonl:1" in output and "not UTF-8" in output
    assert not out.exists()
    bad_instances = tmp_path / "bad.jsonl"
    bad_instances.write_bytes(built.read_bytes() + b"\xff\n")
    bad = runner.invoke(app, ["score", str(bad_instances), str(built), "--judge", "offline"])
    assert bad.exit_code == 2 and "bad.jsonl:3" in bad.output and "not UTF-8" in bad.output
    # a byte-order mark (Windows editors) is fine in both files
    with_bom = tmp_path / "bom-instances.jsonl"
    with_bom.write_bytes(codecs.BOM_UTF8 + built.read_bytes())
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(codecs.BOM_UTF8 + lines(GOOD).encode())
    out = tmp_path / "bom-scores.jsonl"
    ok = runner.invoke(
        app,
        ["score", str(with_bom), str(answers), "-o", str(out), "--judge", "offline", "--json"],
    )
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["answers"] == 1 and out.exists()


def test_a_build_folder_is_taken_for_its_instances_and_scores_go_beside_the_answers(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 20 #22: without -o, scores.jsonl used to land in the current folder
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = tmp_path / "run"
    run.mkdir()
    answers = run / "answers.jsonl"
    answers.write_text(lines(GOOD))
    result = runner.invoke(app, ["score", str(built.parent), str(answers), "--judge", "offline"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in run.iterdir()) == [
        "answers.jsonl",
        "answers.scores.config.yaml",
        "answers.scores.jsonl",
    ]
    assert not any(elsewhere.iterdir())


def test_several_samples_per_instance_are_each_scored(built: Path, tmp_path: Path) -> None:
    # issue 20 #22: GRPO-style files (several samples per question) used to be refused
    plans = [  # the criterion's words and more: a bare copy of the rubric counts for nothing
        "We run sparse attention experiment number 1 on held-out data from long legal contracts "
        "and court rulings.",
        "A plan.",
        "",
    ]
    rows = [{"instance_id": "a", "sample": k, "answer": plan} for k, plan in enumerate(plans)]
    rows.append({"instance_id": "b", "sample": "s0", "answer": "A plan."})
    code, output, out = score(built, lines(*rows), tmp_path)
    assert code == 0, output
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(s["instance_id"], s["sample"]) for s in written] == [
        ("a", 0), ("a", 1), ("a", 2), ("b", "s0"),
    ]  # fmt: skip
    assert written[0]["value"] > written[1]["value"] and written[2]["value"] == 0.0
    # the same answers without a sample field: refused unless --samples numbers them
    plain = tmp_path / "plain.jsonl"
    plain.write_text(lines(*({k: v for k, v in r.items() if k != "sample"} for r in rows)))
    refused = runner.invoke(app, ["score", str(built), str(plain), "--judge", "offline"])
    assert refused.exit_code == 2 and "pass --samples" in refused.output
    numbered = tmp_path / "numbered.jsonl"
    result = runner.invoke(
        app,
        ["score", str(built), str(plain), "--samples", "-o", str(numbered), "--judge", "offline",
         "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["instances"] == 2 and summary["samples_per_instance"] == "1-3"
    assert summary["answers"] == 4 and summary["instances_all_tied"] == 0
    again = [json.loads(line) for line in numbered.read_text().splitlines()]
    assert [(s["instance_id"], s["sample"]) for s in again] == [
        ("a", 0), ("a", 1), ("a", 2), ("b", 0),
    ]  # fmt: skip
    assert [s["value"] for s in again] == [s["value"] for s in written]


@pytest.mark.parametrize(
    ("sample", "message"),
    [
        (1, "duplicate sample 1 of instance_id 'a' (first on line 2)"),
        (True, "sample must be an integer or a string, not a boolean"),
        (None, "sample must be an integer or a string, not null"),
        ("", "sample is empty"),
    ],
)
def test_bad_samples_are_one_line_errors(
    built: Path, tmp_path: Path, sample: object, message: str
) -> None:
    rows = [{**GOOD, "sample": 0}, {**GOOD, "sample": 1}, {**GOOD, "sample": sample}]
    code, output, out = score(built, lines(*rows), tmp_path)
    assert code == 2 and "answers.jsonl:3" in output and message in output
    assert not out.exists()


def test_duplicate_instances_and_output_folder_are_refused(built: Path, tmp_path: Path) -> None:
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text(built.read_text() + built.read_text().splitlines()[0] + "\n")
    code = runner.invoke(app, ["score", str(doubled), str(built), "--judge", "offline"])
    assert code.exit_code == 2 and "doubled.jsonl:3" in code.output
    assert "duplicate instance id 'a' (first on line 1)" in code.output
    answers = tmp_path / "answers.jsonl"
    answers.write_text(lines(GOOD))
    folder_out = runner.invoke(
        app, ["score", str(built), str(answers), "-o", str(tmp_path), "--judge", "offline"]
    )
    assert folder_out.exit_code == 2 and "-o takes the path" in folder_out.output


def test_truncated_answers_are_counted(built: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(lines(GOOD, {"id": "b", "response": "A long plan. " * 50}))
    out = tmp_path / "scores.jsonl"
    result = runner.invoke(
        app,
        [
            "score",
            str(built),
            str(answers),
            "-o",
            str(out),
            "--judge",
            "offline",
            "--max-answer-chars",
            "100",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["truncated"] == 1
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [s["answer_truncated"] for s in written] == [False, True]


def test_check_reward_strict_and_more_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from papergym.cli import check_reward as command

    monkeypatch.setattr(command, "FLAGS_SHOWN", 1)  # 3 instances instead of 11: a fast test
    # the offline judge is fooled by the criteria list on every instance: all are flagged
    # (without --strict, flagged instances exit 0: test_reward_adapters checks that)
    path = tmp_path / "instances.jsonl"
    path.write_text(
        "".join(make_instance(f"i{n}", f"topic {n}").model_dump_json() + "\n" for n in range(3))
    )
    strict = runner.invoke(app, ["check-reward", str(path), "--judge", "offline", "--strict"])
    assert strict.exit_code == 1, strict.output
    assert "… 2 more (--json lists them all)" in strict.output
    assert "--strict" in runner.invoke(app, ["check-reward", "--help"]).output


def test_check_reward_takes_a_build_folder(tmp_path: Path) -> None:
    # issue 20 #21: `check-reward BUILD_DIR` used to fail: "is a folder, not a JSONL file"
    build = tmp_path / "env"
    build.mkdir()
    (build / "instances.jsonl").write_text(make_instance("a", "sparse attention").model_dump_json())
    result = runner.invoke(app, ["check-reward", str(build), "--judge", "offline", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["instances"] == 1
    (build / "instances.jsonl").unlink()
    (build / "kept-00000.jsonl").write_text("")
    missing = runner.invoke(app, ["check-reward", str(build), "--judge", "offline"])
    assert missing.exit_code == 2
    assert "no instances.jsonl in this folder (it holds kept-00000.jsonl)" in missing.output


def test_check_reward_reports_progress() -> None:
    import asyncio

    from papergym.reward.check import check_reward
    from papergym.reward.offline import OfflineJudge
    from papergym.reward.reward import RubricReward

    seen: list[tuple[int, int]] = []
    two = [make_instance("a", "sparse attention"), make_instance("b", "pulsar timing")]
    asyncio.run(
        check_reward(RubricReward(OfflineJudge()), two, progress=lambda d, t: seen.append((d, t)))
    )
    assert seen[0] == (0, 24) and seen[-1] == (24, 24)  # 12 probes × 2 instances
    assert [d for d, _ in seen] == list(range(25))


def test_the_llm_judges_calls_are_in_the_json_summary(built: Path, tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(lines(GOOD, {"instance_id": "b", "answer": "Pulsar timing."}))
    with FakeOpenAIServer() as server:
        result = runner.invoke(
            app,
            ["score", str(built), str(answers), "-o", str(tmp_path / "s.jsonl"), "--judge",
             "llm", "--json", f"llm.default.base_url={server.base_url}", "llm.default.model=m",
             f"llm.cache_dir={tmp_path / 'cache'}"],
        )  # fmt: skip
        sent = server.request_count
    assert result.exit_code == 0, result.output
    usage = json.loads(result.stdout)["usage"]
    assert sum(row["calls"] for row in usage) == sent >= 2
    assert sum(row["structured"] for row in usage) >= 2
