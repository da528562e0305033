"""ARES on datatrove's executors gives the instances of the single-process run."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from runner_support import instances, llm_config, scripted_server, write_corpus
from typer.testing import CliRunner

from papergym.cli import app
from papergym.recipes.ares.build import open_corpus, run_shards
from papergym.recipes.ares.distributed import run_datatrove_local, run_task
from papergym.recipes.ares.shards import ShardStore
from papergym.settings.models import PaperGymConfig


def single_process(corpus: Path, out: Path, config: PaperGymConfig) -> None:
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
