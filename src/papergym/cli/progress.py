"""A command's progress bar on stderr: a package's run reports progress through callbacks
(``on_start``, ``on_paper``…) and the command line draws it here.

The bar is transient (gone when the command prints its summary) and off when stderr is not a
terminal (a log or a pipe gets no bar characters).
"""

from __future__ import annotations

from types import TracebackType

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from papergym.cli.common import stderr


class ProgressBar:
    """``label``, a bar, done/total, the time elapsed and the item last done. Enter it around
    the run; the bar is drawn from :meth:`start` on (nothing before: the run may still print a
    warning or fail on bad input)."""

    def __init__(self, label: str) -> None:
        self.progress = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=stderr,
            transient=True,
            disable=not stderr.is_terminal,
        )
        self.task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.task is not None:
            self.progress.stop()

    def start(self, total: int | None, done: int = 0) -> None:
        """Show the bar: ``total`` items (None: not known yet), ``done`` of them already."""
        self.task = self.progress.add_task("", total=total, completed=done)
        self.progress.start()

    def advance(self, description: str) -> None:
        """One more item done; ``description`` names it."""
        if self.task is None:
            self.start(None)
        assert self.task is not None
        self.progress.update(self.task, advance=1, description=description)
