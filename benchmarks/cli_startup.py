"""Start-up cost of the ``papergym`` command line against a minimal typer app.

The peer is a typer app written in the same run with the same command names and one-line help
texts (read from ``papergym --help``) and nothing behind them: the floor of any typer CLI with
these commands. Both are timed as whole processes, in turn (A B A B …), by the CPU time the
operating system charges them (user + sys, from ``wait4``), so the ratio holds while the
machine's speed drifts. Also timed: ``papergym COMMAND --help`` for a few commands (each imports
only its own module) and ``python -c pass`` (the interpreter's own floor).

    python benchmarks/cli_startup.py [--runs N] [--quick]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

COMMAND_LINE = re.compile(r"^  ([a-z][a-z0-9-]*)\s{2,}(.*)$")
PROBED_SUBCOMMANDS = ("build", "score", "review", "train")


def papergym_command() -> list[str]:
    """How to start the installed command line (the script beside this interpreter, else -m)."""
    script = Path(sys.executable).with_name("papergym")
    if script.exists():
        return [str(script)]
    found = shutil.which("papergym")
    return [found] if found else [sys.executable, "-m", "papergym.cli"]


def command_names(papergym: list[str]) -> list[tuple[str, str]]:
    """(name, first help line) of each top-level command, as ``papergym --help`` lists them."""
    env = os.environ | {"COLUMNS": "200"}
    text = subprocess.run(
        [*papergym, "--help"], capture_output=True, text=True, check=True, env=env
    ).stdout
    commands = text.partition("Commands:")[2]
    return [
        (m[1], m[2].strip()) for line in commands.splitlines() if (m := COMMAND_LINE.match(line))
    ]


def peer_script(commands: list[tuple[str, str]]) -> str:
    """A minimal typer app with the same commands, each doing nothing."""
    lines = ["import typer", "app = typer.Typer(add_completion=False)", ""]
    for index, (name, summary) in enumerate(commands):
        lines += [
            f"@app.command({name!r}, help={summary!r})",
            f"def command_{index}(path: str = typer.Argument('.')) -> None:",
            "    pass",
            "",
        ]
    lines += ["if __name__ == '__main__':", "    app()"]
    return "\n".join(lines) + "\n"


def cpu_seconds(argv: list[str]) -> float:
    """User + sys CPU seconds of one run of ``argv`` (output discarded)."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}")
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10, help="counted runs of each command")
    parser.add_argument("--quick", action="store_true", help="smoke mode: 2 runs each")
    args = parser.parse_args()
    runs = 2 if args.quick else args.runs
    papergym = papergym_command()
    commands = command_names(papergym)
    with tempfile.TemporaryDirectory() as tmp:
        peer = Path(tmp) / "peer_cli.py"
        peer.write_text(peer_script(commands), encoding="utf-8")
        cases = {
            "papergym --help": [*papergym, "--help"],
            "typer peer --help": [sys.executable, str(peer), "--help"],
            "python -c pass": [sys.executable, "-c", "pass"],
            **{f"papergym {c} --help": [*papergym, c, "--help"] for c in PROBED_SUBCOMMANDS},
        }
        for argv in cases.values():  # warm the file cache once
            cpu_seconds(argv)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(runs):
            for name, argv in cases.items():
                times[name].append(cpu_seconds(argv))
    peer_runs = times["typer peer --help"]
    table = Table(
        title=f"CLI start-up, CPU seconds (user+sys), median of {runs} runs; "
        f"{len(commands)} commands"
    )
    for column in ("command", "median s", "min s", "max s", "vs typer peer"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for name, values in times.items():
        ratio = statistics.median(v / p for v, p in zip(values, peer_runs, strict=True))
        table.add_row(
            name,
            f"{statistics.median(values):.3f}",
            f"{min(values):.3f}",
            f"{max(values):.3f}",
            f"{ratio:.2f}×",
        )
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
