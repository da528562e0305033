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

Multi-node launches call :func:`prepare`, then give :func:`ares_pipeline` to datatrove's
SlurmPipelineExecutor or RayPipelineExecutor (docs/ares.md); ``papergym build`` run afterwards
finds every shard finished and only assembles instances.jsonl (turning later copies of a text
that tasks kept apart into duplicate drops, :mod:`.dedup`), the card and the summary. A task
loads the text keys of every shard finished before it starts, so most such copies are dropped
before any step runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import shutil
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.llm.config import LLMConfig
from papergym.llm.types import Usage
from papergym.llm.usage import UsageRow, UsageTracker
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
from papergym.recipes.output import start_output

USAGE_FOLDER = "usage"  # per task: the LLM usage of its latest run, summed for the summary
LOGS_FOLDER = "datatrove"


def _require_datatrove() -> None:
    try:
        import datatrove  # noqa: F401
    except ImportError:
        raise BadInputError(
            None,
            "ares.engine=datatrove needs datatrove: pip install 'papergym[ares-distributed]'",
        ) from None


def _task_class() -> type[Any]:
    """The datatrove step, defined on first use so that datatrove stays an optional extra."""
    from datatrove.pipeline.base import PipelineStep

    class AresShards(PipelineStep):  # type: ignore[misc]
        """One datatrove task: the ARES steps over the shards ``k % world_size == rank``."""

        name = "ARES shards"
        type = "PaperGym"

        def __init__(
            self, paths: Sequence[str], out: str, job_json: str, command: int | None = None
        ) -> None:
            super().__init__()
            self.paths = list(paths)
            self.out = out
            self.job_json = job_json  # plain data: the task may run on another node
            self.command = command  # the local command's pid: the task ends when it ends

        def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Generator[Any]:
            if self.command is not None:
                follow(self.command)
            result = run_task(self.paths, self.out, self.job_json, rank, world_size)
            self.stat_update("kept", value=result.kept_this_run)
            if data:
                yield from data

    return AresShards


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
        usage = json.dumps(result.usage.as_dict(), indent=1)
        write_text_atomic(Path(out) / USAGE_FOLDER / f"{rank:05d}.json", usage)
    return result


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
    _require_datatrove()
    step = _task_class()(
        [str(p.resolve()) for p in paths], str(out.resolve()), job.model_dump_json(), command
    )
    return [step]


def run_datatrove_local(paths: Sequence[Path], out: Path, job: AresJob) -> AresResult:
    """The build on datatrove's LocalPipelineExecutor: ``ares.tasks`` tasks, ``ares.workers``
    processes at once; the summary is read back from the shards, usage summed over tasks."""
    _require_datatrove()
    from datatrove.executor import LocalPipelineExecutor

    shutil.rmtree(out / USAGE_FOLDER, ignore_errors=True)
    command = os.getpid()
    executor = LocalPipelineExecutor(
        pipeline=ares_pipeline(paths, out, job, command=command),
        tasks=job.ares.tasks,
        workers=job.ares.workers,
        logging_dir=str((out / LOGS_FOLDER).resolve()),
        skip_completed=False,
    )
    with children_follow(command):
        executor.run()
    result = summarise(out, job, ares_mode(job))
    result.usage = merged_usage(out, job.llm) if job.llm.configured else None
    if result.usage is not None:
        result.kept_this_run = _kept_this_run(out)
    return result


# --- the workers end with the command ------------------------------------------------------------
#
# LocalPipelineExecutor runs the tasks in a multiprocess pool (forkserver workers) beside a
# manager process forked from the command. Killed by SIGTERM or SIGKILL, the command ends at
# once and nothing of it can stop them: they went on calling the LLM and writing shards. So each
# of them follows the command: a thread waits for the command's end (a pidfd on Linux, else a
# poll) and ends its process at once, as the kill would have ended a single-process build;
# shard files are written atomically and a shard in flight is done again by the next run.

_FOLLOWING: set[int] = set()  # the pids this process follows already
_FOLLOWED_BY_CHILDREN: int | None = None  # while set, a process forked from it follows it
POLL_SECONDS = 0.2


def follow(pid: int) -> None:
    """End this process as soon as process ``pid`` has ended (a daemon thread waits for it)."""
    if pid == os.getpid() or pid in _FOLLOWING:
        return  # a task run in the command's own process ends with it anyway
    _FOLLOWING.add(pid)

    def end_with_it() -> None:
        wait_for_end(pid)
        os._exit(1)  # as a kill: no cleanup that could write half a shard

    threading.Thread(target=end_with_it, name=f"follow-{pid}", daemon=True).start()


def wait_for_end(pid: int) -> None:
    """Return once process ``pid`` has ended."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already gone
    except (AttributeError, OSError):  # no pidfd here (not Linux, an old kernel): poll
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            except PermissionError:
                pass
            time.sleep(POLL_SECONDS)
    try:
        select.select([handle], [], [])  # readable once the process has ended
    finally:
        os.close(handle)


def _follow_the_parent() -> None:
    if _FOLLOWED_BY_CHILDREN is not None and os.getppid() == _FOLLOWED_BY_CHILDREN:
        follow(_FOLLOWED_BY_CHILDREN)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_follow_the_parent)


@contextmanager
def children_follow(pid: int) -> Iterator[None]:
    """While inside, processes forked from ``pid`` (datatrove's manager) follow it."""
    global _FOLLOWED_BY_CHILDREN
    _FOLLOWED_BY_CHILDREN = pid
    try:
        yield
    finally:
        _FOLLOWED_BY_CHILDREN = None


def _kept_this_run(out: Path) -> int:
    """Kept instances the tasks of the latest run built (datatrove's stats, summed)."""
    path = out / LOGS_FOLDER / "stats.json"
    try:
        stats = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    total = 0
    for step in stats:
        kept = step.get("stats", {}).get("kept") if isinstance(step, dict) else None
        if isinstance(kept, dict):
            total += int(kept.get("total", 0))
    return total


def merged_usage(out: Path, llm: LLMConfig) -> UsageTracker:
    """Every task's usage of the latest run as one tracker (for the usage table)."""
    tracker = UsageTracker(prices=dict(llm.prices))
    for path in sorted((out / USAGE_FOLDER).glob("*.json")):
        for row in json.loads(path.read_text(encoding="utf-8")):
            key = (str(row["stage"]), str(row["role"]), str(row["model"]))
            usage = Usage.model_validate({k: row[k] for k in Usage.model_fields if k in row})
            old = tracker.rows[key]
            cost = row.get("cost_usd")
            tracker.rows[key] = UsageRow(
                calls=old.calls + int(row["calls"]),
                cache_hits=old.cache_hits + int(row["cache_hits"]),
                usage=old.usage + usage,
                cost=None if cost is None or old.cost is None else old.cost + float(cost),
            )
    return tracker
