"""The paper build past one machine (``build.engine=datatrove``): the papers as datatrove tasks.

Sources are built in a stable order (by relative path, :class:`~.reading.SourceReader`); source
``k`` goes to task ``k mod tasks`` (:func:`in_share`). A task runs the same
:class:`~.runner.Builder` as one process, restricted to its share, into the same (shared)
output folder: per-paper folders ``papers/<id>/`` and ``sources/`` records, the LLM response
cache. It assembles nothing; it leaves its endpoint failures in ``failures/<rank>.jsonl`` and its
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

from papergym.jsonl import read_jsonl, write_jsonl
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
FAILURES_FOLDER = "failures"  # per task: the papers its latest run could not finish
ASSEMBLY_USAGE = "assembly"  # the usage file of the command's own calls (its checks, the rest)


class PaperJob(BaseModel):
    """What a task needs to build its share: plain data, as it may run on another node."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sources: tuple[str, ...]  # absolute: a Slurm or Ray task may start in another folder
    out: str
    settings: BuildSettings
    llm: LLMConfig | None = None  # None: the extractive builder


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
    share = partial(in_share, rank=rank, tasks=world_size, limit=job.settings.limit)
    result = asyncio.run(_build_share(job, reader, share))
    write_jsonl(out / FAILURES_FOLDER / f"{rank:05d}.jsonl", result.failures)
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
    sources: Sequence[Path], out: Path, settings: BuildSettings, llm: LLMConfig | None
) -> partial[int]:
    """The task of a build as plain data (absolute paths, the job as JSON)."""
    job = PaperJob(
        sources=tuple(str(p.resolve()) for p in sources),
        out=str(out.resolve()),
        settings=settings,
        llm=llm,
    )
    return partial(run_task, job.model_dump_json())


def papers_pipeline(
    sources: Sequence[Path], out: Path, settings: BuildSettings, llm: LLMConfig | None
) -> list[Any]:
    """The datatrove pipeline of a paper build, for an executor you launch (Slurm, Ray): one
    step, the papers of the task's rank (source k → task k mod tasks). ``settings`` is the
    build's :class:`BuildSettings` (:func:`papergym.recipes.run.prepare` returns it); ``llm``
    None for the extractive builder."""
    return task_pipeline(STEP_NAME, _task(sources, out, settings, llm), ENGINE_SETTING)


def run_tasks_locally(
    sources: Sequence[Path],
    out: Path,
    settings: BuildSettings,
    llm: LLMConfig | None,
    *,
    tasks: int,
    workers: int,
) -> list[BuildFailure]:
    """The papers on datatrove's LocalPipelineExecutor, ``tasks`` tasks, ``workers`` at once;
    returns the papers the tasks could not finish (the endpoint failed)."""
    shutil.rmtree(out / FAILURES_FOLDER, ignore_errors=True)
    run_local(STEP_NAME, _task(sources, out, settings, llm), ENGINE_SETTING, out, tasks, workers)
    return [
        failure
        for path in sorted((out / FAILURES_FOLDER).glob("*.jsonl"))
        for failure in read_jsonl(path, BuildFailure)
    ]


def with_task_usage(result: BuildResult, out: Path, llm: LLMConfig) -> BuildResult:
    """``result`` (the assembly's) with the usage of every task of the run added to its own."""
    own = result.usage if result.usage is not None else UsageTracker()
    write_usage(out, ASSEMBLY_USAGE, own)
    result.usage = merged_usage(out, llm)
    return result
