"""ARES past one machine: the same steps as tasks of datatrove's executors.

Why datatrove and not Ray Data (docs/ares.md has the longer answer): it is a light install
(datatrove, loguru, humanize), it was made for exactly this shape of work (pre-training corpora,
one task per slice of files, local / Slurm / Ray executors behind one interface), its Slurm
executor submits an array job with no cluster service to run, and the work here is I/O-bound LLM
calls, which one asyncio loop per task already overlaps: Ray Data's per-row operators and object
store would add nothing but weight.

A task is :func:`~.build.run_shards` restricted to the shards ``k`` with ``k % tasks == rank``,
writing the same shard files and progress records as the single-process run into the same
folder: the output is the same whatever ran it, and a run on one engine resumes on another.
datatrove's own completion marks are not used (``skip_completed=False``): a task whose documents
hit endpoint failures must run again, and the progress records already make finished shards free.

The datatrove plumbing (the step, the local executor, the workers tied to the command, the
usage files) is :mod:`papergym.recipes.distributed`'s, shared with the paper build.

Multi-node launches call :func:`prepare`, then give :func:`ares_pipeline` to datatrove's
SlurmPipelineExecutor or RayPipelineExecutor (docs/ares.md); ``papergym build`` run afterwards
finds every shard finished and only assembles instances.jsonl (turning later copies of a text
that tasks kept apart into duplicate drops, :mod:`.dedup`), the card and the summary. A task
loads the text keys of every shard finished before it starts, so most such copies are dropped
before any step runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from papergym.recipes.ares.build import (
    AresJob,
    ares_mode,
    ares_settings,
    open_corpus,
    run_shards,
    summarise,
)
from papergym.recipes.ares.output import check_ares_output, check_corpus, record_corpus
from papergym.recipes.ares.runner import AresResult
from papergym.recipes.distributed import (
    LOGS_FOLDER as LOGS_FOLDER,
)
from papergym.recipes.distributed import (
    USAGE_FOLDER as USAGE_FOLDER,
)
from papergym.recipes.distributed import (
    children_follow as children_follow,
)
from papergym.recipes.distributed import (
    follow as follow,
)
from papergym.recipes.distributed import (
    kept_this_run,
    merged_usage,
    run_local,
    task_pipeline,
    write_usage,
)
from papergym.recipes.distributed import (
    wait_for_end as wait_for_end,
)
from papergym.recipes.output import start_output

ENGINE_SETTING = "ares.engine"
STEP_NAME = "ARES shards"


def run_task(
    paths: Sequence[str], out: str, job_json: str, rank: int, world_size: int
) -> AresResult:
    """What one task does (also callable without datatrove): its shards, then its usage file.
    ``job_json`` is the build's :class:`~.build.AresJob` as JSON."""
    job = AresJob.model_validate_json(job_json)
    corpus = open_corpus([Path(p) for p in paths], job.ares)

    def owns(shard: int) -> bool:
        return shard % world_size == rank

    result = asyncio.run(run_shards(corpus, Path(out), job, owns=owns))
    if result.usage is not None:
        write_usage(Path(out), f"{rank:05d}", result.usage)
    return result


def _kept_by_task(paths: Sequence[str], out: str, job_json: str, rank: int, world_size: int) -> int:
    return run_task(paths, out, job_json, rank, world_size).kept_this_run


def _task(paths: Sequence[Path], out: Path, job: AresJob) -> partial[int]:
    """The task of a build as plain data (absolute paths, the job as JSON): it may run on
    another node, in another folder."""
    absolute = [str(p.resolve()) for p in paths]
    return partial(_kept_by_task, absolute, str(out.resolve()), job.model_dump_json())


def prepare(paths: Sequence[Path], out: Path, job: AresJob, config_yaml: str | None = None) -> None:
    """What ``papergym build`` does before any task runs: check the corpus files and the output
    folder (one-line BadInputError), then record the build's settings (and ``config_yaml``, the
    resolved configuration, as config.yaml). Call it before launching an executor yourself
    (Slurm, Ray)."""
    settings = ares_settings(job, ares_mode(job))
    check_ares_output(out, settings)
    corpus = open_corpus(paths, job.ares)
    check_corpus(out, corpus)
    start_output(out, settings, config_yaml)
    record_corpus(out, corpus)


def ares_pipeline(
    paths: Sequence[Path], out: Path, job: AresJob, *, command: int | None = None
) -> list[Any]:
    """The datatrove pipeline of an ARES build: one step, the ARES shards of the task's rank.

    Give it to any datatrove executor; ``tasks`` decides how shards are spread (shard k → task
    k mod tasks). Paths are made absolute: a Slurm or Ray task may start in another folder.
    ``command``: the pid of a local process each task ends with (:func:`follow`); none for
    Slurm or Ray, whose tasks outlive the launching script on purpose.
    """
    return task_pipeline(STEP_NAME, _task(paths, out, job), ENGINE_SETTING, command=command)


def run_datatrove_local(paths: Sequence[Path], out: Path, job: AresJob) -> AresResult:
    """The build on datatrove's LocalPipelineExecutor: ``ares.tasks`` tasks, ``ares.workers``
    processes at once; the summary is read back from the shards, usage summed over tasks."""
    task = _task(paths, out, job)
    run_local(STEP_NAME, task, ENGINE_SETTING, out, job.ares.tasks, job.ares.workers)
    result = summarise(out, job, ares_mode(job))
    result.usage = merged_usage(out, job.llm) if job.llm.configured else None
    if result.usage is not None:
        result.kept_this_run = kept_this_run(out)
    return result
