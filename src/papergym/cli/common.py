"""What every ``papergym`` command shares: consoles, option types, reading the configuration
(``-c/--config``, ``key=value`` arguments, flags that stand for keys), and error reporting.

Conventions: a readable summary by default and the same information as JSON with ``--json``;
exit code 0 on success, 2 on bad input or usage, 1 on an internal failure; a one-line error
message, with the traceback only under ``--debug``.
"""

from __future__ import annotations

import functools
import json
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from papergym.environment import terminal_columns_set
from papergym.errors import BadInputError
from papergym.llm.config import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOKENS_CEILING,
    DEFAULT_TIMEOUT_S,
)
from papergym.settings.load import Override, flag, load_config, split_arguments
from papergym.settings.models import PaperGymConfig

# Summaries piped to a file or a CI log get a roomier width than an 80-column default.
# markup off: titles, criteria and reasons are user text and may hold "[cite]"-like brackets
stdout = Console(markup=False, width=None if sys.stdout.isatty() or terminal_columns_set() else 120)
stderr = Console(stderr=True)

P = ParamSpec("P")
R = TypeVar("R")

DebugOption = Annotated[
    bool, typer.Option("--debug", help="Show the full traceback when something fails.")
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print the result as JSON on stdout instead of a table.")
]


LLMConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--llm-config",
        help="YAML file mapping roles (extractor, writer, rubric, judge, reviewer, policy) to "
        "backends, models, limits, prices and budget. Also $PAPERGYM_LLM_CONFIG. Defaults: a "
        f"request times out after {DEFAULT_TIMEOUT_S:g} s (timeout) and is retried "
        f"{DEFAULT_MAX_RETRIES} times (max_retries); one call gives up after "
        f"{DEFAULT_DEADLINE_S:g} s in all (deadline); an answer cut by max_tokens is asked once "
        f"more with twice the budget, up to {DEFAULT_MAX_TOKENS_CEILING} (max_tokens_ceiling).",
        show_default=False,
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible endpoint for every role, e.g. http://localhost:8000/v1 (vLLM, "
        "SGLang, Ollama, llama.cpp, hosted APIs). Also $PAPERGYM_BASE_URL. Credentials in it "
        "(http://user:pass@host/v1) are sent as HTTP Basic auth, in place of the API key, and "
        "are masked in every message and record.",
        show_default=False,
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model", help="Model name for every role. Also $PAPERGYM_MODEL.", show_default=False
    ),
]
ApiKeyEnvOption = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Name of the environment variable that holds the API key (the key itself is never "
        "printed, logged or cached). Also $PAPERGYM_API_KEY_ENV.",
        show_default=False,
    ),
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the LLM response cache.")
]
CacheDirOption = Annotated[
    Path | None,
    typer.Option(
        "--cache-dir",
        help="Folder of the LLM response cache (default $PAPERGYM_CACHE_DIR or ~/.cache/papergym).",
        show_default=False,
    ),
]


def reports_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn errors into one-line messages and exit codes (2 bad input, 1 internal failure)."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        debug = bool(kwargs.get("debug"))
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except BadInputError as error:
            if debug:
                traceback.print_exc()
            stderr.print(f"[red]error:[/red] {escape(str(error))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            stderr.print("interrupted; completed work is kept.")
            raise typer.Exit(130) from None
        except Exception as error:
            if debug:
                traceback.print_exc()
            stderr.print(
                f"[red]internal error:[/red] {type(error).__name__}: {escape(str(error))} "
                "(rerun with --debug for the traceback)",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(1) from None

    return wrapper


def exit_unfinished(failures: Sequence[str], kept: str) -> NoReturn:
    """The first few failures, one line each, then their count and what is kept; exit 1 (the
    same command resumes). ``kept`` follows the count: "answer(s) could not be generated; ..."."""
    for line in failures[:5]:
        stderr.print(f"error: {line}", markup=False, soft_wrap=True)
    stderr.print(f"{len(failures)} {kept}", markup=False)
    raise typer.Exit(1)


def print_summary(title: str, summary: Mapping[str, object], json_output: bool) -> None:
    """A command's summary: JSON with ``--json``, else a two-column table (floats to 4 places)."""
    if json_output:
        print(json.dumps(summary, indent=2))
        return
    table = Table(title=title, title_justify="left", show_header=False)
    for key, value in summary.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    stdout.print(table)


def numbers_table(title: str, columns: Sequence[str]) -> Table:
    """A table whose first column (what a row is) is left-aligned and the others (its numbers)
    right-aligned."""
    table = Table(title=title, title_justify="left")
    for index, column in enumerate(columns):
        table.add_column(column, justify="right" if index else "left")
    return table


# --- the configuration ---------------------------------------------------------------------------

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
