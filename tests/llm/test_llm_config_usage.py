from __future__ import annotations

import asyncio
import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from papergym.errors import BadInputError
from papergym.llm.config import LLMConfig, Price, load_llm_config
from papergym.llm.limits import RateLimiter, backoff_delay
from papergym.llm.report import usage_table
from papergym.llm.types import BudgetExceededError, Usage
from papergym.llm.usage import UsageTracker, call_cost


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "llm.yaml"
    path.write_text(text)
    return path


def test_yaml_maps_roles_to_backends_with_a_default(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
default: {base_url: "http://a:8000/v1", model: big, max_concurrency: 128}
roles:
  judge: {base_url: ["http://j1/v1", "http://j2/v1"], model: small, api_key_env: JUDGE_KEY}
prices: {big: {input: 1.0, output: 2.0}}
budget_usd: 5
""",
    )
    config = load_llm_config(path, env={})
    assert config.for_role("writer").model == "big"
    assert config.for_role("writer").max_concurrency == 128
    judge = config.for_role("judge")
    assert judge.base_url == ("http://j1/v1", "http://j2/v1")
    assert judge.api_key_env == "JUDGE_KEY"
    assert config.prices["big"].output == 2.0


def test_flags_and_environment_fill_the_default() -> None:
    env = {"PAPERGYM_BASE_URL": "http://env/v1", "PAPERGYM_MODEL": "env-model"}
    assert load_llm_config(env=env).for_role("judge").base_url == ("http://env/v1",)
    flagged = load_llm_config(model="flag-model", env=env)
    assert flagged.for_role("judge").model == "flag-model"
    assert not load_llm_config(env={}).configured


def test_unconfigured_role_and_bad_files_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no LLM configured for role 'judge'"):
        LLMConfig().for_role("judge")
    with pytest.raises(BadInputError, match="unknown role"):
        load_llm_config(write(tmp_path, "roles: {grader: {model: x}}"), env={})
    with pytest.raises(BadInputError, match="not valid YAML"):
        load_llm_config(write(tmp_path, "default: [unclosed"), env={})
    with pytest.raises(BadInputError, match=r"default\.max_concurrency"):
        load_llm_config(write(tmp_path, "default: {model: m, max_concurrency: 0}"), env={})
    with pytest.raises(BadInputError, match="no such LLM config"):
        load_llm_config(tmp_path / "missing.yaml", env={})
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("default: {model: caf\xe9}\n".encode("latin-1"))
    with pytest.raises(BadInputError, match="not UTF-8 text"):  # one line, not a traceback
        load_llm_config(latin1, env={})


def test_cost_is_none_for_unpriced_models_not_zero() -> None:
    usage = Usage(prompt_tokens=1_000_000, completion_tokens=500_000, cached_tokens=200_000)
    assert call_cost(None, usage) is None
    price = Price(input=1.0, output=4.0, cached_input=0.5)
    assert call_cost(price, usage) == pytest.approx(0.8 + 0.1 + 2.0)
    tracker = UsageTracker(prices={"priced": price})
    tracker.record(stage="s", role="judge", model="priced", usage=usage, cached=False)
    tracker.record(stage="s", role="judge", model="free?", usage=usage, cached=False)
    tracker.record(stage="s", role="judge", model="priced", usage=usage, cached=True)
    assert tracker.unpriced_models == ["free?"]
    assert tracker.total_cost == pytest.approx(2.9)
    assert tracker.calls == 2
    rows = {r["model"]: r for r in tracker.as_dict()}
    assert rows["priced"]["cache_hits"] == 1 and rows["free?"]["cost_usd"] is None


def _cost_cells(tracker: UsageTracker) -> list[str]:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(usage_table(tracker))
    lines = [line for line in console.export_text().splitlines() if "│" in line]
    return [line.split("│")[-2].strip() for line in lines]  # each row, then the total


def test_a_fully_cached_run_shows_the_cost_a_live_run_shows() -> None:
    """Issue 20, item 28: "unpriced" on one run and "$0.0000" on the same run fully cached."""
    usage = Usage(prompt_tokens=100, completion_tokens=20)
    live, cached = UsageTracker(), UsageTracker()
    for tracker, hit in ((live, False), (cached, True)):
        tracker.record(stage="eval:a", role="policy", model="m", usage=usage, cached=hit)
    assert _cost_cells(live) == _cost_cells(cached) == ["unpriced", "unpriced"]
    assert cached.total_cost is None and cached.unpriced_models == ["m"]
    assert cached.as_dict()[0]["cost_usd"] is None
    # a priced model's cache hits cost nothing, and say so
    priced = UsageTracker(prices={"m": Price(input=1.0, output=1.0)})
    priced.record(stage="eval:a", role="policy", model="m", usage=usage, cached=True)
    assert _cost_cells(priced) == ["$0.0000", "$0.0000"]


def test_budget_stops_before_the_next_call() -> None:
    tracker = UsageTracker(budget_tokens=100)
    tracker.check_budget()
    tracker.record(
        stage="s",
        role="r",
        model="m",
        usage=Usage(prompt_tokens=90, completion_tokens=20),
        cached=False,
    )
    with pytest.raises(BudgetExceededError, match="110 of 100"):
        tracker.check_budget()


def test_backoff_is_bounded_jittered_and_honours_retry_after() -> None:
    delays = [backoff_delay(a, base=1, cap=8) for a in range(10)]
    assert all(0.5 <= d <= 12 for d in delays)
    assert backoff_delay(0, retry_after=3) == 3
    assert len({backoff_delay(2) for _ in range(20)}) > 1


def test_rate_limiter_spaces_requests() -> None:
    async def run() -> float:
        limiter = RateLimiter(per_minute=600)  # 10 per second, bursting to 600
        limiter.tokens = 0  # start empty to measure the refill rate
        start = time.monotonic()
        for _ in range(5):
            await limiter.acquire()
        return time.monotonic() - start

    elapsed = asyncio.run(run())
    assert 0.4 <= elapsed < 1.0


def test_saved_rows_merge_into_what_one_tracker_counts() -> None:
    """A distributed build saves each task's rows (``as_dict``); read back and merged they are
    the rows one process would have counted, every counter included (not calls and tokens only)."""
    prices = {"priced": Price(input=1.0, output=2.0)}
    one, first, second = (UsageTracker(prices=prices) for _ in range(3))
    calls = [
        ("extract", "builder", "priced", Usage(prompt_tokens=10, completion_tokens=5), False),
        ("extract", "builder", "priced", Usage(prompt_tokens=7, completion_tokens=1), True),
        ("rubric", "builder", "free", Usage(prompt_tokens=3, completion_tokens=2), False),
    ]
    for index, (stage, role, model, usage, cached) in enumerate(calls):
        for tracker in (one, first if index % 2 == 0 else second):
            tracker.record(stage=stage, role=role, model=model, usage=usage, cached=cached)
            tracker.record_structured(stage=stage, role=role, model=model, repaired=index == 2)
    saved = [UsageTracker.from_rows(t.as_dict(), prices) for t in (first, second)]
    merged = UsageTracker.merged(UsageTracker(prices=prices), *saved)
    assert merged.as_dict() == one.as_dict()
    assert {row["model"]: row["cost_usd"] for row in merged.as_dict()}["free"] is None
    assert sum(row["repaired"] for row in merged.as_dict()) == 1
    old = [
        {k: v for k, v in row.items() if k not in ("structured", "repaired")}
        for row in saved[0].as_dict()
    ]
    assert UsageTracker.from_rows(old).as_dict()[0]["structured"] == 0  # an older file's rows
