"""Builds past one machine: any build's work as the tasks of datatrove's executors.

Shared by the ARES corpus build (:mod:`papergym.recipes.ares.distributed`) and the paper build
(:mod:`papergym.recipes.paper_tasks`). A build here is a function ``task(rank, world_size)``
that does its rank's share of the work into the shared output folder and returns how many
instances it kept; :func:`task_pipeline` wraps it as datatrove's one pipeline step, and
:func:`run_local` runs that on datatrove's LocalPipelineExecutor with the workers tied to the
command (:func:`follow`). Each task writes its LLM usage under ``usage/`` (:func:`write_usage`),
summed for the summary by :func:`merged_usage`.

Why datatrove (docs/ares.md has the longer answer): a light install, made for work cut into
tasks over files, one interface for local, Slurm and Ray executors, and a Slurm executor that
needs no cluster service. datatrove's own completion marks are not used (``skip_completed`` is
False): a task whose items hit endpoint failures must run again, and each build's own resume
records already make finished work free.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.llm.config import LLMConfig
from papergym.llm.usage import UsageTracker

USAGE_FOLDER = "usage"  # per task: the LLM usage of its latest run, summed for the summary
LOGS_FOLDER = "datatrove"
KEPT_STAT = "kept"  # the datatrove stat a task reports its kept instances under

Task = Callable[[int, int], int]
"""``task(rank, world_size)``: one task's share of a build; returns the instances it kept.
Must pickle (a module-level function, or a functools.partial of one): it crosses processes."""


def require_datatrove(setting: str) -> None:
    """A one-line BadInputError naming ``setting`` (e.g. ``build.engine``) without datatrove."""
    try:
        import datatrove  # noqa: F401
    except ImportError:
        raise BadInputError(
            None, f"{setting}=datatrove needs datatrove: pip install 'papergym[ares-distributed]'"
        ) from None


def _step_class() -> type[Any]:
    """The datatrove step, defined on first use so that datatrove stays an optional extra."""
    from datatrove.pipeline.base import PipelineStep

    class PaperGymTasks(PipelineStep):  # type: ignore[misc]
        """One datatrove task: ``task(rank, world_size)``."""

        type = "PaperGym"

        def __init__(self, name: str, task: Task, command: int | None = None) -> None:
            super().__init__()
            self.name = name
            self.task = task
            self.command = command  # the local command's pid: the task ends when it ends

        def run(self, data: Any = None, rank: int = 0, world_size: int = 1) -> Generator[Any]:
            if self.command is not None:
                follow(self.command)
            self.stat_update(KEPT_STAT, value=self.task(rank, world_size))
            if data:
                yield from data

    return PaperGymTasks


def task_pipeline(name: str, task: Task, setting: str, *, command: int | None = None) -> list[Any]:
    """The datatrove pipeline of a build: one step running ``task`` for the task's rank.

    Give it to any datatrove executor. ``setting`` names the engine setting in the error when
    datatrove is missing; ``command``: the pid of a local process each task ends with
    (:func:`follow`); none for Slurm or Ray, whose tasks outlive the launching script on purpose.
    """
    require_datatrove(setting)
    return [_step_class()(name, task, command)]


def run_local(name: str, task: Task, setting: str, out: Path, tasks: int, workers: int) -> None:
    """Run ``task`` as ``tasks`` tasks, ``workers`` processes at once, on datatrove's
    LocalPipelineExecutor; the previous run's usage files are cleared first, the logs go to
    ``out/datatrove``, and every process under the command ends with it."""
    require_datatrove(setting)
    from datatrove.executor import LocalPipelineExecutor

    shutil.rmtree(out / USAGE_FOLDER, ignore_errors=True)
    command = os.getpid()
    executor = LocalPipelineExecutor(
        pipeline=task_pipeline(name, task, setting, command=command),
        tasks=tasks,
        workers=workers,
        logging_dir=str((out / LOGS_FOLDER).resolve()),
        skip_completed=False,
    )
    with children_follow(command):
        executor.run()


# --- the workers end with the command ------------------------------------------------------------
#
# LocalPipelineExecutor runs the tasks in a multiprocess pool (forkserver workers) beside a
# manager process forked from the command. Killed by SIGTERM or SIGKILL, the command ends at
# once and nothing of it can stop them: they went on calling the LLM and writing results. So
# each of them follows the command: a thread waits for the command's end (a pidfd on Linux, else
# a poll) and ends its process at once, as the kill would have ended a single-process build;
# results are written atomically and work in flight is done again by the next run.

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
        os._exit(1)  # as a kill: no cleanup that could write half a result

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


# --- what the tasks did ----------------------------------------------------------------------------


def kept_this_run(out: Path) -> int:
    """Kept instances the tasks of the latest run built (datatrove's stats, summed)."""
    path = out / LOGS_FOLDER / "stats.json"
    try:
        stats = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    total = 0
    for step in stats:
        kept = step.get("stats", {}).get(KEPT_STAT) if isinstance(step, dict) else None
        if isinstance(kept, dict):
            total += int(kept.get("total", 0))
    return total


def write_usage(out: Path, name: str, tracker: UsageTracker) -> None:
    """Save one task's (or the assembly's) usage as ``usage/<name>.json``."""
    usage = json.dumps(tracker.as_dict(), indent=1)
    write_text_atomic(out / USAGE_FOLDER / f"{name}.json", usage)


def merged_usage(out: Path, llm: LLMConfig) -> UsageTracker:
    """Every task's usage of the latest run as one tracker (for the usage table), every
    counter kept: the rows one process would have counted."""
    saved = [
        UsageTracker.from_rows(json.loads(path.read_text(encoding="utf-8")), dict(llm.prices))
        for path in sorted((out / USAGE_FOLDER).glob("*.json"))
    ]
    return UsageTracker.merged(UsageTracker(prices=dict(llm.prices)), *saved)
