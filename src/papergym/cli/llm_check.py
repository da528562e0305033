"""``papergym llm-check``: does each configured LLM endpoint answer, and answer valid JSON?"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, cast

import typer
from rich.table import Table

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    OverridesArgument,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.cli.flags import Given, llm_options
from papergym.cli.groups import single_app
from papergym.errors import BadInputError
from papergym.llm.check import BackendCheck, check_backends
from papergym.llm.config import require_llm
from papergym.llm.report import usage_table
from papergym.llm.types import ROLES, Role

app = single_app()


@app.command("llm-check")
@reports_errors
@llm_options(cache=False)
def llm_check(
    overrides: OverridesArgument = None,
    config_file: ConfigOption = None,
    llm: Given = (),
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role", help="Check only these roles (repeatable). Default: every configured role."
        ),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", help="Token limit of each test call.")
    ] = 256,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Check that each configured LLM endpoint answers, and answers valid JSON for a schema.

    Sends one plain and one structured call to each distinct backend (never from the cache), then prints what worked, the latency, and the tokens used. Exit code 2 when a backend fails.

    The endpoints are the llm section of the configuration: -c FILE, key=value arguments (llm.default.model=M, llm.roles.judge.base_url=URL) and the LLM flags, which set the same keys.
    """
    resolved = resolve(config_file, overrides, llm)
    config = resolved.llm
    require_llm(config, "no LLM configured")
    roles = _roles(role)
    results, tracker = asyncio.run(check_backends(config, roles, max_tokens=max_tokens))
    if results and not any(r.ok for r in results) and not json_output:
        for failed in results:  # nothing worked: one line per backend says why, no table
            stderr.print(f"error: {failed.failure_line()}", markup=False, soft_wrap=True)
        raise typer.Exit(2)
    if json_output:
        payload = {
            "backends": [r.__dict__ | {"ok": r.ok} for r in results],
            "usage": tracker.as_dict(),
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        stdout.print(_backends_table(results))
        stdout.print(usage_table(tracker))
    if not all(r.ok for r in results):
        raise typer.Exit(2)


def _backends_table(results: list[BackendCheck]) -> Table:
    """One row a backend: its roles, where it is, and how each kind of call went."""
    table = Table(title="LLM backends", title_justify="left")
    for column in ("roles", "model", "endpoint", "plain", "structured", "seconds"):
        table.add_column(column, overflow="fold")
    for r in results:
        plain = r.plain or next((e for e in r.errors if e.startswith("plain")), "")
        structured = r.structured or next((e for e in r.errors if e.startswith("structured")), "")
        table.add_row(
            ", ".join(r.roles),
            r.model,
            ", ".join(r.endpoints),
            plain,
            structured,
            f"{r.seconds:.2f}",
        )
    return table


def _roles(names: list[str] | None) -> list[Role] | None:
    if not names:
        return None
    unknown = [n for n in names if n not in ROLES]
    if unknown:
        raise BadInputError(
            None, f"unknown role(s) {', '.join(unknown)}; roles are {', '.join(ROLES)}"
        )
    return [cast(Role, n) for n in names]
