"""The paper build past one machine (``build.engine=datatrove``): the papers as datatrove tasks.

Sources are built in a stable order (by relative path, :class:`~.reading.SourceReader`); source
``k`` goes to task ``k mod tasks`` (:func:`in_share`). A task runs the same
:class:`~.runner.Builder` as one process, restricted to its share, into the same (shared)
output folder: per-paper folders ``papers/<id>/`` and ``sources/`` records, the LLM response
cache. It assembles nothing; it leaves what it did (its endpoint failures) in ``tasks/<rank>.json`` and its
LLM usage in ``usage/<rank>.json``. The command then runs the Builder once more over every source:
every paper a task finished costs a stat, so it only assembles instances.jsonl, dropped.jsonl,
failed.jsonl (the tasks' failures) and the card, exactly as one process writes them. A killed task
is resumed by the next run from its papers' folders, like a killed single-process build.

With ``build.limit``, tasks are given the first ``limit`` sources only; when some of those give
no paper, the assembly builds the few further papers the limit still wants itself
(:func:`assembly_builds`), so the instances are the same as one process's.

Multi-node launches call :func:`prepare`, give :func:`papers_pipeline` to datatrove's
SlurmPipelineExecutor or RayPipelineExecutor (docs/scale.md), then run ``papergym build`` to
assemble. The datatrove plumbing is :mod:`papergym.recipes.distributed`'s, shared with ARES.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from papergym.jsonl import write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.usage import UsageTracker
from papergym.recipes.distributed import (
    merged_usage,
    run_local,
    task_pipeline,
    write_usage,
)
from papergym.recipes.output import BuildSettings
from papergym.recipes.reading import SourceReader
from papergym.recipes.runner import Builder, BuildResult
from papergym.records import BuildFailure

ENGINE_SETTING = "build.engine"
STEP_NAME = "PaperGym papers"
TASKS_FOLDER = "tasks"  # per task: what its latest run did (:class:`TaskReport`)
ASSEMBLY_USAGE = "assembly"  # the usage file of the command's own calls (its checks, the rest)


class PaperJob(BaseModel):
    """What a task needs to build its share: plain data, as it may run on another node."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sources: tuple[str, ...]  # absolute: a Slurm or Ray task may start in another folder
    out: str
    settings: BuildSettings
    llm: LLMConfig | None = None  # None: the extractive builder
    # A discipline mix's selection (relative sources): the tasks build these only, in build
    # order, as one process does with ``build.mix``; None: every source.
    only: tuple[str, ...] | None = None


class TaskReport(BaseModel):
    """What one task's latest run did, saved as ``tasks/<rank>.json`` for the assembly."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: int
    papers: int  # papers of its share it reached
    resumed: int  # of them, finished before the run
    failures: tuple[BuildFailure, ...] = ()  # of them, left unfinished: the endpoint failed


def in_share(index: int, rank: int, tasks: int, limit: int | None = None) -> bool:
    """Whether source ``index`` (in build order) is task ``rank``'s of ``tasks``: ``index mod
    tasks == rank``, and, with a ``limit``, only among the first ``limit`` sources."""
    return index % tasks == rank and (limit is None or index < limit)


def assembly_builds(limit: int | None) -> Callable[[int], bool]:
    """The sources whose paper the assembly builds itself: those past the tasks' (``limit``)."""
    return partial(_past_limit, limit)


def _past_limit(limit: int | None, index: int) -> bool:
    return limit is not None and index >= limit


def run_task(job_json: str, rank: int, world_size: int) -> int:
    """What one task does (also callable without datatrove): the papers of its share, then its
    failures and usage files. Returns the instances its share holds."""
    job = PaperJob.model_validate_json(job_json)
    out = Path(job.out)
    reader = SourceReader.discover([Path(p) for p in job.sources], out)
    if job.only is not None:
        reader = reader.only(job.only)
    share = partial(in_share, rank=rank, tasks=world_size, limit=job.settings.limit)
    result = asyncio.run(_build_share(job, reader, share))
    report = TaskReport(
        rank=rank, papers=result.papers, resumed=result.resumed, failures=tuple(result.failures)
    )
    write_text_atomic(out / TASKS_FOLDER / f"{rank:05d}.json", report.model_dump_json())
    if result.usage is not None:
        write_usage(out, f"{rank:05d}", result.usage)
    return len(result.instances)


async def _build_share(
    job: PaperJob, reader: SourceReader, share: Callable[[int], bool]
) -> BuildResult:
    llm = LLMClient.from_config(job.llm) if job.llm is not None else None
    try:
        builder = Builder(out=Path(job.out), settings=job.settings, llm=llm, share=share)
        return await builder.run(reader)
    finally:
        if llm is not None:
            await llm.aclose()


def _task(
    sources: Sequence[Path],
    out: Path,
    settings: BuildSettings,
    llm: LLMConfig | None,
    only: Sequence[str] | None = None,
) -> partial[int]:
    """The task of a build as plain data (absolute paths, the job as JSON)."""
    job = PaperJob(
        sources=tuple(str(p.resolve()) for p in sources),
        out=str(out.resolve()),
        settings=settings,
        llm=llm,
        only=None if only is None else tuple(only),
    )
    return partial(run_task, job.model_dump_json())


def papers_pipeline(
    sources: Sequence[Path],
    out: Path,
    settings: BuildSettings,
    llm: LLMConfig | None,
    only: Sequence[str] | None = None,
) -> list[Any]:
    """The datatrove pipeline of a paper build, for an executor you launch (Slurm, Ray): one
    step, the papers of the task's rank (source k → task k mod tasks). ``settings`` is the
    build's :class:`BuildSettings` (:func:`papergym.recipes.run.prepare` returns it, with a
    discipline mix's selection as ``only``); ``llm`` None for the extractive builder."""
    return task_pipeline(STEP_NAME, _task(sources, out, settings, llm, only), ENGINE_SETTING)


def run_tasks_locally(
    sources: Sequence[Path],
    out: Path,
    settings: BuildSettings,
    llm: LLMConfig | None,
    *,
    tasks: int,
    workers: int,
    only: Sequence[str] | None = None,
) -> list[TaskReport]:
    """The papers on datatrove's LocalPipelineExecutor, ``tasks`` tasks, ``workers`` at once
    (``only``: a mix's selection); returns what each task did."""
    shutil.rmtree(out / TASKS_FOLDER, ignore_errors=True)
    task = _task(sources, out, settings, llm, only)
    run_local(STEP_NAME, task, ENGINE_SETTING, out, tasks, workers)
    return [
        TaskReport.model_validate_json(path.read_text(encoding="utf-8"))
        for path in sorted((out / TASKS_FOLDER).glob("*.json"))
    ]


def assembled(
    result: BuildResult, reports: Sequence[TaskReport], out: Path, llm: LLMConfig | None
) -> BuildResult:
    """The assembly's ``result`` as the run's: the papers the tasks built this run are not
    "finished before the run", and the usage of every task is added to the assembly's own."""
    built = sum(r.papers - r.resumed - len(r.failures) for r in reports)
    result.resumed = max(0, result.resumed - built)
    if llm is not None:
        own = result.usage if result.usage is not None else UsageTracker()
        write_usage(out, ASSEMBLY_USAGE, own)
        result.usage = merged_usage(out, llm)
    return result
