"""``papergym build CORPUS... --recipe ares``: the ARES build's command-line half.

Called by :func:`papergym.recipes.command.build` once the configuration is resolved. Offline (no
LLM configured, or ``--builder extractive``) it runs the steps that need no LLM, writes the drafts
they keep (``kept-*.jsonl``) and stops with one line naming the LLM options; the exit code is 0,
because an offline run did all it can (the same folder continues with an LLM later).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from papergym.cli.common import stderr, stdout
from papergym.errors import BadInputError
from papergym.llm.client import LLMClient
from papergym.llm.report import usage_table
from papergym.llm.types import LLMError
from papergym.recipes.ares.build import (
    LLM_ROLES,
    ares_mode,
    ares_settings,
    open_corpus,
    run_shards,
)
from papergym.recipes.ares.card import write_ares_card
from papergym.recipes.ares.corpus import Corpus
from papergym.recipes.ares.output import (
    AresSettings,
    check_ares_output,
    check_corpus,
    record_corpus,
    start_ares_output,
)
from papergym.recipes.ares.runner import AresResult, collect_result, finish_outputs
from papergym.recipes.ares.shards import Mode, ShardStore
from papergym.redact import redact
from papergym.settings.models import PaperGymConfig


def build_ares(paths: list[Path], out: Path, config: PaperGymConfig, json_output: bool) -> None:
    """Check everything, run the build on the configured engine, print the summary, exit."""
    mode = _mode(config)
    settings = ares_settings(config, mode)
    # Everything that can be refused is checked before the output folder is touched.
    resuming = check_ares_output(out, settings)
    corpus = open_corpus(paths, config.ares)
    check_corpus(out, corpus)
    result = asyncio.run(_run(out, config, settings, corpus, paths))
    store = ShardStore(out, config.ares.shard_size)
    removed = finish_outputs(store, mode, store.records())
    if removed:  # later copies of texts that shards done apart both kept: now drops
        result = _recounted(result, store, mode, removed)
    write_ares_card(store, mode, result)
    if json_output:
        print(json.dumps(_summary_json(result, resuming), ensure_ascii=False, indent=2))
    else:
        _print_summary(result, resuming)
    _exit_status(result, config)


def _recounted(result: AresResult, store: ShardStore, mode: Mode, removed: int) -> AresResult:
    fresh = collect_result(store, mode)
    fresh.usage = result.usage
    fresh.kept_this_run = max(0, result.kept_this_run - removed)
    return fresh


def _mode(config: PaperGymConfig) -> Mode:
    builder = config.build.builder
    if builder == "llm" and not config.llm.configured:
        raise BadInputError(
            None,
            "--builder llm (build.builder) needs an LLM: pass --llm-config, or --base-url and "
            "--model, or set llm in the -c file",
        )
    return ares_mode(config)


async def _run(
    out: Path, config: PaperGymConfig, settings: AresSettings, corpus: Corpus, paths: list[Path]
) -> AresResult:
    if settings.mode == "llm":
        llm = LLMClient.from_config(config.llm)
        try:  # fail fast, before the output folder is created
            await llm.ping(LLM_ROLES)
        except LLMError as error:
            stderr.print(
                f"[red]error:[/red] {escape(redact(str(error).strip()))}",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(1) from None
        finally:
            await llm.aclose()
    start_ares_output(out, settings, config)
    record_corpus(out, corpus)
    if config.ares.engine == "datatrove":
        from papergym.recipes.ares.distributed import run_datatrove_local

        return await asyncio.to_thread(run_datatrove_local, paths, out, config)
    from papergym.recipes.command import _Progress

    with _Progress() as hook:
        return await run_shards(corpus, out, config, progress=hook)


def _summary_json(result: AresResult, resuming: bool) -> dict[str, object]:
    return {
        "out": str(result.out),
        "mode": result.mode,
        "documents": result.documents,
        "kept": result.kept,
        "kept_this_run": result.kept_this_run,
        "resuming": resuming,
        "dropped": result.dropped,
        "drops": [
            {"step": step, "reason": reason, "count": count}
            for (step, reason), count in result.drops.most_common()
        ],
        "failed": [f.model_dump() for f in result.failures],
        "usage": result.usage.as_dict() if result.usage is not None else None,
    }


def _print_summary(result: AresResult, resuming: bool) -> None:
    table = Table(title=f"ARES build: {result.out}", title_justify="left", show_header=False)
    table.add_row("documents read", f"{result.documents:,}")
    kept = "instances" if result.mode == "llm" else "kept by the offline steps"
    table.add_row(kept, f"{result.kept:,}")
    if resuming:
        table.add_row("of which built by this run", f"{result.kept_this_run:,}")
    table.add_row("dropped", f"{result.dropped:,}")
    if result.failures:
        table.add_row("failed (endpoint; retried next run)", f"{len(result.failures):,}")
    stdout.print(table)
    if result.drops:
        reasons = Table(title="Drops by step and reason", title_justify="left")
        for column in ("step", "reason", "count"):
            reasons.add_column(column, overflow="fold")
        for (step, reason), count in result.drops.most_common():
            reasons.add_row(step, reason, f"{count:,}")
        stdout.print(reasons)
    if result.usage is not None:
        per = ("kept instance", max(result.kept_this_run, 1))
        stdout.print(usage_table(result.usage, per=per))
    kept_files = "instances-*.jsonl, instances.jsonl" if result.mode == "llm" else "kept-*.jsonl"
    stdout.print(f"wrote {result.out}/{kept_files}, dropped.jsonl, card.md, progress/")


def _exit_status(result: AresResult, config: PaperGymConfig) -> None:
    """Exit 1 when the endpoint failed on documents (run again), 2 when an LLM build kept
    nothing; offline, the one line naming the LLM options, and exit 0."""
    if result.failures:
        stderr.print(
            f"[red]error:[/red] {len(result.failures)} document(s) not finished because the LLM "
            f"endpoint failed (see {escape(str(result.out / 'failed.jsonl'))}); they are not "
            "dropped: run the same command again to retry them",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
    if result.mode == "offline":
        from papergym.recipes.ares.pipeline import needs_llm

        stderr.print(f"stopped after the offline steps: {needs_llm(config)}", soft_wrap=True)
        return
    if not result.kept:
        stderr.print(
            f"[red]error:[/red] no instance built: {result.documents} document(s), "
            f"{result.dropped} dropped (see {escape(str(result.out / 'dropped.jsonl'))})",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2)
