"""What every command shares to read the configuration: ``-c/--config``, ``key=value``
arguments, flags that stand for keys, and ``papergym config show|reference``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from papergym.cliutil import HELP_SETTINGS, DebugOption, HelpGroup, reports_errors, stdout
from papergym.errors import BadInputError
from papergym.settings.load import Override, config_yaml, flag, load_config, split_arguments
from papergym.settings.models import PaperGymConfig

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "-c",
        "--config",
        help="PaperGym config file (YAML; see docs/config.md or `papergym config reference`). "
        "Flags and key=value arguments override it; it overrides $PAPERGYM_* variables.",
        show_default=False,
    ),
]
OVERRIDES_HELP = (
    "key=value arguments set config keys (dotted, values read as YAML: reward.alpha=0.5 "
    "reward.criteria_per_call=1); an argument is one when it looks like name.sub=value and no "
    "file of that name exists."
)
OverridesArgument = Annotated[
    list[str] | None,
    typer.Argument(help="Config overrides: " + OVERRIDES_HELP, show_default=False),
]


def flags(**given: tuple[str, str, Any]) -> list[Override]:
    """The overrides of the flags the user gave: ``name=(key, "--flag", value)``; a value of None
    (the flag's default) sets nothing, so the file and the defaults decide."""
    return [flag(key, value, label) for key, label, value in given.values() if value is not None]


def llm_flags(
    llm_config: Path | None = None,
    base_url: str | None = None,
    model: str | None = None,
    api_key_env: str | None = None,
    no_cache: bool = False,
    cache_dir: Path | None = None,
) -> list[Override]:
    """The overrides of the shared LLM flags: ``--llm-config`` is ``llm`` (the file's content),
    then ``--base-url``/``--model``/``--api-key-env`` are ``llm.default.*`` (so they refine the
    file, as before), ``--no-cache`` is ``llm.cache=false``, ``--cache-dir`` ``llm.cache_dir``."""
    return flags(
        file=("llm", "--llm-config", llm_config),
        base_url=("llm.default.base_url", "--base-url", base_url),
        model=("llm.default.model", "--model", model),
        api_key_env=("llm.default.api_key_env", "--api-key-env", api_key_env),
        cache=("llm.cache", "--no-cache", False if no_cache else None),
        cache_dir=("llm.cache_dir", "--cache-dir", cache_dir),
    )


def resolve(
    config_file: Path | None,
    overrides: Sequence[str] | None = None,
    given: Sequence[Override] = (),
) -> PaperGymConfig:
    """A command's configuration: its file, then its flags, then its ``key=value`` arguments."""
    return load_config(config_file, [*given, *(overrides or [])])


def paths_and_overrides(arguments: Sequence[str], what: str) -> tuple[list[Path], list[str]]:
    """A variadic positional argument split into paths and ``key=value`` overrides; refused
    (naming ``what`` the paths are) when every argument was an override."""
    paths, overrides = split_arguments(arguments)
    if not paths:
        raise BadInputError(None, f"no {what} given (every argument was a key=value)")
    return [Path(p) for p in paths], overrides


config_app = typer.Typer(
    name="config",
    help="Show the resolved configuration, or the reference of every key.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=HELP_SETTINGS,
    cls=HelpGroup,
)


@config_app.command("show")
@reports_errors
def show(
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> None:
    """Print the resolved configuration (YAML, secrets masked): file, overrides and $PAPERGYM_* variables applied."""
    print(config_yaml(resolve(config, overrides)), end="")


@config_app.command("reference")
@reports_errors
def reference(debug: DebugOption = False) -> None:
    """Print the table of every key (type, default, description) as Markdown: docs/config.md."""
    from papergym.settings.reference import reference_markdown

    stdout.print(reference_markdown(), end="", soft_wrap=True)
