"""A command's progress on stderr: a package's run reports progress through callbacks
(``on_start``, ``on_paper``…, or a build's step hook) and the command line draws it here.

:class:`ProgressBar` is one transient bar (gone when the command prints its summary);
:class:`StepBars` one bar per step of a build, left on screen. Both are off when stderr is not a
terminal (a log or a pipe gets no bar characters).
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from papergym.cli.common import stderr


def _progress(first: TextColumn, *, transient: bool) -> Progress:
    """``first``, a bar, done/total, the time elapsed and the item last done."""
    return Progress(
        first,
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=stderr,
        transient=transient,
        disable=not stderr.is_terminal,
    )


class _Drawing:
    """What both displays share: entered around a run, stopped at its end when drawn."""

    progress: Progress

    @property
    def drawn(self) -> bool:
        """Whether anything was drawn (the display then stops when the run ends)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.drawn:
            self.progress.stop()


class ProgressBar(_Drawing):
    """``label``, a bar, done/total, the time elapsed and the item last done. Enter it around
    the run; the bar is drawn from :meth:`start` on (nothing before: the run may still print a
    warning or fail on bad input)."""

    def __init__(self, label: str) -> None:
        self.progress = _progress(TextColumn(label), transient=True)
        self.task: TaskID | None = None

    @property
    def drawn(self) -> bool:
        return self.task is not None

    def start(self, total: int | None, done: int = 0) -> None:
        """Show the bar: ``total`` items (None: not known yet), ``done`` of them already."""
        self.task = self.progress.add_task("", total=total, completed=done)
        self.progress.start()

    def set_total(self, total: int) -> None:
        """The number of items, once the run has counted them (a bar started with ``None``
        while the run was still finding its items, as ``ingest`` does)."""
        if self.task is None:
            self.start(total)
        else:
            self.progress.update(self.task, total=total)

    def advance(self, description: str) -> None:
        """One more item done; ``description`` names it."""
        if self.task is None:
            self.start(None)
        assert self.task is not None
        self.progress.update(self.task, advance=1, description=description)


class StepBars(_Drawing):
    """One bar per step of a build (papers, the leakage screen; an ARES build's documents), fed
    by the run's progress hook (:meth:`hook`: ``(step, total, item)``) and kept on screen when
    the build ends. Enter it around the run; nothing is drawn before the first step reports."""

    def __init__(self) -> None:
        self.progress = _progress(TextColumn("{task.fields[step]:<15}"), transient=False)
        self.tasks: dict[str, TaskID] = {}

    @property
    def drawn(self) -> bool:
        return bool(self.tasks)

    def hook(self, step: str, total: int | None, item: str) -> None:
        """A step's first report adds its bar (``total`` items, None: not known); each later
        one (``total`` None) advances it past ``item``."""
        if not self.tasks:
            self.progress.start()
        if step not in self.tasks:
            self.tasks[step] = self.progress.add_task(item, total=total, step=step)
        elif total is None:
            self.progress.update(self.tasks[step], advance=1, description=item)
