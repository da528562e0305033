"""``--help`` is readable at any terminal width: nothing cut with "…" or "...", no line past
the terminal (or past 100 columns on a wide one), every option named whole, no markup escapes."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from papergym.cli import app


# click's classes, which typer may vendor: groups are told apart by their `commands`; the root
# lists its verbs and imports each only when asked (list_commands/get_command)
def _subcommand(group: Any, name: str) -> Any:
    return group.get_command(None, name)


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = [prefix]
    for name in group.list_commands(None):
        command = _subcommand(group, name)
        if hasattr(command, "commands"):
            found += _commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


ROOT = typer.main.get_command(app)
COMMANDS = _commands(ROOT)


def _options(path: tuple[str, ...]) -> list[str]:
    command: Any = ROOT
    for name in path:
        command = _subcommand(command, name)
    return [
        opt
        for param in command.params
        if param.param_type_name == "option"
        for opt in (*param.opts, *param.secondary_opts)
    ]


def _verbatim_lines(path: tuple[str, ...]) -> set[str]:
    """The lines of the help and epilog paragraphs that click prints unwrapped (``\b`` first)."""
    command: Any = ROOT
    for name in path:
        command = _subcommand(command, name)
    text = f"{command.help or ''}\n\n{command.epilog or ''}"
    return {
        line.strip()
        for paragraph in text.split("\n\n")
        if paragraph.startswith("\b")
        for line in paragraph.splitlines()[1:]
    }


def _help(path: tuple[str, ...], columns: int, capsys: pytest.CaptureFixture[str]) -> str:
    """``papergym PATH --help`` as a terminal of ``columns`` shows it. Not CliRunner: it fixes
    click's width at 80 columns whatever $COLUMNS says."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(columns))
        capsys.readouterr()
        code = ROOT.main([*path, "--help"], prog_name="papergym", standalone_mode=False)
    assert code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "papergym")
@pytest.mark.parametrize("columns", [60, 80, 200])
def test_help_fits_the_terminal_and_cuts_nothing(
    path: tuple[str, ...], columns: int, capsys: pytest.CaptureFixture[str]
) -> None:
    output = _help(path, columns, capsys)
    # wrapped to the terminal, up to 100 columns; click cannot wrap an option's signature
    # (--format <auto|...>) nor, by design, a paragraph marked verbatim with "\b"
    verbatim = _verbatim_lines(path)
    too_wide = [
        line
        for line in output.splitlines()
        if len(line) > min(columns, 100)
        and not line.strip().startswith("-")
        and line.strip() not in verbatim
    ]
    assert too_wide == [], output
    assert "…" not in output
    if "Commands:" in output:  # click cut each command's summary with "..." to fit a line
        listed = output.split("Commands:", 1)[1].splitlines()
        assert not [line for line in listed if line.endswith("...")], output
    assert "\\[" not in output  # help is plain text: no rich-markup escapes shown
    words = output.split()
    for option in _options(path):  # each option's name whole, e.g. --no-leakage-judge
        assert option in words or f"{option}," in words, option
