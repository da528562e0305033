"""Shard files, progress records, and a corpus that grows or changes under a build."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl
from papergym.recipes.ares.corpus import Corpus
from papergym.recipes.ares.documents import Document
from papergym.recipes.ares.output import check_corpus, record_corpus
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.runner import AresRunner
from papergym.recipes.ares.shards import ShardStore
from papergym.recipes.steps import Step
from papergym.records import BuildFailure, Drop


def draft(doc_id: str) -> AresDraft:
    return AresDraft.start(Document(id=doc_id, text=f"text of {doc_id}", source="c.jsonl"))


def test_a_shard_is_finished_by_its_progress_record_written_after_its_files(
    tmp_path: Path,
) -> None:
    store = ShardStore(tmp_path, 2)
    drop = Drop(source="c.jsonl", step="read", reason="empty document", paper_id="b")
    record = store.write(0, "offline", 2, [draft("a")], [drop], [])
    assert record.kept == 1 and record.dropped == 1 and store.records() == {0: record}
    assert read_jsonl(tmp_path / "kept-00000.jsonl", AresDraft) == [draft("a")]
    assert not (tmp_path / "failed-00000.jsonl").exists()
    (tmp_path / "progress" / "00001.json").write_text("{half a reco", encoding="utf-8")
    assert list(store.records()) == [0]  # an unreadable record is a shard not finished
    failure = BuildFailure(source="c.jsonl", step="llm:transport", reason="down", paper_id="c")
    store.write(1, "offline", 1, [], [], [failure])
    store.write(1, "offline", 1, [draft("c")], [], [])  # the retry clears the failure file
    assert not (tmp_path / "failed-00001.jsonl").exists()
    assert store.concatenate("kept", [1, 0], "kept.jsonl") == 2
    lines = (tmp_path / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["document"]["id"] for line in lines] == ["a", "c"]


async def keep(record: AresDraft) -> AresDraft:
    return record


def run(corpus: list[Path], out: Path, seen: list[str]) -> None:
    async def note(record: AresDraft) -> AresDraft:
        seen.append(record.document.id)
        return record

    runner = AresRunner(
        out=out,
        corpus=Corpus.open(corpus),
        steps=[Step("note", note)],
        start=AresDraft.start,
        finish=lambda d: d,
        kept_model=AresDraft,
        shard_size=4,
    )
    asyncio.run(runner.run())


def write(path: Path, start: int, stop: int) -> Path:
    with path.open("a", encoding="utf-8") as handle:
        for i in range(start, stop):
            handle.write(json.dumps({"id": f"r{i}", "text": f"row {i}"}) + "\n")
    return path


def test_rows_appended_to_the_corpus_reopen_the_last_shard_for_them_alone(tmp_path: Path) -> None:
    corpus, out = write(tmp_path / "c.jsonl", 0, 6), tmp_path / "out"
    seen: list[str] = []
    run([corpus], out, seen)
    assert ShardStore(out, 4).records()[1].documents == 2
    write(corpus, 6, 9)
    extra = write(tmp_path / "d.jsonl", 100, 102)
    check_corpus(out, Corpus.open([corpus, extra]))  # (nothing recorded yet: no complaint)
    seen.clear()
    run([corpus, extra], out, seen)
    assert seen == ["r6", "r7", "r8", "r100", "r101"]
    records = ShardStore(out, 4).records()
    assert [(k, r.documents, r.kept) for k, r in sorted(records.items())] == [
        (0, 4, 4),
        (1, 4, 4),
        (2, 3, 3),
    ]
    kept = [d.document.id for d in read_jsonl(out / "kept-00001.jsonl", AresDraft)]
    assert kept == ["r4", "r5", "r6", "r7"]


def test_a_corpus_changed_under_a_build_is_refused(tmp_path: Path) -> None:
    a, b = write(tmp_path / "a.jsonl", 0, 3), write(tmp_path / "b.jsonl", 3, 6)
    out = tmp_path / "out"
    out.mkdir()
    record_corpus(out, Corpus.open([a, b]))
    check_corpus(out, Corpus.open([a, b]))
    write(b, 6, 7)  # the last file grew: rows appended
    check_corpus(out, Corpus.open([a, b]))
    with pytest.raises(BadInputError, match=r"b\.jsonl was file 2 of the corpus, now nothing"):
        check_corpus(out, Corpus.open([a]))
    write(a, 9, 10)
    with pytest.raises(
        BadInputError, match=r"a\.jsonl changed \(90 → 120 bytes\)\); rows would move"
    ):
        check_corpus(out, Corpus.open([a, b]))


def test_a_limit_reads_the_first_rows_and_a_later_run_continues(tmp_path: Path) -> None:
    corpus, out = write(tmp_path / "c.jsonl", 0, 10), tmp_path / "out"
    seen: list[str] = []

    def limited(limit: int | None) -> None:
        async def note(record: AresDraft) -> AresDraft:
            seen.append(record.document.id)
            return record

        runner = AresRunner(
            out=out,
            corpus=Corpus.open([corpus]),
            steps=[Step("note", note)],
            start=AresDraft.start,
            finish=lambda d: d,
            kept_model=AresDraft,
            shard_size=4,
            limit=limit,
        )
        asyncio.run(runner.run())

    limited(6)
    assert seen == [f"r{i}" for i in range(6)]
    seen.clear()
    limited(None)
    assert seen == ["r6", "r7", "r8", "r9"]
    records = ShardStore(out, 4).records()
    assert [r.documents for _, r in sorted(records.items())] == [4, 4, 2]


def test_a_damaged_corpus_record_is_refused_not_taken_for_no_record(tmp_path: Path) -> None:
    # without the record a corpus changed under the build would go unseen
    a = write(tmp_path / "a.jsonl", 0, 3)
    out = tmp_path / "out"
    out.mkdir()
    record_corpus(out, Corpus.open([a]))
    [recorded] = [p for p in out.iterdir() if p.suffix == ".json"]
    recorded.write_text("{not json", encoding="utf-8")
    with pytest.raises(BadInputError, match="unreadable"):
        check_corpus(out, Corpus.open([a]))
