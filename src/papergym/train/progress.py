"""Training progress on the console: a live bar on a terminal, a log line every N steps elsewhere.

Every long phase of ``papergym train`` (an OPSD, GRPO or SFT stage; a cycle round's writing,
reviewing and training) reports through a :class:`ProgressReport`. The phase gets a hook
(:meth:`ProgressReport.phase`) that it calls after each unit of work with the count done so far
and, for training steps, the step's logged values. On a terminal the hook moves a rich progress
bar (step, loss, reward, elapsed time, ETA); elsewhere (a log file, a CI job, ``--json``) it
prints one plain line every ``every`` units, plus the first and the last, so a long run is never
silent for more than N units.

The TRL trainers' own progress displays (transformers' tqdm ``ProgressCallback``, TRL's
``RichProgressCallback``) cannot serve here: OPSD and the cycle's writing and reviewing are not
``Trainer`` loops, and neither display has a plain-line mode for a non-terminal. So one small
reporter, fed by the per-step hook every stage already calls, shows all of them alike.

GRPO learns only from groups whose answers scored differently (:mod:`papergym.train.grpo_signal`).
The reporter shows each step's share of tied groups, and warns at each report point where half
or more of the groups since the previous one tied (:data:`~papergym.train.grpo_signal.TIED_WARNING`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from papergym.train.grpo_signal import TIED_KEY, TIED_WARNING

DEFAULT_LINES = 20
"""Without ``--log-every``, a phase prints about this many lines (every ``total // 20`` units)."""

PhaseHook = Callable[[int, Mapping[str, Any]], None]
"""Told ``(units done, values)`` after each unit: a step and its logged values, or a paper."""
PhaseFactory = Callable[[str, int, str], PhaseHook]
"""``(name, total, unit)`` → the hook a phase of a round reports its progress to
(:meth:`ProgressReport.phase`)."""


class ProgressReport:
    """Reports phases of a run on ``console`` (stderr): live bars when ``live``, else lines.

    ``every`` is the units between two plain lines (None: about :data:`DEFAULT_LINES` lines per
    phase). Use it as a context manager: the live display starts and stops with it.
    """

    def __init__(self, console: Console, *, live: bool, every: int | None = None) -> None:
        self.console = console
        self.every = every
        self._progress = (
            Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[values]}"),
                console=console,
                transient=True,
            )
            if live
            else None
        )

    def __enter__(self) -> ProgressReport:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def say(self, text: str) -> None:
        """One line, above the live bars when there are any."""
        self.console.print(text, highlight=False, markup=False, soft_wrap=True)

    def phase(self, name: str, total: int, unit: str = "step") -> PhaseHook:
        """The hook of a phase of ``total`` units named ``name`` (``unit``: what a unit is)."""
        every = self.every or max(1, total // DEFAULT_LINES)
        task = None
        if self._progress is not None:
            task = self._progress.add_task(name, total=total, values="")
        return _Phase(self, name, total, unit, every, task)

    def _update(self, task: TaskID, done: int, shown: str) -> None:
        assert self._progress is not None
        # refresh now: a step can take minutes, longer than the bar should lag behind it
        self._progress.update(task, completed=done, values=shown, refresh=True)


class _Phase:
    """One phase's state: its clock, the last unit reported, the values since then."""

    def __init__(
        self,
        report: ProgressReport,
        name: str,
        total: int,
        unit: str,
        every: int,
        task: TaskID | None,
    ) -> None:
        self.report = report
        self.name = name
        self.total = total
        self.unit = unit
        self.every = every
        self.task = task
        self.started = time.perf_counter()
        self.first: int | None = None  # the count before this session's first unit
        self.first_done: tuple[int, float] | None = None  # (count, clock) after that unit
        self.reported: int | None = None
        self.tied: list[float] = []

    def __call__(self, done: int, values: Mapping[str, Any]) -> None:
        now = time.perf_counter()
        if self.first is None:
            self.first = done - 1  # a resumed stage starts past 0
        share = values.get(TIED_KEY)
        if isinstance(share, int | float) and math.isfinite(share):
            self.tied.append(float(share))
        pace = self._pace(done, now)
        line = status_line(self.name, done, self.total, self.unit, values, now - self.started, pace)
        if self.task is not None:
            self.report._update(self.task, done, line.split(" · ", 1)[1] if " · " in line else "")
        if not self._report_point(done):
            return
        if self.task is None:
            self.report.say(line)
        warning = self._tied_warning(done)
        if warning:
            self.report.say(warning)
        self.reported = done

    def _pace(self, done: int, now: float) -> float | None:
        """Seconds per unit: after the first unit of the session, from the units since it (the
        first one also paid for loading the model and the judge); at it, its own time."""
        if self.first_done is None:
            self.first_done = (done, now)
            units = done - (self.first or 0)
            return (now - self.started) / units if units > 0 else None
        count, clock = self.first_done
        return (now - clock) / (done - count) if done > count else None

    def _report_point(self, done: int) -> bool:
        """The first unit of the session, every ``every`` units, and the last."""
        return self.reported is None or done % self.every == 0 or done >= self.total

    def _tied_warning(self, done: int) -> str | None:
        shares, self.tied = self.tied, []
        if not shares:
            return None
        share = sum(shares) / len(shares)
        if share < TIED_WARNING:
            return None
        start = (self.reported if self.reported is not None else (self.first or 0)) + 1
        steps = f"step {done}" if start >= done else f"steps {start}-{done}"
        return (
            f"{self.name}: warning: {steps}: {share:.0%} of the groups tied (every answer scored "
            "the same, or fewer than two were scored): their advantages are 0, so they teach "
            "nothing"
        )


def status_line(
    name: str,
    done: int,
    total: int,
    unit: str,
    values: Mapping[str, Any],
    elapsed: float,
    pace: float | None = None,
) -> str:
    """``grpo: step 2/4 · loss 0.0123 · reward 0.250 · tied groups 50% · 0:00:09
    elapsed · ETA 0:00:09``; units other than steps read ``round 1 writing: 3/12 papers``.

    The ETA is the units left times ``pace``, the seconds a unit takes (None: no ETA).
    """
    count = f"{unit} {done}/{total}" if unit == "step" else f"{done}/{total} {unit}"
    parts = [f"{name}: {count}", *_shown_values(values), f"{_clock(elapsed)} elapsed"]
    if pace is not None and done < total:
        parts.append(f"ETA {_clock(pace * (total - done))}")
    return " · ".join(parts)


def _shown_values(values: Mapping[str, Any]) -> list[str]:
    shown = []
    for key, label, form in (
        ("loss", "loss", "{:.4f}"),
        ("reward", "reward", "{:.3f}"),
        (TIED_KEY, "tied groups", "{:.0%}"),
    ):
        value = values.get(key)
        if isinstance(value, int | float) and math.isfinite(value):
            shown.append(f"{label} {form.format(value)}")
    return shown


def _clock(seconds: float) -> str:
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
