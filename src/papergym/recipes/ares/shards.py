"""Sharded ARES output and its progress record.

Documents are numbered by their position in the corpus stream (:mod:`.corpus`); shard ``k`` holds
the outcomes of positions ``k*shard_size`` to ``(k+1)*shard_size - 1``. Layout of ``OUT/``::

    build.yaml, config.yaml     the settings a resumed build must match; the resolved config
    corpus.json                 the corpus files and their sizes (a changed corpus is refused)
    instances-00000.jsonl       the instances of shard 0 (LLM mode)
    kept-00000.jsonl            offline mode: the drafts the offline steps kept (no instance yet)
    dropped-00000.jsonl         each document of shard 0 a step dropped: source, step, reason, id
    failed-00000.jsonl          documents the LLM endpoint failed on: retried by the next run
    texts/00000.jsonl           the content key, position and id of every document shard 0 ran
                                (not the read drops), and the persona of those kept: what
                                later shards, a resumed run and other tasks compare texts
                                against (exact duplicates), and the card's persona counts
    progress/00000.json         the progress record of shard 0, written last
    instances.jsonl, dropped.jsonl, failed.jsonl   every shard's, concatenated at the end
    card.md, card.json          the build's card (:mod:`.card`), written at the end

A shard is finished once ``progress/<k>.json`` exists; its files are written (atomically) before
it, so a run killed at any point loses at most the shards in flight, whose documents the next run
does again with every LLM answer from the response cache. A shard finished with failures is
reopened by the next run for the failed documents only; its other outcomes are kept as written.
One record per shard, not one file for the whole run, lets the workers of a distributed run
(:mod:`.distributed`) finish shards side by side without sharing a file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from papergym.jsonl import create_temp_file, iter_jsonl, write_jsonl, write_text_atomic
from papergym.records import BuildFailure, Drop, Record, content_hash

Mode = Literal["offline", "llm"]
M = TypeVar("M", bound=BaseModel)
PROGRESS = "progress"
TEXTS = "texts"
KEPT_FILE: dict[Mode, str] = {"llm": "instances", "offline": "kept"}


class ShardRecord(Record):
    """The progress record of one finished shard."""

    shard: int
    mode: Mode
    documents: int  # rows of the corpus in the shard
    kept: int
    dropped: int
    failed: int


class ShardText(Record):
    """A document a shard ran (not a read drop), by the content key of its text."""

    key: str  # text_key(document.text)
    position: int
    id: str
    source: str
    persona: str | None = None  # a kept document's target persona (for the card)


def text_key(text: str) -> str:
    """The key exact duplicates share: equal texts, equal keys. The same digest as an ARES
    instance's ``paper_id`` (:func:`.pipeline.to_instance`), so an instance is found by it."""
    return content_hash({"text": text})


def _position(text: ShardText) -> int:
    return text.position


def shard_file(kind: str, shard: int) -> str:
    return f"{kind}-{shard:05d}.jsonl"


@dataclass(frozen=True)
class ShardStore:
    """The shards of one output folder."""

    out: Path
    shard_size: int

    def shard_of(self, position: int) -> int:
        return position // self.shard_size

    def path(self, kind: str, shard: int) -> Path:
        return self.out / shard_file(kind, shard)

    def records(self) -> dict[int, ShardRecord]:
        """Every progress record; one that cannot be read is a shard not finished."""
        records: dict[int, ShardRecord] = {}
        folder = self.out / PROGRESS
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            try:
                record = ShardRecord.model_validate_json(path.read_bytes())
            except (OSError, ValidationError):
                continue
            records[record.shard] = record
        return records

    def read(self, kind: str, shard: int, model: type[M]) -> list[M]:
        path = self.path(kind, shard)
        return list(iter_jsonl(path, model)) if path.is_file() else []

    def texts_path(self, shard: int) -> Path:
        return self.out / TEXTS / f"{shard:05d}.jsonl"

    def texts(self, shard: int) -> list[ShardText]:
        path = self.texts_path(shard)
        return list(iter_jsonl(path, ShardText)) if path.is_file() else []

    def all_texts(self) -> dict[int, list[ShardText]]:
        """Every shard's text keys (a shard killed before its record may have some: harmless,
        its documents run again at the same positions)."""
        folder = self.out / TEXTS
        paths = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
        return {int(p.stem): list(iter_jsonl(p, ShardText)) for p in paths if p.stem.isdigit()}

    def write(
        self,
        shard: int,
        mode: Mode,
        documents: int,
        kept: list[BaseModel],
        drops: list[Drop],
        failures: list[BuildFailure],
        texts: list[ShardText] | None = None,
    ) -> ShardRecord:
        """Write a finished shard's files, then its progress record (which marks it finished)."""
        if texts is not None:
            ordered = sorted(texts, key=_position)
            write_jsonl(self.texts_path(shard), ordered)
        write_jsonl(self.path(KEPT_FILE[mode], shard), kept)
        write_jsonl(self.path("dropped", shard), drops)
        if failures:
            write_jsonl(self.path("failed", shard), failures)
        else:
            self.path("failed", shard).unlink(missing_ok=True)
        if mode == "llm":  # an offline run's drafts, superseded by the instances
            self.path(KEPT_FILE["offline"], shard).unlink(missing_ok=True)
        record = ShardRecord(
            shard=shard,
            mode=mode,
            documents=documents,
            kept=len(kept),
            dropped=len(drops),
            failed=len(failures),
        )
        write_text_atomic(self.out / PROGRESS / f"{shard:05d}.json", record.model_dump_json())
        return record

    def concatenate(self, kind: str, shards: Iterable[int], target: str) -> int:
        """``OUT/<target>`` from every shard's ``<kind>`` file, streamed; the line count."""
        fd, tmp = create_temp_file(self.out / target)
        count = 0
        try:
            with os.fdopen(fd, "wb") as handle:
                for shard in sorted(shards):
                    for line in self._lines(self.path(kind, shard)):
                        handle.write(line)
                        count += 1
            os.replace(tmp, self.out / target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return count

    @staticmethod
    def _lines(path: Path) -> Iterator[bytes]:
        if not path.is_file():
            return
        with path.open("rb") as handle:
            for line in handle:
                if line.strip():
                    yield line if line.endswith(b"\n") else line + b"\n"
