"""``papergym.eval.run.run_eval`` from Python: the sections it is given decide the run, it
returns the result and writes the folder, prints nothing, and a second call resumes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.eval.data import EvalData, load_eval_data
from papergym.eval.records import EvalSummary
from papergym.eval.run import EvalResult, run_eval
from papergym.eval.settings import EvalSection
from papergym.eval.systems import resolve_systems
from papergym.fakellm.server import FakeOpenAIServer
from papergym.jsonl import write_jsonl
from papergym.llm.config import LLMConfig
from papergym.reward.settings import RewardSection
from support.reward_load import mixed_instances


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """A system that answers with the question it was asked."""
    with FakeOpenAIServer(responder=lambda body: str(body["messages"][-1]["content"])) as up:
        yield up


@pytest.fixture
def data(tmp_path: Path) -> EvalData:
    write_jsonl(tmp_path / "build" / "instances.jsonl", mixed_instances(2))
    return load_eval_data(tmp_path / "build", "all", None)


def _run(data: EvalData, server: FakeOpenAIServer, out: Path, ticks: list[int]) -> EvalResult:
    return run_eval(
        data,
        resolve_systems([f"a=openai:m@{server.base_url}", f"b=openai:n@{server.base_url}"]),
        out,
        section=EvalSection(samples=2, resamples=100),
        reward=RewardSection(judge="offline", alpha=0.5),
        llm=LLMConfig(cache=False),
        config_yaml="saved: as given\n",
        progress=ticks.append,
    )


def test_run_eval_takes_its_sections_returns_the_result_and_prints_nothing(
    data: EvalData,
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "eval"
    ticks: list[int] = []
    result = _run(data, server, out, ticks)
    assert capsys.readouterr().out == ""
    summary = result.summary
    assert summary is not None and result.failures == []
    assert EvalSummary.model_validate_json((out / "summary.json").read_text()) == summary
    # 2 systems x 2 questions x 2 samples: each answer and each score ticks the progress once
    assert len(result.scores) == 8 and ticks == [1] * 16
    assert (summary.samples, summary.alpha, summary.resamples) == (2, 0.5, 100)
    assert summary.data == str(data.path)  # the file read, when no label is given
    assert (out / "config.yaml").read_text() == "saved: as given\n"
    asked = server.request_count
    again = _run(data, server, out, [])
    assert server.request_count == asked  # resumed: nothing asked twice
    assert again.summary == summary


def test_run_eval_refuses_a_folder_of_other_settings_before_asking_anything(
    data: EvalData, server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "eval"
    _run(data, server, out, [])
    asked = server.request_count
    with pytest.raises(BadInputError, match="different configuration"):
        run_eval(
            data,
            resolve_systems([f"a=openai:m@{server.base_url}"]),
            out,
            section=EvalSection(samples=3),
            reward=RewardSection(judge="offline", alpha=0.5),
            llm=LLMConfig(cache=False),
            config_yaml="",
        )
    assert server.request_count == asked  # no answer asked for
