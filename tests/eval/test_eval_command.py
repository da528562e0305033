"""``papergym eval`` end to end: two systems on fake OpenAI servers, the offline judge."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval.records import EvalAnswer, EvalQuestion, EvalScore, EvalSummary
from papergym.fakellm.server import FakeOpenAIServer
from papergym.jsonl import write_jsonl
from papergym.records import Instance
from papergym.reward.offline import OfflineJudge
from support.reward_load import mixed_instances

runner = CliRunner()


@pytest.fixture(scope="module")
def instances() -> list[Instance]:
    return mixed_instances(4)


@pytest.fixture
def data(tmp_path: Path, instances: list[Instance]) -> Path:
    path = tmp_path / "build" / "instances.jsonl"
    path.parent.mkdir()
    write_jsonl(path, instances)
    return path.parent


def _question(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


@pytest.fixture
def servers(instances: list[Instance]) -> Iterator[tuple[FakeOpenAIServer, FakeOpenAIServer]]:
    """``good`` answers each question with its reference; ``poor`` with an evasion."""
    references = {i.question: i.reference_answer for i in instances}
    good = FakeOpenAIServer(responder=lambda body: references[_question(body)])
    poor = FakeOpenAIServer(responder=lambda body: "I would think about it carefully.")
    with good, poor:
        yield good, poor


def _systems(good: FakeOpenAIServer, poor: FakeOpenAIServer) -> list[str]:
    return [f"good=openai:m@{good.base_url}", f"poor=openai:m@{poor.base_url}"]


def _eval(args: list[str], out: Path, data: Path, *extra: str) -> Any:
    return runner.invoke(
        app,
        [
            "eval",
            *args,
            "--data",
            str(data),
            "-o",
            str(out),
            "--judge",
            "offline",
            "--split",
            "all",
            "llm.cache=false",  # resume must come from the eval folder, not the LLM cache
            "eval.resamples=200",
            *extra,
        ],
    )


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_two_systems_end_to_end_then_resume(
    data: Path,
    tmp_path: Path,
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good, poor = servers
    out = tmp_path / "eval"
    result = _eval(_systems(good, poor), out, data, "-n", "2", "--json")
    assert result.exit_code == 0, result.output
    answers = [EvalAnswer.model_validate_json(line) for line in _lines(out / "answers.jsonl")]
    scores = [EvalScore.model_validate_json(line) for line in _lines(out / "scores.jsonl")]
    assert len(answers) == len(scores) == 2 * 4 * 2  # systems × questions × samples
    usage = json.loads(result.stdout)["usage"]  # the calls spent, beside the summary
    assert sum(row["calls"] for row in usage) == len(good.requests) + len(poor.requests) == 16
    assert {(a.system, a.sample) for a in answers} == {
        (s, k) for s in ("good", "poor") for k in (0, 1)
    }
    # the questions and their criteria's texts travel with the answers, for the report
    asked = [EvalQuestion.model_validate_json(line) for line in _lines(out / "questions.jsonl")]
    assert {q.question for q in asked} == {i.question for i in mixed_instances(4)}
    first = next(i for i in mixed_instances(4) if i.id == asked[0].instance_id)
    assert asked[0].criteria[first.rubric.specific[0].id] == first.rubric.specific[0].text
    # the prompt is the one training used: the question as the user turn
    assert {_question(b) for b in good.requests} == {i.question for i in mixed_instances(4)}
    assert all(
        v.reason for s in scores if s.system == "good" for v in s.verdicts if v.kind == "specific"
    )
    assert all(
        v.rank is not None and v.dimension
        for s in scores
        for v in s.verdicts
        if v.kind == "specific"
    )

    summary = EvalSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))
    assert summary.judge.startswith("offline") and summary.questions == 4 and summary.samples == 2
    by_name = {s.system.name: s for s in summary.systems}
    high, low = by_name["good"], by_name["poor"]
    assert high.reward.value is not None and low.reward.value is not None
    assert high.reward.value > low.reward.value
    assert high.reward.n == 4 and high.scored == 8 and high.unscored == 0
    assert high.reward.low is not None and high.reward.high is not None
    assert high.reward.low <= high.reward.value <= high.reward.high
    assert set(high.by_dimension) == {"method", "experiment"}
    assert set(high.by_rank) == {"1", "2", "3", "4"}
    assert high.words.value is not None and high.words.value > low.words.value  # type: ignore[operator]
    assert [c.method for c in high.length_reward] == ["pearson", "spearman"]
    (pair,) = summary.pairs
    assert (pair.a, pair.b, pair.reward.n) == ("good", "poor", 4)
    assert pair.reward.value == pytest.approx(high.reward.value - low.reward.value)
    assert pair.wins == 4
    assert json.loads(result.stdout)["data_id"] == summary.data_id
    assert "reward:" in (out / "config.yaml").read_text(encoding="utf-8")

    # interrupted while judging: the last verdict is lost (and a half-written line left)
    kept = _lines(out / "scores.jsonl")[:-1]
    (out / "scores.jsonl").write_text("\n".join(kept) + '\n{"system": "go', encoding="utf-8")
    calls: list[str] = []
    original = OfflineJudge.judge

    async def counting(self: OfflineJudge, instance: Instance, answer: str) -> Any:
        calls.append(instance.id)
        return await original(self, instance, answer)

    monkeypatch.setattr(OfflineJudge, "judge", counting)
    requests = good.request_count + poor.request_count
    again = _eval(_systems(good, poor), out, data, "-n", "2")
    assert again.exit_code == 0, again.output
    assert good.request_count + poor.request_count == requests  # no answer generated again
    assert len(calls) == 1  # only the lost verdict is judged again
    assert len(_lines(out / "scores.jsonl")) == 16
    assert _lines(out / "scores.jsonl")[:15] == kept
    resumed = EvalSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))
    assert resumed == summary


def test_a_folder_of_other_settings_is_refused(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    good, poor = servers
    out = tmp_path / "eval"
    assert _eval(_systems(good, poor)[:1], out, data).exit_code == 0
    before = (out / "answers.jsonl").read_bytes()
    changed = _eval(_systems(good, poor)[:1], out, data, "eval.temperature=0.1")
    assert changed.exit_code == 2
    assert "temperature: 0.7 → 0.1" in changed.output and len(changed.output.splitlines()) == 1
    assert (out / "answers.jsonl").read_bytes() == before


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_bad_input_is_one_line_exit_2_and_nothing_written(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    good, _ = servers
    out = tmp_path / "eval"
    ok = f"good=openai:m@{good.base_url}"
    cases = {
        "unreachable": ([ok, f"down=openai:m@http://127.0.0.1:{_free_port()}/v1"], data, ()),
        "no such run folder": ([str(tmp_path / "missing-run")], data, ()),
        "not a model folder": ([str(data)], data, ()),
        "endpoint is": (["openai:no-url"], data, ()),
        "no such file": ([ok], tmp_path / "nothing.jsonl", ()),
        "two systems are named": ([ok, ok], data, ()),
    }
    for needle, (systems, where, extra) in cases.items():
        result = _eval(systems, out, where, *extra)
        assert result.exit_code == 2, (needle, result.output)
        assert needle in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
        assert not out.exists(), needle
    unknown = runner.invoke(
        app,
        ["eval", ok, "--data", str(data), "-o", str(out), "--split", "dev", "--judge", "offline"],
    )
    # the flag is generated from eval.split's Literal: click names it and its choices
    assert unknown.exit_code == 2 and "'--split'" in unknown.output
    no_fraction = runner.invoke(
        app,
        ["eval", ok, "--data", str(data), "-o", str(out), "--split", "test", "--judge", "offline"],
    )
    assert no_fraction.exit_code == 2 and "data.test_fraction" in no_fraction.output
    assert not out.exists()
    assert good.request_count == 0  # nothing was generated for any refused command


def test_other_rubric_datasets_are_evaluated_with_weights_kept(
    tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    from papergym.eval.data import load_eval_data

    rows = [
        {
            "id": "rh-1",
            "prompt": "How would you test whether a cache speeds up a web service?",
            "rubrics": [
                {"criterion": "Measures latency with and without the cache", "points": 5},
                {"criterion": "Claims a speed-up without measuring it", "points": -3},
            ],
        }
    ]
    path = tmp_path / "rubrichub.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    loaded = load_eval_data(path, "auto", None)
    (instance,) = loaded.instances
    assert loaded.format == "rubrichub" and loaded.split == "all"
    assert [c.weight for c in instance.rubric.specific] == [5.0, -3.0]
    assert len(instance.rubric.general) == 7
    _, poor = servers
    out = tmp_path / "eval"
    result = _eval([f"poor=openai:m@{poor.base_url}"], out, path)
    assert result.exit_code == 0, result.output
    summary = EvalSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))
    assert summary.data_format == "rubrichub" and summary.systems[0].answers == 1


@pytest.mark.slow  # about 15 s on 2 cores: loads the tiny model and the offline judge
def test_a_local_tiny_model_is_a_system(data: Path, tmp_path: Path) -> None:
    from papergym.train.tiny import save_tiny_model

    model = save_tiny_model(tmp_path / "tiny-model")
    out = tmp_path / "eval"
    result = _eval([f"tiny={model}"], out, data, "eval.max_tokens=16", "eval.temperature=0")
    assert result.exit_code == 0, result.output
    answers = [EvalAnswer.model_validate_json(line) for line in _lines(out / "answers.jsonl")]
    assert len(answers) == 4 and {a.system for a in answers} == {"tiny"}
    summary = EvalSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))
    (system,) = summary.systems
    assert system.system.kind == "model" and system.answers == 4
    assert system.scored + system.unscored == 4


def test_run_folders_resolve_to_their_last_final_model_and_training_prompt(tmp_path: Path) -> None:
    from papergym.cli.eval import split_systems
    from papergym.eval.systems import resolve_system

    run = tmp_path / "run"
    for stage in ("1-opsd", "2-grpo"):
        (run / stage / "final").mkdir(parents=True)
        (run / stage / "final" / "config.json").write_text("{}", encoding="utf-8")
    (run / "config.yaml").write_text("data:\n  system_prompt: Plan it.\n", encoding="utf-8")
    system = resolve_system(f"mine={run}", default_prompt="other")
    assert system.record.kind == "run" and system.record.name == "mine"
    assert system.backend.backend == "hf" and system.backend.model == str(run / "2-grpo" / "final")
    assert system.system_prompt == "Plan it."
    model = resolve_system(str(run / "1-opsd" / "final"), default_prompt="other")
    assert (model.record.kind, model.record.name, model.system_prompt) == (
        "model",
        "final",
        "other",
    )
    endpoint = resolve_system("openai:Qwen/Qwen3-8B@http://user:secret@127.0.0.1:9/v1")
    assert endpoint.record.name == "Qwen/Qwen3-8B" and "secret" not in endpoint.record.spec
    assert split_systems(["a=openai:m@http://x/v1", "eval.samples=2", "seed=3", str(run)]) == (
        ["a=openai:m@http://x/v1", str(run)],
        ["eval.samples=2", "seed=3"],
    )


def test_a_resume_that_reorders_the_records_leaves_the_summary_as_it_was(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    """Issue 20, item 18: after a kill -9 and a resume, the records were the same but in
    another order, and the intervals moved."""
    good, poor = servers
    out = tmp_path / "eval"
    assert _eval(_systems(good, poor), out, data, "-n", "2").exit_code == 0
    first = (out / "summary.json").read_text(encoding="utf-8")
    for name in ("answers.jsonl", "scores.jsonl"):  # the order a resumed run leaves
        lines = _lines(out / name)
        (out / name).write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    again = _eval(_systems(good, poor), out, data, "-n", "2")
    assert again.exit_code == 0, again.output
    assert (out / "summary.json").read_text(encoding="utf-8") == first
