"""ARES on datatrove's executors gives the instances of the single-process run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from runner_support import instances, llm_config, scripted_server, write_corpus
from typer.testing import CliRunner

from papergym.cli import app
from papergym.recipes.ares.build import AresJob, open_corpus, run_shards
from papergym.recipes.ares.distributed import run_datatrove_local, run_task
from papergym.recipes.ares.shards import ShardStore


def single_process(corpus: Path, out: Path, config: AresJob) -> None:
    asyncio.run(run_shards(open_corpus([corpus], config.ares), out, config))


def test_tasks_split_the_shards_and_together_write_the_single_process_output(
    tmp_path: Path,
) -> None:
    """Each task does the shards of its rank; their union is the single-process build."""
    corpus = write_corpus(tmp_path / "c.jsonl", 10)
    with scripted_server() as server:
        config = llm_config(server, None, shard_size=2)
        single_process(corpus, tmp_path / "single", config)
        for rank in (1, 0):
            run_task([str(corpus)], str(tmp_path / "tasks"), config.model_dump_json(), rank, 2)
            done = sorted(ShardStore(tmp_path / "tasks", 2).records())
            assert done == ([1, 3] if rank == 1 else [0, 1, 2, 3, 4])
    assert instances(tmp_path / "tasks") == instances(tmp_path / "single")
    assert len(instances(tmp_path / "single")) == 8


@pytest.mark.slow
def test_datatrove_with_two_workers_gives_the_single_process_instances(tmp_path: Path) -> None:
    pytest.importorskip("datatrove")
    corpus = write_corpus(tmp_path / "c.jsonl", 10)
    with scripted_server() as server:
        config = llm_config(server, None, shard_size=2, engine="datatrove", tasks=3, workers=2)
        single_process(corpus, tmp_path / "single", config)
        requests = server.request_count
        server.reset_stats()
        result = run_datatrove_local([corpus], tmp_path / "engine", config)
        assert result.failures == []
        assert server.request_count == requests  # no cache: the tasks asked for every answer
    assert sorted(ShardStore(tmp_path / "engine", 2).records()) == [0, 1, 2, 3, 4]
    assert instances(tmp_path / "engine") == instances(tmp_path / "single")
    assert (result.documents, result.kept, result.dropped) == (10, 8, 2)
    assert result.usage is not None and result.usage.calls == requests


@pytest.mark.slow
def test_the_command_runs_the_datatrove_engine(tmp_path: Path) -> None:
    pytest.importorskip("datatrove")
    corpus = write_corpus(tmp_path / "c.jsonl", 6)
    with scripted_server() as server:
        args = ["build", str(corpus), "--recipe", "ares", "-o", str(tmp_path / "o"), "--json"]
        args += ["--base-url", server.base_url, "--model", "m", "--no-cache"]
        args += ["ares.engine=datatrove", "ares.tasks=2", "ares.workers=2", "ares.shard_size=2"]
        result = CliRunner().invoke(app, args)
        calls = server.request_count
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{\n") :])
    assert (summary["documents"], summary["kept"], summary["kept_this_run"]) == (6, 5, 5)
    assert sum(int(row["calls"]) for row in summary["usage"]) == calls == 5 * 5
    assert len(instances(tmp_path / "o")) == 5


# --- the workers end with the command (issue 20, item 13) ----------------------------------------


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie nobody reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def descendants(pid: int) -> set[int]:
    """Every process under ``pid``, from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def wait_until(check: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


PARENT = """
import multiprocessing, os, subprocess, sys, time
from papergym.recipes.ares.distributed import children_follow
follower = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
with children_follow(os.getpid()):
    forked = multiprocessing.get_context("fork").Process(target=time.sleep, args=(120,))
    forked.start()
print(follower.pid, forked.pid, flush=True)
time.sleep(120)
"""
FOLLOWER = """
import os, sys, time
from pathlib import Path
from papergym.recipes.ares.distributed import follow
follow(os.getppid())
Path(sys.argv[1]).touch()
time.sleep(120)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_follower_and_a_forked_child_end_with_the_process_they_follow(
    tmp_path: Path, sig: signal.Signals
) -> None:
    ready = tmp_path / "following"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, FOLLOWER, str(ready)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(alive(p) for p in pids)
        assert wait_until(ready.exists, 60)
        parent.send_signal(sig)
        parent.wait()
        assert wait_until(lambda: not any(alive(p) for p in pids), 20), "still running"
    finally:
        parent.kill()
        for pid in descendants(parent.pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow  # the workers import PaperGym and MiniLM before their first call
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killing_the_command_stops_the_datatrove_workers(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """On main the workers went on calling the LLM and writing shards after the command was
    killed; now every process under the command ends with it, and the next run resumes."""
    pytest.importorskip("datatrove")
    from papergym.fakellm import FakeOpenAIServer
    from papergym.recipes.ares.scripted import AresScript

    corpus = write_corpus(tmp_path / "c.jsonl", 24, short_every=0)
    out = tmp_path / "out"
    with FakeOpenAIServer(responder=AresScript(), latency=0.2) as server:
        command = [
            sys.executable, "-m", "papergym.cli", "build", str(corpus), "--recipe", "ares",
            "-o", str(out), "--base-url", server.base_url, "--model", "m", "--no-cache",
            "ares.engine=datatrove", "ares.tasks=4", "ares.workers=2", "ares.shard_size=2",
            "ares.concurrency=1",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            assert wait_until(lambda: server.request_count >= 8, 300)
            under = descendants(process.pid)
            assert len(under) >= 3  # manager, forkserver, workers
            process.send_signal(sig)
            process.wait()
            assert wait_until(lambda: not any(alive(p) for p in under), 10), [
                p for p in under if alive(p)
            ]
            asked = server.request_count
            records = sorted((out / "progress").glob("*.json"))
            time.sleep(3)
            assert server.request_count == asked  # nobody calls the LLM any more
            assert sorted((out / "progress").glob("*.json")) == records
        finally:
            for pid in descendants(process.pid):
                os.kill(pid, signal.SIGKILL)
            process.kill()
