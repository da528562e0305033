"""Every LLM-facing command end to end against a real instruct model (issue 22): SmolLM2-135M
in process (``hf``) and behind ``transformers serve`` on 127.0.0.1, run by
``benchmarks/real_model.py`` exactly as a user runs them (``python -m papergym.cli``).

A 135M model writes poorly, so what is asserted is not quality: no command crashes (exit 0, 1
with endpoint failures to retry, or a build's documented 2 when every paper was dropped), every
input ends as an output, a drop with its reason, an unscored record with its reason or a failure
retried by the next run, and the command reports its counts and LLM usage. Slow (minutes per
command on a shared CPU): one prepared folder and one server for the module.

The fast tests at the end check the accounting rules themselves (default suite).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from support.smollm2 import needs_smollm2, prepared_smollm2

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_real_model", BENCHMARKS / "real_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bench = load_benchmark()


@pytest.fixture(scope="module")
def prepared(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2 as a model folder, shared through pytest's cache (support.smollm2)."""
    return prepared_smollm2(request, tmp_path_factory)


@pytest.fixture(scope="module", params=["hf", "served"])
def outcomes(
    request: pytest.FixtureRequest, prepared: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Every command's outcome against one target: the model in process, or one server."""
    work = tmp_path_factory.mktemp(request.param)
    if request.param == "hf":
        ran = bench.run_commands(bench.hf_target(prepared), work, bench.COMMANDS, 48)
        yield dict(zip(bench.COMMANDS, ran, strict=True))
        return
    with bench.served_target(prepared, work / "serve.log") as target:
        ran = bench.run_commands(target, work / "runs", bench.COMMANDS, 48)
        yield dict(zip(bench.COMMANDS, ran, strict=True))


@needs_smollm2
@pytest.mark.slow
@pytest.mark.parametrize("command", bench.COMMANDS)
def test_every_llm_command_accounts_for_every_input_against_smollm2(
    outcomes: dict[str, Any], command: str
) -> None:
    outcome = outcomes[command]
    assert bench.documented_exit(outcome), (outcome.exit_code, outcome.error)
    assert outcome.adds_up, (outcome.inputs, outcome.outputs, outcome.drops, outcome.unscored)
    assert all(reason for reason in (*outcome.drops, *outcome.unscored))  # each with its reason
    # the counts are reported: the command's own usage rows, every request accounted for
    assert outcome.usage and outcome.total("calls") + outcome.total("cache_hits") > 0
    assert outcome.total("completion_tokens") > 0


# --- the accounting rules (fast) -----------------------------------------------------------


def outcome(command: str, code: int, inputs: int, **counts: Any) -> Any:
    return bench.Outcome(command, "hf", "paper", code, inputs, **counts)


def test_an_input_missing_from_every_record_does_not_add_up() -> None:
    whole = outcome("review", 0, 6, outputs=3, unscored=Counter(unparseable=2), failed=1)
    assert whole.adds_up and bench.documented_exit(whole)
    lost = outcome("review", 0, 6, outputs=3, unscored=Counter(unparseable=2))
    assert not lost.adds_up
    assert bench.finish(lost, Path(__file__)).error  # the log's tail says what happened


def test_only_the_documented_exits_pass() -> None:
    dropped = outcome("build --builder llm", 2, 2, drops=Counter({"rubric: few": 2}))
    assert bench.documented_exit(dropped)  # no instance could be built: documented
    assert not bench.documented_exit(outcome("review", 2, 2, outputs=2))  # bad input, not ours
    assert not bench.documented_exit(outcome("build --builder llm", 2, 2, outputs=1, failed=1))
    assert not bench.documented_exit(outcome("eval (LLM judge)", 1, 2, outputs=2))  # 1: failures
    assert bench.documented_exit(outcome("eval (LLM judge)", 1, 2, outputs=1, failed=1))
    assert not bench.documented_exit(outcome("score (LLM judge)", 120, 1, outputs=1))


def test_reasons_are_counted_by_kind_and_error_class() -> None:
    long = (
        "specific pass unscored: no verdict for criteria a, b (judge failed: LLMOutputError: "
        "judge: no valid RubricJudgement after 2 attempt(s): ...)"
    )
    assert bench.short_reason(long) == "specific pass unscored (LLMOutputError)"
    assert bench.short_reason("unsuitable: delta sparse") == "unsuitable"
