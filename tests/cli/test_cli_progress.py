"""The command line's progress displays (papergym.cli.progress): drawn on a terminal from the
first report on, stopped when the run ends, nothing at all on a pipe or a log."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from papergym.cli import progress
from papergym.cli.progress import ProgressBar, StepBars


def _stderr(monkeypatch: pytest.MonkeyPatch, terminal: bool) -> io.StringIO:
    written = io.StringIO()
    console = Console(file=written, force_terminal=terminal, width=100)
    monkeypatch.setattr(progress, "stderr", console)
    return written


def test_step_bars_draw_each_step_and_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    written = _stderr(monkeypatch, terminal=True)
    with StepBars() as bars:
        bars.hook("papers", 2, "")
        bars.hook("papers", None, "paper-a")
        bars.hook("papers", None, "paper-b")
        bars.hook("leakage", None, "")
        assert bars.drawn
    assert not bars.progress.live.is_started
    shown = written.getvalue()
    assert "papers" in shown and "2/2" in shown and "leakage" in shown


def test_a_bar_is_drawn_from_its_start_only(monkeypatch: pytest.MonkeyPatch) -> None:
    written = _stderr(monkeypatch, terminal=True)
    with ProgressBar("judge") as bar:
        assert not bar.drawn  # nothing before start: a warning may still be printed
        bar.start(3, done=1)
        bar.advance("q1")
        assert bar.drawn
    assert not bar.progress.live.is_started
    assert "judge" in written.getvalue()


def test_nothing_is_drawn_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    written = _stderr(monkeypatch, terminal=False)
    with StepBars() as bars, ProgressBar("judge") as bar:
        bars.hook("papers", 1, "")
        bars.hook("papers", None, "paper-a")
        bar.advance("q1")
    assert written.getvalue() == ""


def test_a_bar_started_before_its_count_takes_the_total_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written = _stderr(monkeypatch, terminal=True)
    with ProgressBar("ingest") as bar:
        bar.start(None)  # drawn while the items are still being found
        bar.set_total(2)
        bar.advance("paper-a")
        bar.advance("paper-b")
        assert bar.task is not None
        assert bar.progress.tasks[0].total == 2
    assert not bar.progress.live.is_started
    assert "2/2" in written.getvalue()
