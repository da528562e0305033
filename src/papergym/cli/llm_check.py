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
from papergym.llm.cache import default_cache_dir
from papergym.llm.check import BackendCheck, check_backends
from papergym.llm.config import require_llm
from papergym.llm.endpoints import records_path
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

    Sends one plain and one structured call to each distinct backend (never from the cache), then measures its speed (tokens/s of one request, and of 4 and 16 at once), and prints what worked, the structured-output mode the endpoint took, the tokens/s, a recommended concurrency, and the tokens used. What it found about each OpenAI-compatible endpoint that passed is saved in endpoints.json beside the response cache, where later runs read it. Exit code 2 when a backend fails.

    The endpoints are the llm section of the configuration: -c FILE, key=value arguments (llm.default.model=M, llm.roles.judge.base_url=URL) and the LLM flags, which set the same keys.
    """
    resolved = resolve(config_file, overrides, llm)
    config = resolved.llm
    require_llm(config, "no LLM configured")
    roles = _roles(role)
    results, tracker = asyncio.run(check_backends(config, roles, max_tokens=max_tokens))
    answered = any(r.ok or r.tokens_per_s is not None for r in results)
    if results and not answered and not json_output:
        for failed in results:  # nothing answered: one line per backend says why, no table
            stderr.print(f"error: {failed.failure_line()}", markup=False, soft_wrap=True)
            for note in failed.notes:
                stderr.print(f"note: {note}", markup=False, soft_wrap=True)
        raise typer.Exit(2)
    if json_output:
        payload = {
            "backends": [r.__dict__ | {"ok": r.ok} for r in results],
            "usage": tracker.as_dict(),
            "records": str(records_path(config.cache_dir or default_cache_dir())),
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        stdout.print(_backends_table(results))
        stdout.print(usage_table(tracker))
        for line in _notes(results, str(records_path(config.cache_dir or default_cache_dir()))):
            stdout.print(line, markup=False, soft_wrap=True)
        for failed in (r for r in results if not r.ok):
            stderr.print(f"error: {failed.failure_line()}", markup=False, soft_wrap=True)
    if not all(r.ok for r in results):
        raise typer.Exit(2)


def _backends_table(results: list[BackendCheck]) -> Table:
    """One row a backend: its roles, where it is, and how each kind of call went."""
    table = Table(title="LLM backends", title_justify="left")
    columns = ("roles", "model", "endpoint", "plain", "structured", "seconds")
    for column in (*columns, "schema mode", "tokens/s", "concurrency"):
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
            r.structured_output,
            f"{r.tokens_per_s:.1f}" if r.tokens_per_s is not None else r.speed_error,
            _concurrency(r),
        )
    return table


def _concurrency(check: BackendCheck) -> str:
    """The recommendation and what it rests on: ``4 (1: 20, 4: 61, 16: 70 tok/s)``."""
    if check.recommended_concurrency is None:
        return ""
    speeds = ", ".join(f"{level}: {speed:.0f}" for level, speed in check.concurrency.items())
    return f"{check.recommended_concurrency} ({speeds} tok/s)"


def _notes(results: list[BackendCheck], saved: str) -> list[str]:
    """Lines under the table: other models answering, and where the findings were saved."""
    lines = [
        f"warning: {endpoint} was asked for model {r.model} but answers as {name}"
        for r in results
        for endpoint, name in r.answered_as.items()
    ]
    lines += [f"note: {note}" for r in results for note in r.notes]
    if any(r.backend == "openai" and (r.ok or r.tokens_per_s is not None) for r in results):
        lines.append(f"schema mode, speed and concurrency saved in {saved} for later runs")
    return lines


def _roles(names: list[str] | None) -> list[Role] | None:
    if not names:
        return None
    unknown = [n for n in names if n not in ROLES]
    if unknown:
        raise BadInputError(
            None, f"unknown role(s) {', '.join(unknown)}; roles are {', '.join(ROLES)}"
        )
    return [cast(Role, n) for n in names]
