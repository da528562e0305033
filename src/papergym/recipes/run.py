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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from papergym.errors import BadInputError
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import Role
from papergym.recipes.endpoint import choose_builder, ensure_answering
from papergym.recipes.mix import (
    UNKNOWN,
    MixSelection,
    achieved_mix,
    select_mix,
    source_disciplines,
)
from papergym.recipes.output import BuildSettings, check_output, settings_for, start_output
from papergym.recipes.reading import SourceReader
from papergym.recipes.runner import Builder, BuildResult, open_sources, usage_json
from papergym.recipes.settings import BuildSection
from papergym.recipes.steps import ProgressHook
from papergym.sources.discover import PaperSource

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
    reader = SourceReader.discover(sources, out)
    selection = _mixed(reader, section)
    if selection is not None:
        reader = reader.only(selection.selected)
    section, settings = build_settings(section, llm, _mix_settings(section, selection))
    resuming = check_output(out, settings)
    reader = open_sources(reader, out)
    saved = config_yaml(section) if config_yaml is not None else None
    client_config = llm if section.builder == "llm" else None
    engine = None
    if section.engine == "datatrove":
        engine = _Engine(sources, section, selection.selected if selection else None)
    result = asyncio.run(_run(out, settings, saved, client_config, reader, progress, engine))
    _write_card(out, result, settings, selection)
    warnings = tuple(selection.shortfalls()) if selection is not None else ()
    return replace(result, resuming=resuming, warnings=warnings)


def _mixed(reader: SourceReader, section: BuildSection) -> MixSelection | None:
    """The sources ``build.mix`` selects (None without a mix): each paper's discipline by its
    metadata.json categories, else the offline guess from its title and abstract."""
    if section.mix is None or section.target is None:
        return None
    disciplines = source_disciplines(reader.sources, guess=_guessed_discipline)
    selection = select_mix(disciplines, section.mix, section.target, section.seed)
    if not selection.selected:
        found = ", ".join(sorted(set(disciplines.values()))) or "none"
        raise BadInputError(None, f"no paper of the mix's disciplines (found: {found})")
    return selection


def _guessed_discipline(source: PaperSource) -> str | None:
    """The extractive builder's offline discipline guess for a paper without categories
    (None when it cannot be read: the build reports that paper's failure itself)."""
    from papergym.ingestion import read_paper
    from papergym.recipes.extractive import domain_of

    try:
        paper = read_paper(source)
    except BadInputError:
        return None
    return domain_of(f"{paper.title}. {paper.abstract}") or None


def _mix_settings(section: BuildSection, selection: MixSelection | None) -> dict[str, object]:
    if selection is None:
        return {}
    return {
        "mix": section.mix,
        "target": section.target,
        "seed": section.seed,
        "selection": selection.digest,
    }


def build_settings(
    section: BuildSection, llm: LLMConfig, mix: Mapping[str, object] | None = None
) -> tuple[BuildSection, BuildSettings]:
    """The section with ``builder`` auto resolved, and the settings it builds with (build.yaml;
    ``mix``: the discipline mix's record, :func:`_mix_settings`). An LLM builder without an LLM
    is a BadInputError."""
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
        **(mix or {}),
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
    selection = _mixed(SourceReader.discover(sources, out), section)
    _, settings = build_settings(section, llm, _mix_settings(section, selection))
    check_output(out, settings)
    open_sources(sources, out)
    start_output(out, settings, config_yaml)
    return settings


def selected_sources(
    sources: Sequence[Path], out: Path, section: BuildSection
) -> tuple[str, ...] | None:
    """A discipline mix's papers (relative sources, seeded as ``papergym build --mix`` picks
    them), to give a launch's :func:`~.paper_tasks.papers_pipeline` as ``only``; None without
    ``build.mix``."""
    selection = _mixed(SourceReader.discover(sources, out), section)
    return None if selection is None else tuple(selection.selected)


@dataclass(frozen=True)
class _Engine:
    """build.engine=datatrove: the sources to give the tasks, and how many tasks, at once."""

    sources: Sequence[Path]
    section: BuildSection
    only: Sequence[str] | None = None  # a discipline mix's selection: the tasks build these


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
        only=engine.only,
    )
    builds = paper_tasks.assembly_builds(settings.limit)
    builder = Builder(out=out, settings=settings, llm=llm, progress=progress, builds=builds)
    failed = [failure for report in reports for failure in report.failures]
    result = await builder.run(reader, failed)
    return paper_tasks.assembled(result, reports, out, config)


def _write_card(
    out: Path, result: BuildResult, settings: BuildSettings, selection: MixSelection | None
) -> None:
    from papergym.export.card import write_card

    mix = None
    if selection is not None:
        domains = [i.domain or UNKNOWN for i in result.instances]
        mix = {
            **selection.model_dump(exclude={"selected"}),
            "achieved": achieved_mix(selection, domains),
        }

    write_card(
        out,
        result.instances,
        result.drops,
        config=settings.model_dump(),
        usage=usage_json(result.usage),
        builder_note=EXTRACTIVE_NOTE if settings.builder == "extractive" else None,
        leakage=None,
        failures=result.failures,
        mix=mix,
    )
