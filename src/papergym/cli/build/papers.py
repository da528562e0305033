"""``papergym build`` of papers: the run (:func:`papergym.recipes.run.build_papers`), its summary
(a table, or JSON with ``--json``) and its exit code."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from papergym.cli.build.output import (
    endpoint_down,
    exit_endpoint_failed,
    exit_nothing_built,
    reasons_table,
)
from papergym.cli.common import stderr, stdout
from papergym.cli.progress import StepBars
from papergym.llm.report import usage_table
from papergym.recipes.run import build_papers
from papergym.recipes.runner import BuildResult, usage_json
from papergym.recipes.settings import BuildSection
from papergym.recipes.steps import drops_by_step
from papergym.settings.load import config_yaml
from papergym.settings.models import PaperGymConfig


def build_papers_command(
    paths: list[Path], out: Path, resolved: PaperGymConfig, json_output: bool
) -> None:
    """Build, print the summary, exit 1 or 2 when the build is not complete."""

    def saved(section: BuildSection) -> str:  # the record says which builder auto chose
        return config_yaml(resolved.model_copy(update={"build": section}))

    with StepBars() as bars, endpoint_down():
        result = build_papers(
            paths, out, resolved.build, resolved.llm, config_yaml=saved, progress=bars.hook
        )
    for line in result.warnings:  # a mix's shortfalls: said once, before the summary
        stderr.print(f"[yellow]warning:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    if json_output:
        print(json.dumps(_summary_json(result), ensure_ascii=False, indent=2))
    else:
        _print_summary(result)
    _exit_status(result)


def _exit_status(result: BuildResult) -> None:
    """A line and a non-zero exit when the build is not complete (see the command's help)."""
    if result.failures:
        steps = Counter(f.step for f in result.failures)
        kinds = ", ".join(f"{n} {step}" for step, n in steps.most_common())
        exit_endpoint_failed(
            len(result.failures),
            "paper(s)",
            result.out / "failed.jsonl",
            f"{kinds}; ",
            truncated=steps["llm:truncated"],
        )
    if not result.instances:
        exit_nothing_built(
            f"{result.papers} paper(s)", len(result.drops), result.out / "dropped.jsonl"
        )


def _summary_json(result: BuildResult) -> dict[str, object]:
    return {
        "out": str(result.out),
        "papers": result.papers,
        "instances": len(result.instances),
        "resumed_papers": result.resumed if result.resuming else 0,
        "drops": [d.model_dump() for d in result.drops],
        "failed": [f.model_dump() for f in result.failures],
        "warnings": list(result.warnings),
        "usage": usage_json(result.usage),
    }


def _print_summary(result: BuildResult) -> None:
    table = Table(title=f"Build: {result.out}", title_justify="left", show_header=False)
    table.add_row("papers", str(result.papers))
    table.add_row("instances", str(len(result.instances)))
    if result.resuming:
        table.add_row("already finished before this run", str(result.resumed))
    dimensions = Counter(c.dimension for i in result.instances for c in i.rubric.specific)
    table.add_row("specific criteria", f"{dimensions.total()} ({dimensions['method']} method)")
    table.add_row("dropped", str(len(result.drops)))
    if result.failures:
        table.add_row("failed (endpoint; retried next run)", str(len(result.failures)))
    stdout.print(table)
    if result.drops:
        stdout.print(reasons_table("Drops by step and reason", result.drops_by_step()))
    if result.failures:
        title = "Not finished: the LLM endpoint failed (run again to retry)"
        stdout.print(reasons_table(title, drops_by_step(result.failures)))
    if result.usage is not None:
        stdout.print(usage_table(result.usage, per=("instance", max(len(result.instances), 1))))
    stdout.print(f"wrote {result.out / 'instances.jsonl'}, {result.out / 'card.md'}")
