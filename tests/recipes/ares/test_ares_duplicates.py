"""Exact duplicates across shards: a resumed run and tasks of other ranks drop them too."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

from runner_support import good_text, instances, llm_config, scripted_server
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import read_jsonl
from papergym.recipes.ares.build import open_corpus, run_shards
from papergym.recipes.ares.corpus import Corpus
from papergym.recipes.ares.distributed import prepare, run_task
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.runner import AresRunner, finish_outputs
from papergym.recipes.ares.shards import ShardStore
from papergym.recipes.steps import Step
from papergym.records import Drop, Instance


def write_texts(path: Path, texts: list[str]) -> Path:
    rows = [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class Seen:
    def __init__(self) -> None:
        self.ids: list[str] = []

    async def run(self, draft: AresDraft) -> AresDraft:
        self.ids.append(draft.document.id)
        return draft


def offline(
    corpus: Path, out: Path, seen: Seen, *, limit: int | None = None, rank: int | None = None
) -> AresRunner[AresDraft]:
    return AresRunner(
        out=out,
        corpus=Corpus.open([corpus]),
        steps=[Step("see", seen.run)],
        start=AresDraft.start,
        finish=lambda d: d,
        kept_model=AresDraft,
        shard_size=2,
        concurrency=2,
        limit=limit,
        owns=None if rank is None else (lambda k: k % 2 == rank),
    )


def outcome(out: Path) -> tuple[list[str], Counter[tuple[str | None, str]]]:
    """Kept document ids and drops (id, reason) of every shard, after assembly."""
    store = ShardStore(out, 2)
    finish_outputs(store, "offline", store.records())
    kept = sorted(d.document.id for p in out.glob("kept-*.jsonl") for d in read_jsonl(p, AresDraft))
    drops = Counter((d.paper_id, d.reason) for d in read_jsonl(out / "dropped.jsonl", Drop))
    return kept, drops


def outcome_single(
    tmp_path: Path, corpus: Path
) -> tuple[list[str], Counter[tuple[str | None, str]]]:
    asyncio.run(offline(corpus, tmp_path / "single", Seen()).run())
    return outcome(tmp_path / "single")


TEXTS = ["alpha text", "beta text", "gamma text", "alpha text", "delta text", "beta text"]


def test_a_resumed_run_drops_duplicates_of_rows_in_shards_it_skips(tmp_path: Path) -> None:
    corpus = write_texts(tmp_path / "c.jsonl", TEXTS)
    first = Seen()
    asyncio.run(offline(corpus, tmp_path / "o", first, limit=2).run())  # shard 0 only
    again = Seen()
    result = asyncio.run(offline(corpus, tmp_path / "o", again).run())
    assert again.ids == ["d2", "d4"]  # d3 and d5 copy rows of shard 0, never read again
    assert result.drops == {("read", "duplicate"): 2}
    assert outcome(tmp_path / "o") == outcome_single(tmp_path, corpus)


def test_two_ranks_keep_a_text_apart_and_the_assembly_drops_the_later_copy(
    tmp_path: Path,
) -> None:
    corpus = write_texts(tmp_path / "c.jsonl", TEXTS)
    out = tmp_path / "ranks"
    for rank in (1, 0):  # rank 1 (shards 1) first: it cannot see rank 0's rows
        asyncio.run(offline(corpus, out, Seen(), rank=rank).run())
    kept, drops = outcome(out)
    assert kept == ["d0", "d1", "d2", "d4"]
    assert drops == {
        ("d3", "duplicate: the same text as row 0 of the corpus"): 1,
        ("d5", "duplicate: the same text as row 1 of the corpus"): 1,
    }
    assert (kept, drops) == outcome_single(tmp_path, corpus)
    records = ShardStore(out, 2).records()
    assert sum(r.kept for r in records.values()) == 4
    assert sum(r.dropped for r in records.values()) == 2
    assert outcome(out) == (kept, drops)  # assembling again changes nothing


def test_llm_tasks_of_two_ranks_give_unique_instance_ids(tmp_path: Path) -> None:
    """The instance id is a hash of the text: without the assembly both ranks' copies of a text
    would be one id twice, which ``papergym export`` refuses."""
    texts = [good_text(0), good_text(1), good_text(0), good_text(3)]  # row 2 copies row 0
    corpus = write_texts(tmp_path / "c.jsonl", texts)
    with scripted_server() as server:
        config = llm_config(server, None, shard_size=2)
        for rank in (1, 0):
            run_task([str(corpus)], str(tmp_path / "tasks"), config.model_dump_json(), rank, 2)
        asyncio.run(run_shards(open_corpus([corpus], config.ares), tmp_path / "single", config))
    store = ShardStore(tmp_path / "tasks", 2)
    assert finish_outputs(store, "llm", store.records()) == 1
    ids = [i.id for i in read_jsonl(tmp_path / "tasks" / "instances.jsonl", Instance)]
    assert len(ids) == len(set(ids)) == 3
    assert instances(tmp_path / "tasks") == instances(tmp_path / "single")


def test_the_build_after_a_launch_assembles_recounts_and_cards_without_duplicates(
    tmp_path: Path,
) -> None:
    """The documented multi-node flow: prepare, tasks of two ranks, then ``papergym build``."""
    texts = [good_text(0), good_text(1), good_text(0), good_text(3)]  # row 2 copies row 0
    corpus = write_texts(tmp_path / "c.jsonl", texts)
    out = tmp_path / "o"
    with scripted_server() as server:
        config = llm_config(server, None, shard_size=2)
        prepare([corpus], out, config)
        for rank in (1, 0):
            run_task([str(corpus)], str(out), config.model_dump_json(), rank, 2)
        server.reset_stats()
        args = ["build", str(corpus), "--recipe", "ares", "-o", str(out), "--json"]
        args += ["--base-url", server.base_url, "--model", "m", "--no-cache", "ares.shard_size=2"]
        result = CliRunner().invoke(app, args)
        assert server.request_count <= 3  # the endpoint check only: every shard was finished
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{\n") :])
    assert (summary["documents"], summary["kept"], summary["dropped"]) == (4, 3, 1)
    assert summary["drops"] == [{"step": "read", "reason": "duplicate", "count": 1}]
    ids = [i.id for i in read_jsonl(out / "instances.jsonl", Instance)]
    assert len(ids) == len(set(ids)) == 3
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))["stats"]
    assert (card["kept"], card["drops"]["by_reason"]) == (3, {"read": {"duplicate": 1}})
    assert sum(card["personas"].values()) == 3
