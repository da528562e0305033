"""Usage and cost accounting per stage, role and model: our users' bill.

An unpriced model's cost is ``None`` (shown as "unpriced"), never $0, even when every answer
came from the cache; a priced model's cache hits cost nothing. A budget, in tokens or
dollars, stops the run cleanly with :class:`BudgetExceededError` before the next call.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from papergym.llm.config import Price
from papergym.llm.types import BudgetExceededError, PromptCut, Usage


def call_cost(price: Price | None, usage: Usage) -> float | None:
    """Dollars for one call's usage, or ``None`` when the model has no price."""
    if price is None:
        return None
    cached = usage.cached_tokens
    cached_rate = price.cached_input if price.cached_input is not None else price.input
    fresh = max(usage.prompt_tokens - cached, 0)
    return (
        fresh * price.input + cached * cached_rate + usage.completion_tokens * price.output
    ) / 1e6


def _count(row: dict[str, object], key: str) -> int:
    value = row.get(key, 0)  # files of older versions lack the later counters
    return int(value) if isinstance(value, int | float | str) else 0


@dataclass
class UsageRow:
    """Totals for one (stage, role, model)."""

    calls: int = 0
    cache_hits: int = 0
    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0  # None once any call of this row was unpriced
    prompts_cut: int = 0  # answers whose prompt was cut to fit the model's context
    tokens_cut: int = 0
    # answers asked for in a schema that ended (parsed, or still invalid after the repairs)
    structured: int = 0
    repaired: int = 0  # of those, the ones whose first answer failed validation


@dataclass
class UsageTracker:
    """Accumulates usage; checks the budget before each call."""

    prices: dict[str, Price] = field(default_factory=dict)
    budget_usd: float | None = None
    budget_tokens: int | None = None
    rows: dict[tuple[str, str, str], UsageRow] = field(
        default_factory=lambda: defaultdict(UsageRow)
    )

    def record(
        self,
        *,
        stage: str,
        role: str,
        model: str,
        usage: Usage,
        cached: bool,
        cut: PromptCut | None = None,
    ) -> None:
        row = self.rows[(stage, role, model)]
        if cut is not None:  # counted for cached answers too: the answer read a cut prompt
            row.prompts_cut += 1
            row.tokens_cut += cut.tokens_removed
        price = self.prices.get(model)
        if price is None:
            # unpriced whether its answers came from the server or the cache: a fully cached
            # run of an unpriced model must not read "$0.0000" where a live one read "unpriced"
            row.cost = None
        if cached:
            row.cache_hits += 1
            return
        row.calls += 1
        row.usage = row.usage + usage
        cost = call_cost(price, usage)
        row.cost = None if cost is None or row.cost is None else row.cost + cost

    def record_structured(self, *, stage: str, role: str, model: str, repaired: bool) -> None:
        """One structured answer from the endpoint ended; ``repaired``: it needed a repair
        (the share of such answers is how often the model missed the schema)."""
        row = self.rows[(stage, role, model)]
        row.structured += 1
        row.repaired += int(repaired)

    @property
    def total_tokens(self) -> int:
        return sum(r.usage.prompt_tokens + r.usage.completion_tokens for r in self.rows.values())

    @property
    def total_cost(self) -> float | None:
        """Dollars spent on priced models (unpriced ones are reported separately)."""
        costs = [r.cost for r in self.rows.values() if r.cost is not None]
        return sum(costs) if costs else (None if self.rows else 0.0)

    @property
    def unpriced_models(self) -> list[str]:
        return sorted({model for (_, _, model), r in self.rows.items() if r.cost is None})

    @property
    def prompts_cut(self) -> int:
        """Answers whose prompt was cut to fit the model's context."""
        return sum(r.prompts_cut for r in self.rows.values())

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.rows.values())

    @classmethod
    def merged(cls, *trackers: UsageTracker) -> UsageTracker:
        """One table's worth of several trackers' rows (each keeps its own budget): a command
        whose parts account apart, such as eval's systems and its judge, shows them together."""
        merged = cls(prices={k: v for t in trackers for k, v in t.prices.items()})
        for tracker in trackers:
            for key, row in tracker.rows.items():
                into = merged.rows[key]
                into.calls += row.calls
                into.cache_hits += row.cache_hits
                into.usage = into.usage + row.usage
                into.prompts_cut += row.prompts_cut
                into.tokens_cut += row.tokens_cut
                into.structured += row.structured
                into.repaired += row.repaired
                into.cost = None if into.cost is None or row.cost is None else into.cost + row.cost
        return merged

    @classmethod
    def from_rows(
        cls, rows: list[dict[str, object]], prices: dict[str, Price] | None = None
    ) -> UsageTracker:
        """A tracker holding the rows :meth:`as_dict` wrote (a task's saved usage), every
        field kept, so that trackers saved apart merge into what one process would count."""
        tracker = cls(prices=dict(prices or {}))
        for row in rows:
            usage = Usage.model_validate({k: row[k] for k in Usage.model_fields if k in row})
            cost = row.get("cost_usd")
            tracker.rows[(str(row["stage"]), str(row["role"]), str(row["model"]))] = UsageRow(
                calls=_count(row, "calls"),
                cache_hits=_count(row, "cache_hits"),
                usage=usage,
                cost=float(cost) if isinstance(cost, int | float) else None,
                prompts_cut=_count(row, "prompts_cut"),
                tokens_cut=_count(row, "tokens_cut"),
                structured=_count(row, "structured"),
                repaired=_count(row, "repaired"),
            )
        return tracker

    def check_budget(self) -> None:
        """Raise before a call when the budget is already spent."""
        if self.budget_tokens is not None and self.total_tokens >= self.budget_tokens:
            raise BudgetExceededError(
                f"token budget spent: {self.total_tokens:,} of {self.budget_tokens:,} tokens"
            )
        cost = self.total_cost or 0.0
        if self.budget_usd is not None and cost >= self.budget_usd:
            raise BudgetExceededError(f"budget spent: ${cost:.4f} of ${self.budget_usd:.2f}")

    def as_dict(self) -> list[dict[str, object]]:
        return [
            {
                "stage": stage,
                "role": role,
                "model": model,
                "calls": r.calls,
                "cache_hits": r.cache_hits,
                **r.usage.model_dump(),
                "cost_usd": r.cost,
                "prompts_cut": r.prompts_cut,
                "tokens_cut": r.tokens_cut,
                "structured": r.structured,
                "repaired": r.repaired,
            }
            for (stage, role, model), r in sorted(self.rows.items())
        ]
