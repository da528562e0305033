"""The review command's budget gate: papers start only while their estimates fit (item 11)."""

from __future__ import annotations

import asyncio

import pytest

from papergym.llm.config import Price
from papergym.llm.types import BudgetExceededError, Usage
from papergym.llm.usage import UsageTracker
from papergym.review.budget import BudgetGate

PAPER = Usage(prompt_tokens=600, completion_tokens=400)  # 1,000 tokens at most


def spend(tracker: UsageTracker, tokens: int) -> None:
    tracker.record(
        stage="review", role="reviewer", model="m", usage=Usage(prompt_tokens=tokens),
        cached=False,
    )  # fmt: skip


def test_papers_wait_for_room_and_the_last_one_that_cannot_fit_is_refused() -> None:
    tracker = UsageTracker(budget_tokens=2500)
    gate = BudgetGate(tracker, "m")
    order: list[str] = []

    async def paper(name: str, spends: int) -> None:
        try:
            async with gate.paper(PAPER):
                order.append(f"start {name}")
                await asyncio.sleep(0.01)
                spend(tracker, spends)
                order.append(f"end {name}")
        except BudgetExceededError as error:
            order.append(f"refused {name}: {error}")

    async def run() -> None:
        await asyncio.gather(*(paper(n, 700) for n in "abcd"))

    asyncio.run(run())
    # a and b fit together (2,000 of 2,500); c waits for them, then fits in the 1,100 left;
    # d finds 400 left and nothing in flight to free more
    assert order[:4] == ["start a", "start b", "end a", "end b"]
    assert order[4:6] == ["start c", "end c"]
    assert order[6].startswith("refused d: token budget: the paper may need 1,000 tokens, 400")
    assert tracker.total_tokens == 2100 <= 2500


def test_a_dollar_budget_is_bounded_the_same_way() -> None:
    tracker = UsageTracker(prices={"m": Price(input=1000, output=1000)}, budget_usd=1.5)
    gate = BudgetGate(tracker, "m")  # a paper may cost $1.00

    async def run() -> None:
        async with gate.paper(PAPER):
            spend(tracker, 600)  # $0.60
        with pytest.raises(BudgetExceededError, match=r"may cost \$1\.0000"):
            async with gate.paper(PAPER):
                pass

    asyncio.run(run())


def test_no_budget_admits_everything_at_once() -> None:
    gate = BudgetGate(UsageTracker(), "m")

    async def run() -> int:
        async with gate.paper(PAPER), gate.paper(PAPER):
            return gate.in_flight

    assert asyncio.run(run()) == 0  # nothing is even counted
