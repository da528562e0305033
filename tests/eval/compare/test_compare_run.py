"""``papergym.eval.compare.run.run_compare`` from Python: the compare section decides the run,
the caller hears when judging starts and of each verdict, and a second call resumes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from papergym.eval.compare.records import CompareSummary, CompareVerdict
from papergym.eval.compare.run import run_compare
from papergym.eval.compare.settings import CompareSection
from papergym.eval.data import load_eval_data
from papergym.eval.run import run_eval
from papergym.eval.settings import EvalSection
from papergym.eval.systems import resolve_systems
from papergym.fakellm.server import FakeOpenAIServer
from papergym.jsonl import write_jsonl
from papergym.llm.config import LLMConfig
from papergym.reward.settings import RewardSection
from support.reward_load import mixed_instances


def _pick_a(body: dict[str, Any]) -> dict[str, str]:
    return {"reason": "scripted", "overall": "A", "method": "A", "experiment": "B"}


def _evaluated(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    write_jsonl(tmp_path / "build" / "instances.jsonl", mixed_instances(2))
    out = tmp_path / "eval"
    run_eval(
        load_eval_data(tmp_path / "build", "all", None),
        resolve_systems([f"a=openai:m@{server.base_url}", f"b=openai:n@{server.base_url}"]),
        out,
        section=EvalSection(resamples=100),
        reward=RewardSection(judge="offline"),
        llm=LLMConfig(cache=False),
        config_yaml="",
    )
    return out


def test_run_compare_reports_its_start_and_each_verdict_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    system = FakeOpenAIServer(responder=lambda body: str(body["messages"][-1]["content"]))
    judge = FakeOpenAIServer(responder=_pick_a)
    with system, judge:
        evaluated = _evaluated(tmp_path, system)
        out = tmp_path / "cmp"
        starts: list[int] = []
        heard: list[CompareVerdict] = []

        def compare() -> Any:
            return run_compare(
                [evaluated],
                out,
                section=CompareSection(judges=[f"openai:j@{judge.base_url}"], resamples=100),
                llm=LLMConfig(cache=False),
                config_yaml="saved: as given\n",
                on_start=starts.append,
                on_verdict=heard.append,
            )

        result = compare()
        assert capsys.readouterr().out == ""
        assert starts == [4] and len(heard) == 4  # 2 questions x 2 orderings x 1 judge
        assert isinstance(result.summary, CompareSummary) and result.failed == []
        assert (result.planned, result.kept) == (4, 4)
        saved = CompareSummary.model_validate_json((out / "summary.json").read_text())
        assert saved == result.summary
        assert (out / "config.yaml").read_text() == "saved: as given\n"
        # A wins overall whatever the order: each system wins the half of the verdicts
        overall = result.summary.criteria[0]
        assert [r.wins for r in overall.systems] == [2, 2]
        assert overall.position_bias.first.value == 1.0
        asked = judge.request_count
        again = compare()
        assert judge.request_count == asked and starts == [4, 0]
        assert again.summary is not None and again.summary.criteria == result.summary.criteria
