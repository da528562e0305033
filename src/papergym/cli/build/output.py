"""What the two builds' summaries share: the tables of drops by step and reason, and the lines
they end with when the build is not complete."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from papergym.cli.common import stderr
from papergym.recipes.endpoint import EndpointDown


def _error(message: str) -> None:
    stderr.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)


@contextmanager
def endpoint_down() -> Iterator[None]:
    """An endpoint that did not answer before the build began: its one line, exit 1."""
    try:
        yield
    except EndpointDown as error:
        _error(escape(str(error)))
        raise typer.Exit(1) from None


def reasons_table(
    title: str, counts: Counter[tuple[str, str]], shown: Callable[[int], str] = str
) -> Table:
    """Step, reason and count, most frequent first."""
    table = Table(title=title, title_justify="left")
    for column in ("step", "reason", "count"):
        table.add_column(column, overflow="fold")
    for (step, reason), count in counts.most_common():
        table.add_row(step, reason, shown(count))
    return table


def exit_endpoint_failed(
    count: int, items: str, failed: Path, kinds: str = "", truncated: int = 0
) -> None:
    """``count`` ``items`` the endpoint failed on (listed in ``failed``): exit 1, run again.

    ``truncated`` of them were cut by the token budget: run again unchanged, they are cut again
    (from the cache, at no cost), so the line says to raise the budget first."""
    cut = (
        f"; {truncated} were cut by the token budget: raise max_tokens (and max_tokens_ceiling) "
        "first, or they are cut again"
        if truncated
        else ""
    )
    _error(
        f"{count} {items} not finished because the LLM endpoint failed ({kinds}see "
        f"{escape(str(failed))}); they are not dropped: run the same command again to retry "
        f"them{cut}"
    )
    raise typer.Exit(1)


def exit_nothing_built(read: str, dropped: int, drops: Path) -> None:
    """No instance built from ``read`` (``"3 paper(s)"``): exit 2."""
    _error(f"no instance built: {read}, {dropped} dropped (see {escape(str(drops))})")
    raise typer.Exit(2)
