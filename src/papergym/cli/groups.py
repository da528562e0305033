"""Click groups of the ``papergym`` command line: plain help at any width, a default subcommand,
and subcommands imported only when they run.

Only typer and click are imported here: ``papergym --help`` lists the commands from a table of
names and one-line summaries, without importing a single command module.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperGroup

# --help is click's plain layout, wrapped at the terminal's width up to HELP_WIDTH columns: rich's
# panels squeeze every option into a narrow column at 80 columns and cut long words with "…".
# With no rich markup, help text is shown as written (no escaping of "[...]").
HELP_WIDTH = 100
HELP_SETTINGS: dict[str, Any] = {"max_content_width": HELP_WIDTH}


def sub_app(name: str, help: str, *, default_command: bool = False) -> typer.Typer:
    """A typer group of subcommands (``papergym train …``) with the house's help layout."""
    return typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        context_settings=HELP_SETTINGS,
        cls=DefaultCommandGroup if default_command else HelpGroup,
    )


def single_app() -> typer.Typer:
    """A typer app holding one command (the module of a verb such as ``build``)."""
    return typer.Typer(
        add_completion=False,
        rich_markup_mode=None,
        context_settings=HELP_SETTINGS,
        pretty_exceptions_enable=False,
    )


class HelpGroup(TyperGroup):
    """A command group whose list shows each command's first sentence whole (wrapped), where
    click cuts it with "..." to fit one line."""

    # Any: click's Context and HelpFormatter, which newer typer releases vendor as typer._click
    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [
            (name, command.get_short_help_str(limit=10_000))
            for name in self.list_commands(ctx)
            if (command := self.get_command(ctx, name)) is not None and not command.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class DefaultCommandGroup(HelpGroup):
    """A group that runs its ``run`` subcommand when the first argument names no subcommand, so
    ``papergym review PAPER...`` and ``papergym review eval ...`` both work. A file literally named
    like a subcommand is reached as ``papergym review run fit``."""

    default_command = "run"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        first = next((arg for arg in args if not arg.startswith("-")), None)
        asks_help = any(arg in ("--help", "-h") for arg in args)
        names_no_command = first is not None and first not in self.commands
        only_options = first is None and bool(args) and not asks_help
        if names_no_command or only_options:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@dataclass(frozen=True)
class Verb:
    """A top-level command: its name, the module under ``papergym.cli`` that defines it (an
    ``app`` holding one command, or a group), and its one-line summary for ``papergym --help``
    (a test checks it against the command's own help)."""

    name: str
    module: str
    summary: str


class LazyGroup(HelpGroup):
    """The root group: lists its verbs from a table and imports a verb's module only when that
    verb runs (or its own ``--help`` is asked for)."""

    verbs: Sequence[Verb] = ()

    def list_commands(self, ctx: Any) -> list[str]:
        return [verb.name for verb in self.verbs]

    def get_command(self, ctx: Any, name: str) -> Any:
        verb = next((v for v in self.verbs if v.name == name), None)
        if verb is None:
            return None
        module = importlib.import_module(f"papergym.cli.{verb.module}")
        command = typer.main.get_command(module.app)
        command.name = name
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(verb.name, verb.summary) for verb in self.verbs])
