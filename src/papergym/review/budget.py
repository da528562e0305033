"""A token or dollar budget for ``papergym review``: papers in flight are bounded by what is left.

The LLM layer stops before a call once the budget is spent, but it cannot see the calls already
under way: with eight papers of four reviews in flight, a budget of 150,000 tokens was overshot
threefold, and every paper then stopped short of its meta-review, so none was saved. So a paper
starts only when its generous estimate (:meth:`~papergym.review.reviewer.LLMReviewer.
estimated_usage`) fits in the budget less what is spent and what the papers in flight may still
spend; it otherwise waits for them, and when none is left in flight it is left for the next run
(:class:`~papergym.llm.types.BudgetExceededError`). A paper that starts finishes, and is saved.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from papergym.llm.types import BudgetExceededError, Usage
from papergym.llm.usage import UsageTracker, call_cost


def tokens_of(usage: Usage) -> int:
    return usage.prompt_tokens + usage.completion_tokens


@dataclass
class BudgetGate:
    """Admits papers while their estimates fit in the budget of ``tracker`` (see the module)."""

    tracker: UsageTracker
    model: str
    """The reviewer's model: its price turns an estimate into dollars."""
    reserved: Usage = field(default_factory=Usage)
    """The estimates of the papers in flight."""
    in_flight: int = 0
    _changed: asyncio.Condition | None = field(default=None, repr=False)

    @property
    def limited(self) -> bool:
        return self.tracker.budget_tokens is not None or self.tracker.budget_usd is not None

    @contextlib.asynccontextmanager
    async def paper(self, estimate: Usage) -> AsyncIterator[None]:
        """Hold a paper's estimate while it is reviewed; wait for room first, or raise
        :class:`BudgetExceededError` when there is none and no paper in flight to make any."""
        if not self.limited:
            yield
            return
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            while (short := self.shortfall(estimate)) is not None:
                if self.in_flight == 0:
                    raise BudgetExceededError(short)
                await self._changed.wait()
            self.reserved, self.in_flight = self.reserved + estimate, self.in_flight + 1
        try:
            yield
        finally:
            async with self._changed:
                self.reserved = Usage(
                    prompt_tokens=self.reserved.prompt_tokens - estimate.prompt_tokens,
                    completion_tokens=self.reserved.completion_tokens - estimate.completion_tokens,
                )
                self.in_flight -= 1
                self._changed.notify_all()

    def shortfall(self, estimate: Usage) -> str | None:
        """Why a paper of ``estimate`` does not fit now, or None when it does."""
        budget = self.tracker.budget_tokens
        if budget is not None:
            left = budget - self.tracker.total_tokens - tokens_of(self.reserved)
            if tokens_of(estimate) > left:
                return (
                    f"token budget: the paper may need {tokens_of(estimate):,} tokens, "
                    f"{max(left, 0):,} of {budget:,} are left"
                )
        dollars = self.tracker.budget_usd
        price = self.tracker.prices.get(self.model)
        cost, held = call_cost(price, estimate), call_cost(price, self.reserved)
        if dollars is not None and cost is not None and held is not None:
            left_usd = dollars - (self.tracker.total_cost or 0.0) - held
            if cost > left_usd:
                return (
                    f"budget: the paper may cost ${cost:.4f}, ${max(left_usd, 0.0):.4f} of "
                    f"${dollars:.2f} is left"
                )
        return None
