"""Training progress on the console: plain lines every N steps off a terminal, a live bar on
one, the ETA, and the warning when GRPO's groups tie (zero variance, zero advantage)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from papergym.train import progress
from papergym.train.grpo_signal import TIED_KEY
from papergym.train.progress import ProgressReport, status_line


def console(*, terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=200), out


def run_phase(report: ProgressReport, total: int, **values: float) -> None:
    with report:
        hook = report.phase("grpo", total)
        for step in range(1, total + 1):
            hook(step, values)


def test_off_a_terminal_a_phase_prints_its_first_every_nth_and_last_step() -> None:
    terminal, out = console(terminal=False)

    run_phase(ProgressReport(terminal, live=False, every=2), 5, loss=0.5, reward=0.25)

    lines = out.getvalue().splitlines()
    assert [line.split(" · ")[0] for line in lines] == [
        "grpo: step 1/5",
        "grpo: step 2/5",
        "grpo: step 4/5",
        "grpo: step 5/5",
    ]
    assert all("loss 0.5000 · reward 0.250 · " in line for line in lines)
    assert all("elapsed · ETA " in line for line in lines[:-1])
    assert "ETA" not in lines[-1]  # finished: nothing left to estimate


def test_without_log_every_a_long_phase_prints_about_twenty_lines() -> None:
    terminal, out = console(terminal=False)

    run_phase(ProgressReport(terminal, live=False), 200, loss=1.0)

    steps = [line.split(" · ")[0] for line in out.getvalue().splitlines()]
    assert steps == ["grpo: step 1/200", *(f"grpo: step {n}/200" for n in range(10, 201, 10))]


def test_the_eta_is_the_units_left_at_the_pace_of_one() -> None:
    line = status_line("opsd", 51, 100, "step", {"loss": 2.0}, elapsed=10.0, pace=10.0)
    assert line == "opsd: step 51/100 · loss 2.0000 · 0:00:10 elapsed · ETA 0:08:10"
    papers = status_line("round 1 writing", 3, 12, "papers", {}, elapsed=3600.0, pace=1200.0)
    assert papers == "round 1 writing: 3/12 papers · 1:00:00 elapsed · ETA 3:00:00"


def test_the_pace_leaves_out_the_start_up_and_the_steps_of_an_earlier_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter([0.0, 100.0, 110.0, 120.0])  # phase made; step 51 after loading; 52; 53
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    terminal, out = console(terminal=False)
    hook = ProgressReport(terminal, live=False, every=1).phase("grpo", 100)

    for step in (51, 52, 53):  # resumed from a checkpoint at step 50
        hook(step, {})

    etas = [line.rsplit("ETA ", 1)[1] for line in out.getvalue().splitlines()]
    # step 51 took 100 s with the loading; then 10 s a step, so 47 steps take 470 s
    assert etas == ["1:21:40", "0:08:00", "0:07:50"]


def test_groups_without_reward_spread_are_shown_and_warned_about_at_report_points() -> None:
    terminal, out = console(terminal=False)

    run_phase(ProgressReport(terminal, live=False, every=2), 4, reward=0.0, **{TIED_KEY: 1.0})

    lines = out.getvalue().splitlines()
    assert all("tied groups 100%" in line for line in lines if "warning" not in line)
    warnings = [line for line in lines if "warning" in line]
    assert [w.split(": ")[2] for w in warnings] == ["step 1", "step 2", "steps 3-4"]
    assert all("100% of the groups tied" in w for w in warnings)
    assert "advantages are 0" in warnings[0]


@pytest.mark.parametrize("share", [0.0, 0.25])
def test_a_few_tied_groups_are_shown_but_not_warned_about(share: float) -> None:
    terminal, out = console(terminal=False)

    run_phase(ProgressReport(terminal, live=False, every=1), 3, **{TIED_KEY: share})

    assert f"tied groups {share:.0%}" in out.getvalue()
    assert "warning" not in out.getvalue()


def test_on_a_terminal_a_live_bar_shows_step_values_and_eta_and_prints_no_lines() -> None:
    terminal, out = console(terminal=True)
    report = ProgressReport(terminal, live=True, every=1)

    with report:
        hook = report.phase("opsd", 4)
        hook(1, {"loss": 0.75})
        shown = out.getvalue()
        hook(2, {"loss": 0.5})

    assert "opsd" in shown and "1/4" in shown and "loss 0.7500" in shown and "ETA" in shown
    assert "loss 0.5000" in out.getvalue()
    assert "opsd: step" not in out.getvalue()  # the bar, not the plain lines


def test_a_line_said_during_a_live_bar_is_printed() -> None:
    terminal, out = console(terminal=True)

    with ProgressReport(terminal, live=True) as report:
        report.phase("grpo", 2)(1, {})
        report.say("grpo: starting")

    assert "grpo: starting" in out.getvalue()
