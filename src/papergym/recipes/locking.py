"""One builder at a time per paper folder, across processes and machines.

Two sources with the same content are one paper, built into one folder. In one process the
second is dropped as a duplicate before it is built; the tasks of a distributed build
(:mod:`.paper_tasks`) each see only their own share of the sources, so two tasks can be given
the same paper. A lock file in the paper's folder makes the second wait for the first and then
find the paper finished: no call is asked twice, and the steps of one paper never mix two
tasks' answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from filelock import FileLock, Timeout

LOCK_NAME = ".building.lock"
POLL_S = 0.2
"""How often a task waiting for another's paper looks again (the event loop keeps running)."""


@asynccontextmanager
async def building(folder: Path) -> AsyncIterator[None]:
    """Hold ``folder``'s lock while its paper is built; wait without blocking the event loop.

    An OS lock (``flock``) is released by the kernel when its holder dies, so a killed build
    leaves no stale lock. Where the filesystem has no such locks, the paper is built unlocked
    (as before): a lock file that outlives a killed holder would stop every later build.
    """
    lock = FileLock(folder / LOCK_NAME, thread_local=False, fallback_to_soft=False)
    locked = await _acquire(lock)
    try:
        yield
    finally:
        if locked:
            lock.release()


async def _acquire(lock: FileLock) -> bool:
    """Wait for ``lock``, polling; False where the filesystem cannot lock at all."""
    while True:
        try:
            lock.acquire(blocking=False)
            return True
        except Timeout:
            await asyncio.sleep(POLL_S)
        except (NotImplementedError, OSError):  # no flock here (some NFS set-ups)
            return False
