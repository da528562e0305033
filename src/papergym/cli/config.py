"""``papergym config show|reference``: the resolved configuration, or the reference of every key."""

from __future__ import annotations

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    OverridesArgument,
    reports_errors,
    resolve,
    stdout,
)
from papergym.cli.groups import sub_app
from papergym.settings.load import config_yaml

app = sub_app("config", "Show the resolved configuration, or the reference of every key.")


@app.command("show")
@reports_errors
def show(
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> None:
    """Print the resolved configuration (YAML, secrets masked): file, overrides and $PAPERGYM_* variables applied."""
    print(config_yaml(resolve(config, overrides)), end="")


@app.command("reference")
@reports_errors
def reference(debug: DebugOption = False) -> None:
    """Print the table of every key (type, default, description) as Markdown: docs/config.md."""
    from papergym.settings.reference import reference_markdown

    stdout.print(reference_markdown(), end="", soft_wrap=True)
