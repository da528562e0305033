"""``papergym build CORPUS... --recipe ares`` as a function: :func:`build_corpus`.

It takes the sections the build reads (:class:`~.build.AresJob`) and returns an
:class:`~.runner.AresResult`; the command line (:mod:`papergym.cli.build.ares`) prints it.
Everything that can be refused (the settings against the folder's, the corpus files, an endpoint
that does not answer) is checked before the output folder is touched. Offline (no LLM
configured, or ``build.builder`` extractive) it runs the steps that need no LLM and keeps the
drafts they pass (``kept-*.jsonl``): the same folder continues with an LLM later.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from papergym.llm.client import LLMClient
from papergym.recipes.ares.build import (
    LLM_ROLES,
    AresJob,
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
)
from papergym.recipes.ares.runner import AresResult, collect_result, finish_outputs
from papergym.recipes.ares.shards import Mode, ShardStore
from papergym.recipes.endpoint import choose_builder, ensure_answering
from papergym.recipes.output import start_output
from papergym.recipes.steps import ProgressHook


def build_corpus(
    paths: Sequence[Path],
    out: Path,
    job: AresJob,
    *,
    config_yaml: str | None = None,
    progress: ProgressHook | None = None,
) -> AresResult:
    """Build ``out`` from the corpus under ``paths`` on the configured engine (resuming it), then
    write instances.jsonl (LLM mode), dropped.jsonl, failed.jsonl and the card.

    ``config_yaml`` is the resolved configuration to record as config.yaml; ``progress`` is told
    of each document done (engine ``local``). Raises :class:`~papergym.errors.BadInputError` on
    bad input, :class:`~papergym.recipes.endpoint.EndpointDown` when an endpoint does not answer
    (nothing written either way).
    """
    choose_builder(job.build.builder, job.llm)  # an LLM builder without an LLM is refused
    mode = ares_mode(job)
    settings = ares_settings(job, mode)
    resuming = check_ares_output(out, settings)
    corpus = open_corpus(paths, job.ares)
    check_corpus(out, corpus)
    result = asyncio.run(_run(out, job, settings, corpus, paths, config_yaml, progress))
    store = ShardStore(out, job.ares.shard_size)
    removed = finish_outputs(store, mode, store.records())
    if removed:  # later copies of texts that shards done apart both kept: now drops
        result = _recounted(result, store, mode, removed)
    write_ares_card(store, mode, result)
    result.resuming = resuming
    return result


def _recounted(result: AresResult, store: ShardStore, mode: Mode, removed: int) -> AresResult:
    fresh = collect_result(store, mode)
    fresh.usage = result.usage
    fresh.kept_this_run = max(0, result.kept_this_run - removed)
    return fresh


async def _run(
    out: Path,
    job: AresJob,
    settings: AresSettings,
    corpus: Corpus,
    paths: Sequence[Path],
    config_yaml: str | None,
    progress: ProgressHook | None,
) -> AresResult:
    if settings.mode == "llm":
        llm = LLMClient.from_config(job.llm)
        try:  # fail fast, before the output folder is created
            await ensure_answering(llm, LLM_ROLES)
        finally:
            await llm.aclose()
    start_output(out, settings, config_yaml)
    record_corpus(out, corpus)
    if job.ares.engine == "datatrove":
        from papergym.recipes.ares.distributed import run_datatrove_local

        return await asyncio.to_thread(run_datatrove_local, paths, out, job)
    return await run_shards(corpus, out, job, progress=progress)
