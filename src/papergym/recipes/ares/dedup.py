"""Exact duplicates across shards: the first copy of a text is kept, later copies are drops.

The runner drops a document whose text it has already seen, at step ``read``: in the rows it
reads, and in every shard already finished when it starts (their ``texts/<k>.jsonl``). What it
cannot see is a shard another process is doing at the same time (a datatrove task of another
rank), so two tasks may both keep a text. :func:`drop_later_duplicates`, run by the assembly
(the ``papergym build`` run that finds every shard finished), settles those: of the copies in
the texts files the earliest position wins, and every later copy's outcome (kept, a step's drop
or an endpoint failure) becomes the same ``read`` drop the single process would have written. The
build's output then does not depend on how shards were spread, and instance ids (a hash of the
text) stay unique, which ``papergym export`` requires.
"""

from __future__ import annotations

from pydantic import BaseModel

from papergym.recipes.ares.documents import Document
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.shards import (
    KEPT_FILE,
    Mode,
    ShardRecord,
    ShardStore,
    ShardText,
    text_key,
)
from papergym.records import BuildFailure, Drop, Instance


def duplicate_drop(document: Document | ShardText, first: int) -> Drop:
    """The drop of a document whose text row ``first`` of the corpus already has."""
    reason = f"duplicate: the same text as row {first} of the corpus"
    return Drop(source=document.source, step="read", reason=reason, paper_id=document.id)


def kept_key(kept: BaseModel) -> str:
    """The text key of a kept outcome: an instance's ``paper_id``, a draft's document text."""
    if isinstance(kept, Instance):
        return kept.paper_id
    if isinstance(kept, AresDraft):
        return text_key(kept.document.text)
    raise TypeError(f"not an ARES outcome: {type(kept).__name__}")


def drop_later_duplicates(store: ShardStore, mode: Mode, records: dict[int, ShardRecord]) -> int:
    """Turn every later copy of a text in the finished shards of ``mode`` into a duplicate drop;
    the number of kept outcomes removed. Idempotent: a shard is rewritten (its files, then its
    texts and record) only while it still lists a later copy."""
    shards = {k: r for k, r in records.items() if r.mode == mode}
    texts = {k: store.texts(k) for k in sorted(shards)}
    first: dict[str, int] = {}
    for entries in texts.values():
        for entry in entries:
            first[entry.key] = min(first.get(entry.key, entry.position), entry.position)
    removed = 0
    for shard, entries in texts.items():
        later = [e for e in entries if first[e.key] < e.position]
        if later:
            removed += _rewrite(store, mode, shards[shard], entries, later, first)
    return removed


def _rewrite(
    store: ShardStore,
    mode: Mode,
    record: ShardRecord,
    entries: list[ShardText],
    later: list[ShardText],
    first: dict[str, int],
) -> int:
    shard = record.shard
    keys = {e.key for e in later}
    ids = {e.id for e in later}
    kept_model: type[BaseModel] = Instance if mode == "llm" else AresDraft
    old_kept = store.read(KEPT_FILE[mode], shard, kept_model)
    kept = [k for k in old_kept if kept_key(k) not in keys]
    drops = [d for d in store.read("dropped", shard, Drop) if d.paper_id not in ids]
    drops += [duplicate_drop(e, first[e.key]) for e in later]
    failures = [f for f in store.read("failed", shard, BuildFailure) if f.paper_id not in ids]
    remaining = [e for e in entries if first[e.key] >= e.position]
    store.write(shard, mode, record.documents, kept, drops, failures, remaining)
    return len(old_kept) - len(kept)
