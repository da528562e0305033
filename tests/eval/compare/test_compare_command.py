"""``papergym compare`` end to end against the fake LLM on 127.0.0.1, with scripted judges."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval.compare.records import CompareSummary, CompareVerdict
from papergym.eval.records import (
    Estimate,
    EvalAnswer,
    EvalSummary,
    EvalSystem,
    SystemSummary,
)
from papergym.fakellm import FakeOpenAIServer
from papergym.jsonl import read_jsonl, write_jsonl
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric, content_hash

runner = CliRunner()

QUESTIONS = (
    "Attention is quadratic in sequence length. Propose a plan to make it cheaper.",
    "Retrieval helps small models answer rare facts. Propose a plan to use it well.",
    "GARBLE Optimisers overfit small data. Propose a plan to regularise training.",
)


@pytest.fixture(autouse=True)
def _no_llm_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "PAPERGYM_BASE_URL",
        "PAPERGYM_MODEL",
        "PAPERGYM_LLM_CONFIG",
        "PAPERGYM_API_KEY_ENV",
        "PAPERGYM_CONFIG",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def _instances(tmp_path: Path, questions: tuple[str, ...] = QUESTIONS) -> list[Instance]:
    instances = []
    for number, question in enumerate(questions):
        paper = f"p{number}"
        specific = (
            Criterion(
                id=f"{paper}-c1",
                text="Uses a sparse method.",
                dimension="method",
                origin="answer",
                rank=1,
            ),
            Criterion(
                id=f"{paper}-c2",
                text="Measures latency.",
                dimension="experiment",
                origin="answer",
                rank=2,
            ),
        )
        instances.append(
            Instance(
                id=Instance.make_id("papergym", "llm", paper),
                recipe="papergym",
                builder="llm",
                paper_id=paper,
                question=question,
                reference_answer=f"The paper's own plan {number}.",
                rubric=Rubric(specific=specific, general=GENERAL_CRITERIA),
            )
        )
    write_jsonl(tmp_path / "build" / "instances.jsonl", instances)
    return instances


def _empty(n: int = 0) -> Estimate:
    return Estimate(value=None, n=n)


def _eval_dir(folder: Path, data: Path, instances: list[Instance], systems: dict[str, str]) -> Path:
    """An eval folder as `papergym eval` writes it: ``systems`` maps a name to the marker its
    answers carry."""
    data_id = content_hash(
        [[i.id, i.question, i.rubric.model_dump(mode="json")] for i in instances]
    )
    summaries = tuple(
        SystemSummary(
            system=EvalSystem(
                name=name, spec=f"openai:{name}@http://x/v1", kind="endpoint", model=name
            ),
            answers=len(instances),
            scored=0,
            unscored=0,
            reward=_empty(),
            specific=_empty(),
            general=_empty(),
            by_dimension={},
            general_criteria={},
            by_rank={},
            words=_empty(),
            length_reward=(),
        )
        for name in systems
    )
    summary = EvalSummary(
        version="test",
        data=str(data),
        data_format="instances",
        data_id=data_id,
        split="all",
        questions=len(instances),
        instance_ids=tuple(i.id for i in instances),
        samples=1,
        temperature=0.0,
        max_tokens=256,
        judge="offline",
        alpha=0.7,
        seed=0,
        resamples=100,
        systems=summaries,
    )
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(summary.model_dump_json(), encoding="utf-8")
    answers = [
        EvalAnswer(
            system=name,
            instance_id=i.id,
            sample=0,
            answer=f"{marker} plan for {i.paper_id}",
            words=4,
        )
        for name, marker in systems.items()
        for i in instances
    ]
    write_jsonl(folder / "answers.jsonl", answers)
    return folder


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    instances = _instances(tmp_path)
    data = tmp_path / "build"
    one = _eval_dir(
        tmp_path / "eval1", data, instances, {"base": "BASE-MARK", "tuned": "TUNED-MARK"}
    )
    two = _eval_dir(tmp_path / "eval2", data, instances, {"other": "OTHER-MARK"})
    return one, two


def _prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


def _pick(label: str) -> dict[str, str]:
    return {"reason": "scripted", "overall": label, "method": label, "experiment": label}


def always_a(request: dict[str, Any]) -> dict[str, str]:
    return _pick("A")


def the_tuned_one(request: dict[str, Any]) -> dict[str, str]:
    """Finds the plan carrying TUNED-MARK wherever it is shown."""
    found = re.search(r"Plan ([A-Z]):\n<<<\nTUNED-MARK", _prompt(request))
    assert found is not None
    return _pick(found.group(1))


def garbage_on_garble(request: dict[str, Any]) -> dict[str, str] | str:
    return "I cannot decide." if "GARBLE" in _prompt(request) else _pick("B")


def _run(*args: str | Path) -> Any:
    return runner.invoke(app, ["compare", *map(str, args)])


def _llm(server: FakeOpenAIServer, tmp_path: Path) -> list[str]:
    return [
        "--base-url",
        server.base_url,
        "--model",
        "judge-model",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]


def _summary(out: Path) -> CompareSummary:
    return CompareSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))


def test_a_judge_that_always_picks_a_gives_equal_wins_and_full_position_bias(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    server.responder = always_a
    out = tmp_path / "cmp"
    result = _run(*dirs, "-o", out, *_llm(server, tmp_path))
    assert result.exit_code == 0, result.output
    summary = _summary(out)
    assert summary.systems == ("base", "tuned", "other")
    assert summary.design == "permutations" and len(summary.orderings) == 6
    assert (summary.questions, summary.verdicts, summary.unparsed) == (3, 18, 0)
    for criterion in summary.criteria:
        assert [r.win.value for r in criterion.systems] == pytest.approx([1 / 3] * 3)
        assert criterion.position_bias.first.value == 1.0
    verdicts = read_jsonl(out / "verdicts.jsonl", CompareVerdict)
    assert len(verdicts) == 18
    first = verdicts[0]
    assert first.picks is not None and first.picks["overall"].label == "A"
    assert first.picks["overall"].system == first.ordering[0]
    assert first.reason == "scripted"
    assert first.judge == "judge" and first.model == "judge-model"
    assert summary.judge_models == {"judge": "judge-model"}
    assert (out / "config.yaml").is_file()
    assert "position bias" in result.output
    # the reference is not shown by default
    assert all("own plan" not in _prompt(r) for r in server.requests)


def test_a_judge_that_follows_one_system_gives_it_every_win_and_no_bias(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    server.responder = the_tuned_one
    out = tmp_path / "cmp"
    result = _run(*dirs, "-o", out, *_llm(server, tmp_path), "compare.reference=true", "--json")
    assert result.exit_code == 0, result.output
    summary = CompareSummary.model_validate_json(result.stdout)
    for criterion in summary.criteria:
        rates = {r.system: r for r in criterion.systems}
        assert rates["tuned"].win.value == 1.0 and rates["tuned"].wins == 18
        assert rates["base"].loss.value == 1.0 and rates["other"].loss.value == 1.0
        assert criterion.position_bias.first.value == pytest.approx(1 / 3)
    assert summary.reference_shown
    assert all("own plan" in _prompt(r) for r in server.requests)


def test_garbage_verdicts_are_counted_unparsed_not_lost(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    server.responder = garbage_on_garble
    out = tmp_path / "cmp"
    result = _run(*dirs, "-o", out, *_llm(server, tmp_path), "llm.default.repair_attempts=0")
    assert result.exit_code == 0, result.output
    summary = _summary(out)
    assert (summary.verdicts, summary.parsed, summary.unparsed) == (18, 12, 6)
    overall = summary.criteria[0]
    assert (overall.verdicts, overall.parsed, overall.unparsed) == (18, 12, 6)
    assert sum(r.wins + r.ties + r.losses for r in overall.systems) == 3 * 12
    assert all(r.win.n == 2 for r in overall.systems)  # two questions behind each rate
    unparsed = [v for v in read_jsonl(out / "verdicts.jsonl", CompareVerdict) if v.picks is None]
    assert len(unparsed) == 6 and all(
        "LLMOutputError" in (v.unparsed_reason or "") for v in unparsed
    )
    assert "6 unparsed" in result.output


def test_two_judges_report_fleiss_kappa(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    server.responder = lambda request: _pick("A" if request["model"] == "m1" else "B")
    judges = f"openai:m1@{server.base_url},openai:m2@{server.base_url}"
    out = tmp_path / "cmp"
    result = _run(*dirs, "-o", out, "--judges", judges, "--no-cache")
    assert result.exit_code == 0, result.output
    summary = _summary(out)
    assert summary.judges == (f"openai:m1@{server.base_url}", f"openai:m2@{server.base_url}")
    assert summary.verdicts == 36
    kappa = summary.agreement[0]
    assert kappa.kappa == pytest.approx(-0.5)  # never agreeing, see test_compare.py
    assert (kappa.items, kappa.judges) == (18, 2)
    assert "Fleiss" in result.output


def test_an_interrupted_comparison_resumes_without_asking_again(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    server.responder = always_a
    out = tmp_path / "cmp"
    llm = [*_llm(server, tmp_path)[:4], "--no-cache", "llm.default.max_retries=0"]
    server.fail(500, times=2)
    first = _run(*dirs, "-o", out, *llm)
    assert first.exit_code == 1
    assert "2 of 18 verdicts failed at the endpoint" in first.output
    assert "run the same command again" in first.output
    assert len(read_jsonl(out / "verdicts.jsonl", CompareVerdict)) == 16
    assert not (out / "summary.json").exists()
    server.reset_stats()
    second = _run(*dirs, "-o", out, *llm)
    assert second.exit_code == 0, second.output
    assert server.request_count == 2  # only the two missing verdicts
    assert _summary(out).verdicts == 18
    server.reset_stats()
    assert _run(*dirs, "-o", out, *llm).exit_code == 0
    assert server.request_count == 0
    # verdicts of another setup, or of another model behind the judge, are never mixed in
    for changed in (["compare.reference=true"], ["llm.default.model=another-model"]):
        other = _run(*dirs, "-o", out, *llm, *changed)
        assert other.exit_code == 2
        assert "holds a verdict of another comparison" in other.output


# -- bad input: one line, exit 2, nothing written ----------------------------------------------


def _refused(result: Any, out: Path, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    for needle in needles:
        assert needle in " ".join(result.output.split())
    assert not out.exists()


def test_no_llm_configured_says_which_options_to_set(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cmp"
    _refused(_run(*dirs, "-o", out), out, "--judge openai:MODEL@URL", "--base-url")


def test_eval_dirs_on_different_data_are_refused(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    (tmp_path / "other").mkdir()
    instances = _instances(tmp_path / "other", QUESTIONS[:2])
    three = _eval_dir(tmp_path / "eval3", tmp_path / "other" / "build", instances, {"x": "X"})
    out = tmp_path / "cmp"
    result = _run(dirs[0], three, "-o", out, *_llm(server, tmp_path))
    _refused(result, out, "different data", str(dirs[0]), str(three))
    assert server.request_count == 0


def test_an_endpoint_that_is_down_is_refused_before_anything_is_written(
    dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    with FakeOpenAIServer() as gone:
        url = gone.base_url
    out = tmp_path / "cmp"
    _refused(_run(*dirs, "-o", out, "--judge", f"openai:m@{url}"), out, "unreachable")


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda rows: [*rows, rows[0]], "duplicate answer of 'base'"),
        (lambda rows: rows[1:], "has no answer (sample 0) to 1 question(s)"),
        (lambda rows: [*rows, {**rows[0], "instance_id": "nope"}], "instance id 'nope' is not"),
        (lambda rows: [*rows, {**rows[0], "system": "ghost"}], "system 'ghost' is not"),
    ],
)
def test_a_broken_answers_file_is_named(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path, edit: Any, needle: str
) -> None:
    path = dirs[0] / "answers.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in edit(rows)), encoding="utf-8")
    out = tmp_path / "cmp"
    _refused(_run(*dirs, "-o", out, *_llm(server, tmp_path)), out, needle, "answers.jsonl")


def test_one_system_is_not_a_comparison(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "cmp"
    _refused(_run(dirs[1], "-o", out, *_llm(server, tmp_path)), out, "at least 2 systems")


def test_data_moved_since_the_eval_needs_data(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    moved = tmp_path / "moved"
    (tmp_path / "build").rename(moved)
    out = tmp_path / "cmp"
    _refused(_run(*dirs, "-o", out, *_llm(server, tmp_path)), out, "--data")
    server.responder = always_a
    result = _run(*dirs, "-o", out, *_llm(server, tmp_path), "--data", moved)
    assert result.exit_code == 0, result.output


def test_an_endpoint_judge_takes_the_default_backends_settings(
    server: FakeOpenAIServer, dirs: tuple[Path, Path], tmp_path: Path
) -> None:
    server.responder = lambda request: "no JSON here"
    out = tmp_path / "cmp"
    llm = [*_llm(server, tmp_path)[:4], "--no-cache", "llm.default.repair_attempts=0"]
    result = _run(*dirs, "-o", out, "--judge", f"openai:other@{server.base_url}", *llm)
    assert result.exit_code == 0, result.output
    assert server.request_count == 18  # no repairs: one call per verdict
    assert {r["model"] for r in server.requests} == {"other"}
    assert _summary(out).unparsed == 18
