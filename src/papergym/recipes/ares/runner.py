"""The ARES runner: streams a corpus through a list of steps into sharded, resumable output.

Each document lives only in memory, for as long as its steps run: there is no folder per
document (a corpus has hundreds of thousands). Documents are read in batches on a worker thread,
at most ``concurrency`` are in flight (their LLM calls are bounded again by each endpoint's
``max_concurrency``), and at most ``MAX_OPEN_SHARDS`` shards are open at once, so memory does not
grow with the corpus. A shard is written (:class:`~.shards.ShardStore`) as soon as its last
document is done.

Resume: shards with a progress record are not read again (their rows are counted, not parsed);
an unfinished shard is done again, every LLM call of its finished documents answered by the
response cache; a shard finished with endpoint failures is reopened for those documents only.

Outcomes of a document: kept (an instance, or offline the draft the offline steps kept), a drop
(a step's :class:`Reject`, a reader's drop, output still invalid after the LLM layer's repairs:
``llm:output``, a duplicate id), or a failure of the endpoint (:class:`BuildFailure`): not a drop,
retried by the next run, as the paper build does.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel

from papergym.jsonl import iter_jsonl
from papergym.llm.client import LLMClient
from papergym.llm.usage import UsageTracker
from papergym.recipes.ares.corpus import Corpus, Entry
from papergym.recipes.ares.dedup import drop_later_duplicates, duplicate_drop
from papergym.recipes.ares.documents import Document
from papergym.recipes.ares.shards import (
    KEPT_FILE,
    Mode,
    ShardRecord,
    ShardStore,
    ShardText,
    text_key,
)
from papergym.recipes.steps import KEEP_NOTHING, ProgressHook, Step, drops_by_step, run_item
from papergym.records import BuildFailure, Drop

R = TypeVar("R", bound=BaseModel)
MAX_OPEN_SHARDS = 4  # shards in flight at once: bounds what is buffered behind a slow document
READ_BATCH = 64  # rows read per hop to the reading thread


# --- one run -------------------------------------------------------------------------------------


Kept = BaseModel
Outcome = Kept | Drop | BuildFailure


@dataclass
class AresResult:
    """What the build holds after this run (all shards), and what this run did."""

    out: Path
    mode: Mode
    documents: int = 0  # rows of the corpus (every shard)
    kept: int = 0
    dropped: int = 0
    failures: list[BuildFailure] = field(default_factory=list)
    drops: Counter[tuple[str, str]] = field(default_factory=Counter)  # (step, reason) → count
    kept_this_run: int = 0
    usage: UsageTracker | None = None
    resuming: bool = False  # the folder held this build before the run


@dataclass
class _Shard:
    """A shard being worked on: outcomes by position, until every row of it is in."""

    index: int
    outcomes: dict[int, Outcome] = field(default_factory=dict)
    pending: int = 0
    sealed: bool = False  # every row of the shard has been read
    rows: int = 0  # rows read (a reopened shard: those it is reopened for, or all of them)
    texts: list[ShardText] = field(default_factory=list)  # the documents it ran, by text key
    personas: dict[int, str] = field(default_factory=dict)  # position → persona, kept ones


@dataclass
class AresRunner(Generic[R]):
    """Runs ``steps`` over every document of ``corpus`` into the shards of ``out``.

    ``start`` makes the record the first step reads (``AresDraft.start``); ``finish`` turns the
    record the last step returns into what is kept (``to_instance`` in LLM mode; offline, the
    draft itself).
    """

    out: Path
    corpus: Corpus
    steps: Sequence[Step[R]]
    start: Callable[[Document], R]
    finish: Callable[[R], BaseModel]
    kept_model: type[BaseModel]  # what finish returns: read back when a shard is reopened
    mode: Mode = "offline"
    shard_size: int = 1000
    concurrency: int = 64
    llm: LLMClient | None = None
    progress: ProgressHook | None = None
    owns: Callable[[int], bool] | None = None  # which shards to do (a distributed task); None: all
    limit: int | None = None  # read the first ``limit`` rows only (a later run may go further)
    persona_of: Callable[[R], str | None] | None = None  # a kept record's persona, for the card

    def __post_init__(self) -> None:
        self.store = ShardStore(self.out, self.shard_size)
        self._open: dict[int, _Shard] = {}
        self._changed = asyncio.Event()
        self._seen: dict[bytes, int] = {}  # text key → first position (8 bytes, not hex)
        self._crash: Exception | None = None
        self._kept_this_run = 0

    async def run(self) -> AresResult:
        self._records = {k: r for k, r in self.store.records().items() if r.mode == self.mode}
        self._retry = {
            k: {f.paper_id for f in self.store.read("failed", k, BuildFailure)}
            for k, r in self._records.items()
            if r.failed
        }
        owns, size, records = self.owns, self.shard_size, self._records
        self._seed_seen()

        def wanted(position: int) -> bool:
            shard = self.store.shard_of(position)
            if owns is not None and not owns(shard):
                return False
            record = records.get(shard)
            # a finished shard is read again for its failures, or for rows appended after it
            return (
                record is None or bool(record.failed) or position - shard * size >= record.documents
            )

        self._tick("documents", None, "")
        tasks: set[asyncio.Task[None]] = set()
        semaphore = asyncio.Semaphore(self.concurrency)
        rows = self.corpus.entries(wanted, stop=self.limit)
        while batch := await asyncio.to_thread(_take, rows, READ_BATCH):
            for entry in batch:
                shard = self._enter(entry)
                item = self._admit(entry, shard)
                if item is None:
                    continue
                await self._room(shard.index)
                await semaphore.acquire()
                self._raise_crash(tasks)
                shard.pending += 1
                task = asyncio.create_task(self._document(item, entry.position, shard, semaphore))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        for shard in list(self._open.values()):
            shard.sealed = True
            self._maybe_finish(shard)
        while tasks:
            await asyncio.gather(*list(tasks))
        self._raise_crash(tasks)
        return self._result()

    def _raise_crash(self, tasks: set[asyncio.Task[None]]) -> None:
        """A step's unexpected error (a bug, not an endpoint failure) stops the run as a kill
        would: shards written so far stay, the ones in flight are done again next run."""
        if self._crash is None:
            return
        for task in tasks:
            task.cancel()
        raise self._crash

    # --- reading -----------------------------------------------------------------------------

    def _enter(self, entry: Entry) -> _Shard:
        """The open shard of ``entry``; every shard before it has had all its rows read."""
        index = self.store.shard_of(entry.position)
        for earlier in [s for k, s in self._open.items() if k < index and not s.sealed]:
            earlier.sealed = True
            self._maybe_finish(earlier)
        if index not in self._open:
            self._open[index] = _Shard(index)
        shard = self._open[index]
        shard.rows += 1
        return shard

    def _admit(self, entry: Entry, shard: _Shard) -> Document | None:
        """The document to run, or None when its outcome is already settled."""
        item = entry.item
        if isinstance(item, Drop):
            shard.outcomes[entry.position] = item
            return None
        # Exact duplicates (the same text) would make the same instance twice: the first is
        # kept. Shards finished earlier (this run, an earlier one, another task) count too.
        key = text_key(item.text)
        digest = bytes.fromhex(key)
        first = self._seen.get(digest)
        if first is not None and first < entry.position:
            shard.outcomes[entry.position] = duplicate_drop(item, first)
            return None
        if first is None or first > entry.position:  # a later copy already done: see assemble
            self._seen[digest] = entry.position
        shard.texts.append(
            ShardText(key=key, position=entry.position, id=item.id, source=item.source)
        )
        retry = self._retry.get(shard.index)
        if retry is not None and item.id not in retry:
            return None  # finished in an earlier run: its outcome is in the shard's files
        return item

    def _seed_seen(self) -> None:
        """The texts of every shard already finished, so that a resumed run, or a task, drops
        documents duplicating rows it does not read."""
        for texts in self.store.all_texts().values():
            for text in texts:
                digest = bytes.fromhex(text.key)
                first = self._seen.get(digest)
                if first is None or text.position < first:
                    self._seen[digest] = text.position

    async def _room(self, index: int) -> None:
        """Wait while ``index`` is MAX_OPEN_SHARDS or more shards past the oldest open one."""
        while self._open and index - min(self._open) >= MAX_OPEN_SHARDS and not self._crash:
            self._changed.clear()
            await self._changed.wait()

    # --- one document ------------------------------------------------------------------------

    async def _document(
        self, document: Document, position: int, shard: _Shard, semaphore: asyncio.Semaphore
    ) -> None:
        try:
            outcome, persona = await self._outcome(document)
        except Exception as error:  # raised by run(), not lost in a task nobody awaits
            self._crash = self._crash or error
            self._changed.set()
            return
        finally:
            semaphore.release()
        shard.outcomes[position] = outcome
        if persona is not None:
            shard.personas[position] = persona
        shard.pending -= 1
        self._tick("documents", None, document.id[:40])
        self._maybe_finish(shard)

    async def _outcome(self, document: Document) -> tuple[Outcome, str | None]:
        """The document's outcome, and its persona when it is kept (``persona_of``)."""
        outcome = await run_item(
            self.start(document),
            self.steps,
            KEEP_NOTHING,  # a document's steps run again when its shard is done again
            source=document.source,
            item_id=document.id,
        )
        if isinstance(outcome, Drop | BuildFailure):
            return outcome, None
        persona = self.persona_of(outcome) if self.persona_of is not None else None
        return self.finish(outcome), persona

    # --- shards ------------------------------------------------------------------------------

    def _maybe_finish(self, shard: _Shard) -> None:
        if not shard.sealed or shard.pending or shard.index not in self._open:
            return
        del self._open[shard.index]
        kept: list[BaseModel] = []
        drops: list[Drop] = []
        failures: list[BuildFailure] = []
        rows = shard.rows
        texts = {t.position: _with_persona(t, shard.personas) for t in shard.texts}
        record = self._records.get(shard.index)
        if record is not None:
            texts = {t.position: t for t in self.store.texts(shard.index)} | texts
            # a reopened shard: what earlier runs settled stays (failures left no outcome)
            kept.extend(self.store.read(KEPT_FILE[self.mode], shard.index, self.kept_model))
            drops.extend(self.store.read("dropped", shard.index, Drop))
            if not record.failed:  # rows appended to the corpus: the earlier ones were not read
                rows += record.documents
        for _, outcome in sorted(shard.outcomes.items()):
            if isinstance(outcome, Drop):
                drops.append(outcome)
            elif isinstance(outcome, BuildFailure):
                failures.append(outcome)
            else:
                kept.append(outcome)
                self._kept_this_run += 1
        self.store.write(shard.index, self.mode, rows, kept, drops, failures, list(texts.values()))
        self._changed.set()

    def _result(self) -> AresResult:
        result = collect_result(self.store, self.mode)
        result.kept_this_run = self._kept_this_run
        result.usage = self.llm.tracker if self.llm is not None else None
        return result

    def _tick(self, step: str, total: int | None, item: str) -> None:
        if self.progress is not None:
            self.progress(step, total, item)


def _with_persona(text: ShardText, personas: dict[int, str]) -> ShardText:
    persona = personas.get(text.position)
    return text if persona is None else text.model_copy(update={"persona": persona})


def _take(rows: Iterator[Entry], count: int) -> list[Entry]:
    return list(islice(rows, count))


def _iter(path: Path, model: type[R]) -> Iterator[R]:
    return iter_jsonl(path, model) if path.is_file() else iter(())


def collect_result(store: ShardStore, mode: Mode) -> AresResult:
    """The build's totals from its progress records and shard files (any engine's)."""
    from papergym.recipes.ares.pipeline import reason_kind

    mine = {k: r for k, r in store.records().items() if r.mode == mode}
    result = AresResult(
        out=store.out,
        mode=mode,
        documents=sum(r.documents for r in mine.values()),
        kept=sum(r.kept for r in mine.values()),
        dropped=sum(r.dropped for r in mine.values()),
    )
    for shard, record in sorted(mine.items()):
        if record.failed:
            result.failures.extend(store.read("failed", shard, BuildFailure))
        result.drops += drops_by_step(_iter(store.path("dropped", shard), Drop), reason_kind)
    return result


def finish_outputs(store: ShardStore, mode: Mode, records: dict[int, ShardRecord]) -> int:
    """The whole build's instances.jsonl (LLM mode), dropped.jsonl and failed.jsonl, after
    dropping the later copies of texts that shards done apart both kept (:mod:`.dedup`); the
    number of kept outcomes those drops removed."""
    removed = drop_later_duplicates(store, mode, records)
    shards = [k for k, r in records.items() if r.mode == mode]
    if mode == "llm":
        store.concatenate("instances", shards, "instances.jsonl")
    store.concatenate("dropped", shards, "dropped.jsonl")
    store.concatenate("failed", shards, "failed.jsonl")
    return removed
