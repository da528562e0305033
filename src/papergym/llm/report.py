"""The usage and cost summary every LLM-using command prints at the end."""

from __future__ import annotations

from rich.table import Table

from papergym.llm.types import Usage
from papergym.llm.usage import UsageTracker


def _cost(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:,.4f}"


def _reasoned(usage: Usage) -> bool:
    return bool(usage.reasoning_tokens or usage.reasoning_chars)


def _reasoning(usage: Usage) -> str:
    """Reasoning tokens where the server counted them (they are part of tokens out), and the
    characters of reasoning kept out of the answers."""
    parts = []
    if usage.reasoning_tokens:
        parts.append(f"{usage.reasoning_tokens:,} tok")
    if usage.reasoning_chars:
        parts.append(f"{usage.reasoning_chars:,} chars")
    return " / ".join(parts) or "0"


def usage_table(tracker: UsageTracker, *, per: tuple[str, int] | None = None) -> Table:
    """Calls, cache hits, tokens and cost per stage/role/model, with a total row.

    ``per=("instance", 120)`` adds the total divided by 120 as a "per instance" row: the
    number users budget with.
    """
    # Reasoning is shown only where a model reasoned, so other tables keep their columns.
    reasoned = any(_reasoned(row.usage) for row in tracker.rows.values())
    table = _usage_columns(reasoned)
    for (stage, role, model), row in sorted(tracker.rows.items()):
        cells = _cells(row.calls, row.cache_hits, row.usage, reasoned)
        table.add_row(stage, role, model, *cells, _cost(row.cost))
    rows = tracker.rows.values()
    calls = sum(r.calls for r in rows)
    hits = sum(r.cache_hits for r in rows)
    usage = sum((r.usage for r in rows), Usage())
    total_cost = tracker.total_cost
    unpriced = " + unpriced" if tracker.unpriced_models and total_cost is not None else ""
    table.add_section()
    table.add_row(
        "total", "", "", *_cells(calls, hits, usage, reasoned), _cost(total_cost) + unpriced
    )
    if tracker.prompts_cut:  # said only when it happened: reports must say what was cut
        cut_tokens = sum(r.tokens_cut for r in rows)
        table.caption = (
            f"{tracker.prompts_cut:,} prompt(s) cut to fit the model's context "
            f"({cut_tokens:,} tokens taken out)"
        )
    if per is not None and per[1] > 0:
        name, count = per
        cost_each = None if total_cost is None else total_cost / count
        table.add_row(
            f"per {name}",
            "",
            "",
            f"{calls / count:,.1f}",
            f"{hits / count:,.1f}",
            f"{usage.prompt_tokens / count:,.0f}",
            f"{usage.completion_tokens / count:,.0f}",
            *([""] if reasoned else []),
            _cost(cost_each) + unpriced,
        )
    return table


def _usage_columns(reasoned: bool) -> Table:
    table = Table(title="LLM usage", title_justify="left")
    for column in ("stage", "role", "model"):
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=28)
    columns = ("calls", "cache hits", "tokens in", "tokens out")
    for column in (*columns, "reasoning", "cost") if reasoned else (*columns, "cost"):
        table.add_column(column, justify="right", no_wrap=True)
    return table


def _cells(calls: int, hits: int, usage: Usage, reasoned: bool) -> list[str]:
    """A row's counts: calls, cache hits, tokens in and out (and reasoning where shown)."""
    counts = [f"{calls:,}", f"{hits:,}", f"{usage.prompt_tokens:,}", f"{usage.completion_tokens:,}"]
    return counts + ([_reasoning(usage)] if reasoned else [])
