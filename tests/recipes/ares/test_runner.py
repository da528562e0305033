"""The ARES runner: sharded output, drops by step, resume after a kill, endpoint failures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from runner_support import (
    FLAKY,
    SHORT,
    FlakyScript,
    instances,
    llm_config,
    scripted_server,
    write_corpus,
)

from papergym.jsonl import read_jsonl
from papergym.llm.client import LLMClient
from papergym.recipes.ares.build import AresJob, make_runner, open_corpus, run_shards
from papergym.recipes.ares.corpus import Corpus
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.runner import AresRunner
from papergym.recipes.ares.shards import ShardStore
from papergym.recipes.steps import Reject, Step
from papergym.records import BuildFailure, Drop


class Counting:
    """An offline step that drops documents holding "odd" and counts what it sees."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def run(self, draft: AresDraft) -> AresDraft | Reject:
        self.seen.append(draft.document.id)
        return Reject("odd: scripted") if "odd" in draft.document.text else draft


def offline_runner(
    corpus: Corpus, out: Path, step: Counting, size: int = 3
) -> AresRunner[AresDraft]:
    return AresRunner(
        out=out,
        corpus=corpus,
        steps=[Step("check", step.run)],
        start=AresDraft.start,
        finish=lambda d: d,
        kept_model=AresDraft,
        shard_size=size,
        concurrency=2,
    )


def test_shards_hold_each_rows_outcome_and_a_rerun_reads_no_finished_shard(tmp_path: Path) -> None:
    corpus_path = tmp_path / "c.jsonl"
    rows = [{"id": f"r{i}", "text": f"odd {i}" if i % 3 == 0 else f"even {i}"} for i in range(10)]
    rows[4]["text"] = ""  # a reader's drop, counted in its shard
    corpus_path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    step = Counting()
    result = asyncio.run(offline_runner(Corpus.open([corpus_path]), out, step).run())
    assert (result.documents, result.kept, result.dropped) == (10, 5, 5)
    assert result.drops == {("check", "odd"): 4, ("read", "empty document"): 1}
    store = ShardStore(out, 3)
    assert sorted(store.records()) == [0, 1, 2, 3]
    assert [d.document.id for d in read_jsonl(out / "kept-00001.jsonl", AresDraft)] == ["r5"]
    assert [d.paper_id for d in read_jsonl(out / "dropped-00001.jsonl", Drop)] == ["r3", "r4"]
    assert len(step.seen) == 9
    again = Counting()
    rerun = asyncio.run(offline_runner(Corpus.open([corpus_path]), out, again).run())
    assert again.seen == [] and (rerun.kept, rerun.dropped) == (5, 5)


def test_an_exact_duplicate_is_dropped_once_seen(tmp_path: Path) -> None:
    corpus_path = tmp_path / "c.jsonl"
    texts = ["alpha", "beta", "alpha"]
    corpus_path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), "utf-8")
    result = asyncio.run(
        offline_runner(Corpus.open([corpus_path]), tmp_path / "o", Counting()).run()
    )
    assert result.drops == {("read", "duplicate"): 1}
    (drop,) = read_jsonl(tmp_path / "o" / "dropped-00000.jsonl", Drop)
    assert drop.reason == "duplicate: the same text as row 0 of the corpus"


def test_open_shards_are_bounded_behind_a_slow_document(tmp_path: Path) -> None:
    """While the first document waits, at most MAX_OPEN_SHARDS shards are started."""
    corpus_path = tmp_path / "c.jsonl"
    corpus_path.write_text(
        "".join(json.dumps({"text": f"t{i}"}) + "\n" for i in range(40)), "utf-8"
    )
    release = asyncio.Event()
    started: list[str] = []

    async def slow_first(draft: AresDraft) -> AresDraft:
        started.append(draft.document.text)
        if draft.document.text == "t0":
            await release.wait()
        return draft

    runner = AresRunner(
        out=tmp_path / "o",
        corpus=Corpus.open([corpus_path]),
        steps=[Step("slow", slow_first)],
        start=AresDraft.start,
        finish=lambda d: d,
        kept_model=AresDraft,
        shard_size=2,
        concurrency=64,
    )

    async def go() -> int:
        task = asyncio.create_task(runner.run())
        for _ in range(50):
            await asyncio.sleep(0.01)
        seen = len(started)
        release.set()
        await task
        return seen

    assert asyncio.run(go()) == 8  # shards 0-3 of 2 rows, not all 40 rows
    assert len(ShardStore(tmp_path / "o", 2).records()) == 20


def test_llm_build_drops_by_step_and_counts_calls(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "c.jsonl", 8)
    with scripted_server() as server:
        config = llm_config(server, None, shard_size=3)
        result = asyncio.run(run_shards(open_corpus([corpus], config.ares), tmp_path / "o", config))
        calls = server.request_count
    assert (result.documents, result.kept, result.dropped) == (8, 6, 2)
    assert result.drops == {("prefilter", "min_words"): 2}
    assert result.usage is not None and result.usage.calls == calls == 6 * 5
    kept = instances(tmp_path / "o")
    assert len(kept) == 6 and all(i.source_kind == "document" for i in kept)
    assert any(c.weight < 0 for i in kept for c in i.rubric.specific)


class Killed(Exception):
    pass


def test_a_killed_run_resumes_without_repeating_llm_calls_or_instances(tmp_path: Path) -> None:
    corpus_path = write_corpus(tmp_path / "c.jsonl", 12, short_every=0)
    with scripted_server() as server:
        clean = llm_config(server, tmp_path / "cache-clean", shard_size=3, concurrency=2)
        asyncio.run(run_shards(open_corpus([corpus_path], clean.ares), tmp_path / "clean", clean))
        uninterrupted = server.request_count
    expected = instances(tmp_path / "clean")
    assert len(expected) == 12

    out = tmp_path / "out"
    with scripted_server() as server:
        config = llm_config(server, tmp_path / "cache", shard_size=3, concurrency=2)

        async def killed_at_d007() -> None:
            llm = LLMClient.from_config(config.llm)
            runner = make_runner(open_corpus([corpus_path], config.ares), out, config, llm)

            async def kill(draft: AresDraft) -> AresDraft:
                if draft.document.id == "d007":
                    raise Killed("the process is killed here")
                return draft

            runner.steps = [*runner.steps[:-1], Step("kill", kill), runner.steps[-1]]
            try:
                await runner.run()
            finally:
                await llm.aclose()

        with pytest.raises(Killed):
            asyncio.run(killed_at_d007())
        finished = sorted(ShardStore(out, 3).records())
        assert 0 in finished and 2 not in finished  # shard 2 (d006-d008) was in flight
        order = [json.dumps(r["messages"]) for r in server.requests]
        asked_before = set(order)
        server.reset_stats()
        result = asyncio.run(run_shards(open_corpus([corpus_path], config.ares), out, config))
        asked_again = [
            m for r in server.requests if (m := json.dumps(r["messages"])) in asked_before
        ]
        # Nothing answered before the kill is asked twice. The kill may cut one call of the
        # other document in flight (concurrency 2; d007 itself was between calls): only that
        # call, one of the last two asked, may be asked again.
        assert server.request_count > 0 and len(asked_again) <= 1
        assert set(asked_again) <= set(order[-2:])
        # (identical prompts of two documents may race past the cache in one run, not across)
        assert len(asked_before) + server.request_count <= uninterrupted + len(asked_again)
    assert result.kept == 12 and instances(out) == expected


def test_endpoint_failures_are_retried_next_run_not_dropped(tmp_path: Path) -> None:
    corpus_path = write_corpus(tmp_path / "c.jsonl", 6, short_every=0, flaky=frozenset({1, 4}))
    script = FlakyScript()
    out = tmp_path / "out"
    with scripted_server(script) as server:
        config = llm_config(server, tmp_path / "cache", retries=0, shard_size=3)
        first = asyncio.run(run_shards(open_corpus([corpus_path], config.ares), out, config))
        assert (first.kept, first.dropped) == (4, 0)
        assert sorted(f.paper_id for f in first.failures) == ["d001", "d004"]
        assert all(f.step == "llm:transport" for f in first.failures)
        assert read_jsonl(out / "failed-00000.jsonl", BuildFailure)[0].paper_id == "d001"
        script.down = False
        server.reset_stats()
        second = asyncio.run(run_shards(open_corpus([corpus_path], config.ares), out, config))
        # only the two failed documents are asked (the coverage prompt, which has no document
        # in it, was answered for another one and comes from the cache)
        assert 0 < server.request_count < 2 * 5
        assert all(FLAKY in json.dumps(r["messages"]) for r in server.requests)
    assert (second.kept, second.dropped, second.failures) == (6, 0, [])
    assert not (out / "failed-00000.jsonl").exists()
    assert len({i.id for i in instances(out)}) == 6


def test_offline_runs_the_offline_steps_and_keeps_drafts(tmp_path: Path) -> None:
    corpus_path = write_corpus(tmp_path / "c.jsonl", 4)
    config = AresJob.model_validate({"ares": {"shard_size": 2}})
    result = asyncio.run(
        run_shards(open_corpus([corpus_path], config.ares), tmp_path / "o", config)
    )
    assert (result.mode, result.kept, result.dropped) == ("offline", 3, 1)
    kept = [
        d for p in sorted((tmp_path / "o").glob("kept-*.jsonl")) for d in read_jsonl(p, AresDraft)
    ]
    assert all(d.domain == "medicine" and d.domain_choice is not None for d in kept)
    assert not list((tmp_path / "o").glob("instances-*"))
    assert not any(SHORT in d.document.text for d in kept)


@pytest.mark.slow
def test_a_build_killed_with_sigkill_resumes_to_the_uninterrupted_output(tmp_path: Path) -> None:
    """A real kill (SIGKILL, no cleanup) of ``papergym build`` after its first finished shard."""
    import signal
    import subprocess
    import sys
    import time

    from papergym.fakellm import FakeOpenAIServer
    from papergym.recipes.ares.scripted import AresScript

    corpus = write_corpus(tmp_path / "c.jsonl", 24, short_every=0)
    with FakeOpenAIServer(responder=AresScript(), latency=0.05) as server:

        def build(out: Path, cache: Path) -> list[str]:
            return [
                sys.executable, "-m", "papergym.cli", "build", str(corpus), "--recipe", "ares",
                "-o", str(out), "--base-url", server.base_url, "--model", "m",
                "--cache-dir", str(cache), "ares.shard_size=3", "ares.concurrency=2",
            ]  # fmt: skip

        subprocess.run(build(tmp_path / "clean", tmp_path / "cache-clean"), check=True)
        server.reset_stats()
        out = tmp_path / "out"
        process = subprocess.Popen(build(out, tmp_path / "cache"))
        deadline = time.monotonic() + 300
        while not (out / "progress" / "00000.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert process.returncode == -signal.SIGKILL
        finished = ShardStore(out, 3).records()
        assert 0 < len(finished) < 8
        shard_lines = [line for p in out.glob("*-*.jsonl") for line in p.read_text().splitlines()]
        assert all(line.endswith("}") for line in shard_lines)  # no half-written shard file
        asked_before = {json.dumps(r["messages"]) for r in server.requests}
        server.reset_stats()
        subprocess.run(build(out, tmp_path / "cache"), check=True)
        repeated = [r for r in server.requests if json.dumps(r["messages"]) in asked_before]
    # only calls in flight at the kill are asked again (their answers never arrived): at most
    # one per document in flight
    assert len(repeated) <= 2
    assert instances(out) == instances(tmp_path / "clean") and len(instances(out)) == 24
