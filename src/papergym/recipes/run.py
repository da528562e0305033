"""``papergym build`` of papers as a function: :func:`build_papers`.

It takes the ``build`` and ``llm`` sections and returns a
:class:`~papergym.recipes.runner.BuildResult`; the command line (:mod:`papergym.cli.build`)
prints it and decides the exit code. Everything that can be refused (the builder, the settings
against the folder's, the sources, an endpoint that does not answer) is checked before the
output folder is touched; the run itself and its folder are :mod:`papergym.recipes.runner`'s.
Corpora of documents (``build.recipe`` ares) are :func:`papergym.recipes.ares.run.build_corpus`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from papergym.errors import BadInputError
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import Role
from papergym.recipes.endpoint import choose_builder, ensure_answering
from papergym.recipes.output import BuildSettings, check_output, settings_for, start_output
from papergym.recipes.reading import SourceReader
from papergym.recipes.runner import Builder, BuildResult, open_sources, usage_json
from papergym.recipes.settings import BuildSection
from papergym.recipes.steps import ProgressHook

EXTRACTIVE_NOTE = (
    "Built by the extractive baseline: sentences are selected from the paper, not written; "
    "criteria are templated from method and experiment sentences. Use an LLM endpoint for the "
    "full recipe."
)
WRITING_ROLES: tuple[Role, ...] = ("extractor", "writer", "rubric")


def build_papers(
    sources: Sequence[Path],
    out: Path,
    section: BuildSection,
    llm: LLMConfig,
    *,
    config_yaml: Callable[[BuildSection], str] | None = None,
    progress: ProgressHook | None = None,
) -> BuildResult:
    """Build ``out`` from the papers of ``sources`` (resuming it), with its card.

    ``config_yaml`` gives the resolved configuration to record as config.yaml, from the build
    section as it runs (``builder`` auto resolved to the one chosen, so the record says what
    ran); ``progress`` is told of each paper done. Raises
    :class:`~papergym.errors.BadInputError` on bad input and
    :class:`~papergym.recipes.endpoint.EndpointDown` when an endpoint does not answer (nothing
    written either way); papers the endpoint failed on later are the result's ``failures``.
    """
    if section.recipe == "ares":
        raise BadInputError(None, "recipe ares builds documents: use build_corpus")
    section, settings = build_settings(section, llm)
    resuming = check_output(out, settings)
    reader = open_sources(sources, out)
    saved = config_yaml(section) if config_yaml is not None else None
    client_config = llm if section.builder == "llm" else None
    engine = _Engine(sources, section) if section.engine == "datatrove" else None
    result = asyncio.run(_run(out, settings, saved, client_config, reader, progress, engine))
    _write_card(out, result, settings)
    return replace(result, resuming=resuming)


def build_settings(section: BuildSection, llm: LLMConfig) -> tuple[BuildSection, BuildSettings]:
    """The section with ``builder`` auto resolved, and the settings it builds with (build.yaml).
    An LLM builder without an LLM is a BadInputError."""
    chosen = choose_builder(section.builder, llm)
    section = section.model_copy(update={"builder": chosen})
    settings = settings_for(
        section.recipe,
        chosen,
        llm,
        leakage_judge=section.leakage_judge,
        leakage_action=section.leakage.action,
        leakage_min_criteria=section.leakage.min_criteria,
        limit=section.limit,
        paper_concurrency=section.paper_concurrency,
        max_unit_words=section.max_unit_words,
    )
    return section, settings


def prepare(
    sources: Sequence[Path],
    out: Path,
    section: BuildSection,
    llm: LLMConfig,
    config_yaml: str | None = None,
) -> BuildSettings:
    """What ``papergym build`` does before any task runs, for a launch on Slurm or Ray: check
    the settings against the folder and the sources (one-line BadInputError), record the
    build's settings (and ``config_yaml`` as config.yaml). Returns the settings to give
    :func:`papergym.recipes.paper_tasks.papers_pipeline`."""
    if section.recipe == "ares":
        raise BadInputError(None, "recipe ares builds documents: use ares.distributed.prepare")
    _, settings = build_settings(section, llm)
    check_output(out, settings)
    open_sources(sources, out)
    start_output(out, settings, config_yaml)
    return settings


@dataclass(frozen=True)
class _Engine:
    """build.engine=datatrove: the sources to give the tasks, and how many tasks, at once."""

    sources: Sequence[Path]
    section: BuildSection


async def _run(
    out: Path,
    settings: BuildSettings,
    config_yaml: str | None,
    config: LLMConfig | None,
    reader: SourceReader,
    progress: ProgressHook | None = None,
    engine: _Engine | None = None,
) -> BuildResult:
    llm = LLMClient.from_config(config) if config is not None else None
    try:
        if llm is not None:  # fail fast, before the output folder is created
            judge: tuple[Role, ...] = ("judge",) if settings.leakage_judge else ()
            await ensure_answering(llm, [*WRITING_ROLES, *judge])
        start_output(out, settings, config_yaml)
        if engine is not None:
            return await _run_tasks(out, settings, config, reader, llm, progress, engine)
        builder = Builder(out=out, settings=settings, llm=llm, progress=progress)
        return await builder.run(reader)
    finally:
        if llm is not None:
            await llm.aclose()


async def _run_tasks(
    out: Path,
    settings: BuildSettings,
    config: LLMConfig | None,
    reader: SourceReader,
    llm: LLMClient | None,
    progress: ProgressHook | None,
    engine: _Engine,
) -> BuildResult:
    """The papers as datatrove tasks, then the assembly: the same Builder over every source,
    building only what no task was given (:mod:`.paper_tasks`)."""
    from papergym.recipes import paper_tasks

    reports = await asyncio.to_thread(
        paper_tasks.run_tasks_locally,
        engine.sources,
        out,
        settings,
        config,
        tasks=engine.section.tasks,
        workers=engine.section.workers,
    )
    builds = paper_tasks.assembly_builds(settings.limit)
    builder = Builder(out=out, settings=settings, llm=llm, progress=progress, builds=builds)
    failed = [failure for report in reports for failure in report.failures]
    result = await builder.run(reader, failed)
    return paper_tasks.assembled(result, reports, out, config)


def _write_card(out: Path, result: BuildResult, settings: BuildSettings) -> None:
    from papergym.export.card import write_card

    write_card(
        out,
        result.instances,
        result.drops,
        config=settings.model_dump(),
        usage=usage_json(result.usage),
        builder_note=EXTRACTIVE_NOTE if settings.builder == "extractive" else None,
        leakage=None,
        failures=result.failures,
    )
