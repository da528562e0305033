"""``papergym.cli.groups.DefaultCommandGroup``: a group whose ``run`` subcommand runs when the first
argument names no subcommand (``papergym review PAPER -o OUT``), while ``review eval ...`` and
``review --help`` reach the group."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from typer.testing import CliRunner

from papergym.cli import app
from papergym.cli.groups import DefaultCommandGroup

runner = CliRunner()


def group() -> typer.Typer:
    """A group like ``review``: ``run`` (the default) and ``eval``, each echoing what it got."""
    demo = typer.Typer(cls=DefaultCommandGroup, no_args_is_help=True)

    @demo.command("run")
    def run(
        papers: Annotated[list[str], typer.Argument()],
        out: Annotated[Path, typer.Option("-o", "--out")],
    ) -> None:
        typer.echo(f"run {' '.join(papers)} -> {out}")

    @demo.command("eval")
    def evaluate(ratings: Annotated[Path, typer.Option("--ratings")]) -> None:
        typer.echo(f"eval {ratings}")

    return demo


def test_cli_default_group_runs_run_when_the_first_argument_is_no_subcommand() -> None:
    result = runner.invoke(group(), ["a.txt", "b.txt", "-o", "out"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "run a.txt b.txt -> out"


def test_cli_default_group_options_before_the_papers_still_reach_run() -> None:
    result = runner.invoke(group(), ["-o", "out", "a.txt"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "run a.txt -> out"


def test_cli_default_group_named_subcommand_wins() -> None:
    result = runner.invoke(group(), ["eval", "--ratings", "r.tsv"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "eval r.tsv"
    explicit = runner.invoke(group(), ["run", "eval", "-o", "out"])  # a paper named "eval"
    assert explicit.output.strip() == "run eval -> out"


def test_cli_default_group_help_lists_subcommands() -> None:
    result = runner.invoke(group(), ["--help"])
    assert result.exit_code == 0
    assert "run" in result.output and "eval" in result.output


def test_cli_review_help_and_default_run(tmp_path: Path) -> None:
    helped = runner.invoke(app, ["review", "--help"])
    assert helped.exit_code == 0
    assert "run" in helped.output and "Simulated peer review" in helped.output
    missing = tmp_path / "missing.txt"
    result = runner.invoke(app, ["review", str(missing), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2  # routed to `review run`, which names the file
    assert str(missing) in result.output and "no such file" in result.output
    assert not (tmp_path / "out").exists()


def test_cli_review_eval_is_a_subcommand_of_the_group() -> None:
    result = runner.invoke(app, ["review", "eval", "--help"])
    assert result.exit_code == 0, result.output
    assert "--ratings" in result.output
