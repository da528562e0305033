"""The arguments and options the ``papergym train`` commands share, and reading the config
path from them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from papergym.errors import BadInputError
from papergym.settings.load import is_override
from papergym.train.progress import DEFAULT_LINES

ConfigArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="CONFIG",
        help="Training config (YAML), e.g. configs/qwen3-8b.yaml or configs/tiny-cpu.yaml; or "
        "give it with -c, as every command takes its config.",
        show_default=False,
    ),
]
ConfigFileOption = Annotated[
    Path | None,
    typer.Option(
        "-c",
        "--config",
        help="The training config, as the CONFIG argument (every command reads -c); then every "
        "positional argument is a key=value override.",
        show_default=False,
    ),
]
OverridesArgument = Annotated[
    list[str] | None,
    typer.Argument(
        help="Config overrides as key=value, dotted for nested keys, values read as YAML: "
        "opsd.steps=400 lora.r=16 stages='[grpo, opsd]' model.name_or_path=Qwen/Qwen3-1.7B.",
        show_default=False,
    ),
]
DataOption = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Folder written by `papergym build` (or its instances.jsonl), or a rubric dataset "
        "file eval and audit read (generic {question, criteria}, ResearchQA, RubricHub, "
        "ResearchPlanGen; .jsonl, .json or .parquet; no reference answers, so no sft stage); "
        "sets data.build_dir.",
        show_default=False,
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Run folder (sets output_dir). Running again resumes from the last checkpoint.",
        show_default=False,
    ),
]
LogEveryOption = Annotated[
    int | None,
    typer.Option(
        "--log-every",
        min=1,
        help="Off a terminal (a log file, --json): print a progress line every N steps "
        f"(default: about {DEFAULT_LINES} lines per stage). On a terminal a live bar shows "
        "every step.",
        show_default=False,
    ),
]
"""The ``--log-every`` option of every ``papergym train`` command."""


def config_path(
    positional: str | None, option: Path | None, overrides: list[str] | None
) -> tuple[Path, list[str]]:
    """The config file, given as the first argument or with ``-c`` (exactly one of them), and
    the overrides: with ``-c``, a first argument that is ``key=value`` is an override."""
    extra = list(overrides or [])
    if positional is not None and is_override(positional):
        extra.insert(0, positional)
        positional = None
    if positional is not None and option is not None:
        raise BadInputError(
            None, f"two configs: {positional} and -c {option}; give the config once"
        )
    path = option if option is not None else Path(positional) if positional else None
    if path is None:
        raise BadInputError(None, "no training config: give CONFIG or -c CONFIG")
    return path, extra
