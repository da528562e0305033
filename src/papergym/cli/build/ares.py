"""``papergym build CORPUS... --recipe ares``: the run
(:func:`papergym.recipes.ares.run.build_corpus`), its summary and its exit code.

Offline (no LLM configured, or ``--builder extractive``) the build runs the steps that need no
LLM, writes the drafts they keep (``kept-*.jsonl``) and stops with one line naming the LLM
options; the exit code is 0, because an offline run did all it can (the same folder continues
with an LLM later).
"""

from __future__ import annotations

import json
from pathlib import Path

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
from papergym.recipes.ares.build import AresJob
from papergym.recipes.ares.pipeline import needs_llm
from papergym.recipes.ares.run import build_corpus
from papergym.recipes.ares.runner import AresResult
from papergym.settings.load import config_yaml
from papergym.settings.models import PaperGymConfig


def build_ares(paths: list[Path], out: Path, config: PaperGymConfig, json_output: bool) -> None:
    """Build on the configured engine, print the summary, exit."""
    job = AresJob(ares=config.ares, llm=config.llm, audit=config.audit, build=config.build)
    with StepBars() as bars, endpoint_down():
        result = build_corpus(paths, out, job, config_yaml=config_yaml(config), progress=bars.hook)
    if json_output:
        print(json.dumps(_summary_json(result), ensure_ascii=False, indent=2))
    else:
        _print_summary(result)
    _exit_status(result)


def _summary_json(result: AresResult) -> dict[str, object]:
    return {
        "out": str(result.out),
        "mode": result.mode,
        "documents": result.documents,
        "kept": result.kept,
        "kept_this_run": result.kept_this_run,
        "resuming": result.resuming,
        "dropped": result.dropped,
        "drops": [
            {"step": step, "reason": reason, "count": count}
            for (step, reason), count in result.drops.most_common()
        ],
        "failed": [f.model_dump() for f in result.failures],
        "usage": result.usage.as_dict() if result.usage is not None else None,
    }


def _print_summary(result: AresResult) -> None:
    table = Table(title=f"ARES build: {result.out}", title_justify="left", show_header=False)
    table.add_row("documents read", f"{result.documents:,}")
    kept = "instances" if result.mode == "llm" else "kept by the offline steps"
    table.add_row(kept, f"{result.kept:,}")
    if result.resuming:
        table.add_row("of which built by this run", f"{result.kept_this_run:,}")
    table.add_row("dropped", f"{result.dropped:,}")
    if result.failures:
        table.add_row("failed (endpoint; retried next run)", f"{len(result.failures):,}")
    stdout.print(table)
    if result.drops:
        stdout.print(reasons_table("Drops by step and reason", result.drops, "{:,}".format))
    if result.usage is not None:
        per = ("kept instance", max(result.kept_this_run, 1))
        stdout.print(usage_table(result.usage, per=per))
    kept_files = "instances-*.jsonl, instances.jsonl" if result.mode == "llm" else "kept-*.jsonl"
    stdout.print(f"wrote {result.out}/{kept_files}, dropped.jsonl, card.md, progress/")


def _exit_status(result: AresResult) -> None:
    """Exit 1 when the endpoint failed on documents (run again), 2 when an LLM build kept
    nothing; offline, the one line naming the LLM options, and exit 0."""
    if result.failures:
        cut = sum(f.step == "llm:truncated" for f in result.failures)
        exit_endpoint_failed(
            len(result.failures), "document(s)", result.out / "failed.jsonl", truncated=cut
        )
    if result.mode == "offline":
        stderr.print(f"stopped after the offline steps: {needs_llm()}", soft_wrap=True)
        return
    if not result.kept:
        exit_nothing_built(
            f"{result.documents} document(s)", result.dropped, result.out / "dropped.jsonl"
        )
