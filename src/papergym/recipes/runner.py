"""The build runner: owns the output folder, resume, concurrency, drops and progress.

It runs any recipe's list of steps (:mod:`papergym.recipes.steps`; the lists are in
:mod:`papergym.recipes.pipeline`) over the papers of the sources given. Layout of ``OUT/``::

    build.yaml                  the settings that decide the output (the models and their
                                normalised endpoints, no credentials): a resumed build must
                                match them (earlier releases: config.yaml)
    config.yaml                 the resolved configuration of the command, secrets masked
    sources/<key>.json          per source read: relative path, fingerprint, paper id or failure
    papers/<paper_id>/          per paper: paper.json, one <field>.json per finished step
                                (stages.json, question.json, ...), then instance.json or
                                drop.json; screened.json holds the overlap screen's verdicts
    instances.jsonl             every instance, assembled from papers/ at the end
    dropped.jsonl               every rejection of a paper: source, step, reason
    failed.jsonl                papers this run could not finish because the endpoint failed
    card.md, card.json          the dataset card
    tasks/, usage/, datatrove/  build.engine=datatrove: what each task did (its endpoint
                                failures), its LLM usage, datatrove's logs
                                (:mod:`papergym.recipes.paper_tasks`)

A paper is finished once it has instance.json or drop.json, written atomically. A re-run reads
each source only when it reaches it and not at all when ``sources/`` knows it (same fingerprint):
a finished paper costs a stat of its files, an unfinished one continues from its last finished
step, and the LLM response cache makes any repeated call free, so killing a build at any point
and running the same command again finishes it with no duplicates and no repeated calls.

A drop is a property of the paper: a step's :class:`~papergym.recipes.steps.Reject` (a failed gate),
output still invalid after the LLM layer's repairs ("llm:output"), LaTeX that cannot be read
("ingest"). A failure of the endpoint (unreachable, 5xx or 4xx after retries, an answer still
truncated after a larger budget, the budget spent) is not: such a paper is left unfinished, listed
in failed.jsonl for this run, and retried by the next run.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from papergym.errors import BadInputError
from papergym.jsonl import (
    RereadRecords,
    remove_stale_temp_files,
    reread_jsonl,
    write_jsonl,
    write_text_atomic,
)
from papergym.llm.client import LLMClient
from papergym.llm.usage import UsageTracker
from papergym.recipes.draft import PaperDraft
from papergym.recipes.locking import building
from papergym.recipes.mix import UNKNOWN, source_disciplines
from papergym.recipes.output import BuildSettings as BuildSettings
from papergym.recipes.output import check_output as check_output
from papergym.recipes.output import prepare_output as prepare_output
from papergym.recipes.output import settings_for as settings_for
from papergym.recipes.output import start_output as start_output
from papergym.recipes.pipeline import LeakagePolicy, recipe_steps
from papergym.recipes.reading import SourceReader
from papergym.recipes.steps import (
    ProgressHook,
    Step,
    StepFolder,
    drops_by_step,
    dump_record,
    run_item,
)
from papergym.records import (
    BuildFailure,
    Drop,
    Instance,
    Paper,
    content_hash,
)
from papergym.redact import redact

# Steps under which older builds saved endpoint failures as drop.json ("llm:" + the error class
# name without LLM/Error, lower-cased). Such a drop did not come from the paper: on resume the
# paper is treated as unfinished and built again. "llm:output" (invalid output after the repairs)
# stays a drop, and this version never writes these steps to drop.json.
RETRIED_DROP_STEPS: frozenset[str] = frozenset(
    {"llm:transport", "llm:truncated", "llm:budgetexceeded", "llm:llm"}
)

SCREEN_BATCH = 256
"""Instances the overlap screen embeds at once at the end of a build (bounds its memory)."""


@dataclass
class BuildResult:
    # Read from instances.jsonl on each pass (a build's memory must not grow with its corpus):
    # iterate it before removing ``out`` (its length alone is kept in memory).
    instances: Sequence[Instance]
    drops: list[Drop]
    papers: int
    usage: UsageTracker | None
    resumed: int = 0
    out: Path = Path()
    failures: list[BuildFailure] = field(default_factory=list)
    resuming: bool = False  # the folder held this build before the run
    warnings: tuple[str, ...] = ()  # one line each, for the summary (a mix's shortfalls)

    def drops_by_step(self) -> Counter[tuple[str, str]]:
        """How many papers each step dropped, and why (:func:`~.steps.drops_by_step`)."""
        return drops_by_step(self.drops)


def _batched(records: Iterable[Instance], size: int) -> Iterator[list[Instance]]:
    """``records`` in lists of ``size`` (the last may be shorter); ``itertools.batched`` is 3.12+."""
    batch: list[Instance] = []
    for record in records:
        batch.append(record)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# --- per-paper records -------------------------------------------------------------------------------


def _save(path: Path, record: BaseModel) -> None:
    write_text_atomic(path, dump_record(record))


def _load(path: Path, model: type[Any]) -> Any:
    return model.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def _final_drop(folder: Path) -> Drop | None:
    """The paper's drop, unless it is an endpoint failure recorded as a drop by an older build."""
    drop: Drop | None = _load(folder / "drop.json", Drop)
    if drop is None or drop.step in RETRIED_DROP_STEPS:
        return None
    return drop.model_copy(update={"reason": redact(drop.reason)})


def _relocate_paper(folder: Path, source: str) -> None:
    """paper.json with its local source path made relative, as the rest of the folder has it.

    Done on the text: the file may come from a version whose Paper had other fields.
    """
    path = folder / "paper.json"
    try:
        text = path.read_text(encoding="utf-8")
        old = json.loads(text)["meta"]["source_path"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if isinstance(old, str) and old != source and "/" in old:
        quoted = json.dumps(old, ensure_ascii=False)[1:-1]
        write_text_atomic(path, text.replace(quoted, json.dumps(source, ensure_ascii=False)[1:-1]))


def open_sources(sources: Sequence[Path] | SourceReader, out: Path) -> SourceReader:
    """The sources of a build, checked before anything is written.

    A SOURCE that does not exist or holds no LaTeX, or sources of which not one paper can be
    read, is a :class:`BadInputError` (one line naming the path). Sources are read in order only
    until the first readable one (or one an earlier run of ``out`` read); the rest are read
    lazily by :class:`Builder`. Sources already listed (a :class:`SourceReader`) are checked
    as they are.
    """
    reader = sources if isinstance(sources, SourceReader) else SourceReader.discover(sources, out)
    failures: list[tuple[Path, str]] = []
    for index, (source, _) in enumerate(reader.sources):
        opened = reader.prefetch(index)
        if opened.entry.failure is None:
            return reader
        failures.append((source.path, opened.entry.failure))
    if not failures:
        raise BadInputError(None, "no paper to build in the sources given")
    path, reason = failures[0]
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    raise BadInputError(path, f"no paper could be read: {reason}{more}")


class Screened(BaseModel):
    """An instance with the overlap screen's verdicts, and the hash of the one screened."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    of: str
    instance: Instance


@dataclass
class _Run:
    """What one run has reached so far, in build order."""

    items: list[tuple[str, str]] = field(default_factory=list)  # (relative source, paper id)
    drops: list[Drop] = field(default_factory=list)  # sources that gave no paper to build
    seen: dict[str, str] = field(default_factory=dict)  # paper id → source that gave it first
    resumed: int = 0
    tasks: list[asyncio.Task[BuildFailure | None]] = field(default_factory=list)


@dataclass
class Builder:
    """Runs one build: reads each source when it is reached, runs the recipe's steps on each
    paper (resuming from the last finished step), then assembles the output files.

    ``steps`` defaults to the recipe's list (:func:`papergym.recipes.pipeline.recipe_steps`); any
    list of steps over :class:`PaperDraft` ending in one that produces ``instance`` runs here.
    """

    out: Path
    settings: BuildSettings
    llm: LLMClient | None = None
    progress: ProgressHook | None = None
    steps: Sequence[Step[PaperDraft]] | None = None
    # Relative source → discipline label for the instances' domain (None: from each paper's
    # metadata.json categories, where it has them; otherwise the builder's own guess stays).
    disciplines: Mapping[str, str] | None = None
    # A task of a distributed build (:mod:`.paper_tasks`): the source indices (in build order)
    # it reads and builds; the others it does not touch, and it assembles nothing (the
    # assembly is the command's). None: every source, then the assembly.
    share: Callable[[int], bool] | None = None
    # The assembly of a distributed build: the source indices whose unfinished paper it builds
    # itself (those no task was given); the others' it leaves unfinished. None: every one.
    builds: Callable[[int], bool] | None = None

    async def run(
        self, sources: Sequence[Path] | SourceReader, failed: Sequence[BuildFailure] = ()
    ) -> BuildResult:
        """Build the papers of ``sources`` and assemble the output files (a task: its share,
        no assembly). ``failed``: endpoint failures of the tasks, listed with this run's."""
        reader = sources if isinstance(sources, SourceReader) else open_sources(sources, self.out)
        if self.disciplines is None:
            known = source_disciplines(reader.sources)
            self.disciplines = {s: d for s, d in known.items() if d != UNKNOWN}
        run = await self._build_all(reader)
        outcomes = await asyncio.gather(*run.tasks)
        failures = [f for f in outcomes if f is not None]
        if failed:  # in build order, as one process lists them
            failures = sorted([*failed, *failures], key=lambda f: f.source)
        if self.share is None:
            instances, drops = self._assemble(run, failures)
        else:
            instances, drops = self._share_instances(run), list(run.drops)
        return BuildResult(
            instances,
            drops,
            len(run.items),
            self.llm.tracker if self.llm else None,
            resumed=run.resumed,
            out=self.out,
            failures=failures,
        )

    def _share_instances(self, run: _Run) -> Sequence[Instance]:
        """A task's finished instances, as built (the assembly relocates and screens them),
        read from their folders on each pass."""
        paths = [self.out / "papers" / pid / "instance.json" for _, pid in run.items]
        found = [path for path in paths if path.is_file()]
        return RereadRecords(lambda: (_load(path, Instance) for path in found), len(found))

    async def _build_all(self, reader: SourceReader) -> _Run:
        """Reach every source of this run in order, starting a task per paper to build."""
        steps = self.steps or self._recipe_steps()
        limit = None if self.share is not None else self.settings.limit  # a share is limited
        self._tick("papers", len(reader.sources) if limit is None else limit, "")
        semaphore = asyncio.Semaphore(self.settings.paper_concurrency)
        run = _Run()
        for index in range(len(reader.sources)):
            if limit is not None and len(run.items) >= limit:
                break
            if self.share is not None and not self.share(index):
                continue
            await semaphore.acquire()  # reading the next source waits for a free slot
            task = await self._reach(reader, index, steps, run, semaphore)
            if task is None:
                semaphore.release()
            else:
                run.tasks.append(task)
        return run

    def _recipe_steps(self) -> list[Step[PaperDraft]]:
        return recipe_steps(
            self.settings.recipe,
            self.settings.builder,
            self.llm,
            leakage_judge=self.settings.leakage_judge,
            leakage=LeakagePolicy(self.settings.leakage_action, self.settings.leakage_min_criteria),
            max_unit_words=self.settings.max_unit_words,
        )

    async def _reach(
        self,
        reader: SourceReader,
        index: int,
        steps: Sequence[Step[PaperDraft]],
        run: _Run,
        semaphore: asyncio.Semaphore,
    ) -> asyncio.Task[BuildFailure | None] | None:
        """Open source ``index``; a task building its paper, or None when there is nothing to do."""
        opened = await asyncio.to_thread(reader.open, index)
        entry = opened.entry
        if entry.failure is not None or entry.paper_id is None or entry.paper_id in run.seen:
            reason = (
                entry.failure or f"duplicate of {run.seen.get(entry.paper_id or '')} (same content)"
            )
            run.drops.append(Drop(source=entry.source, step="ingest", reason=reason))
            reader.record(opened)
            self._tick("papers", None, entry.source[:40])
            return None
        run.seen[entry.paper_id] = entry.source
        run.items.append((entry.source, entry.paper_id))
        folder = self.out / "papers" / entry.paper_id
        if opened.known and not (folder / "paper.json").is_file():
            opened = await asyncio.to_thread(reader.open, index, fresh=True)
        if opened.paper is not None:
            _save(folder / "paper.json", opened.paper)
        reader.record(opened)
        if self._finished(folder, steps[-1]):
            run.resumed += 1
            self._tick("papers", None, entry.title[:40])
            return None
        if self.builds is not None and not self.builds(index):
            self._tick("papers", None, entry.title[:40])
            return None  # a task's paper it left unfinished (an endpoint failure): not ours
        return asyncio.create_task(self._build(folder, steps, semaphore, entry.title))

    def _finished(self, folder: Path, last: Step[PaperDraft]) -> bool:
        return StepFolder(folder).has(last) or _final_drop(folder) is not None

    async def _build(
        self,
        folder: Path,
        steps: Sequence[Step[PaperDraft]],
        semaphore: asyncio.Semaphore,
        title: str,
    ) -> BuildFailure | None:
        """Run the steps on one paper; an endpoint failure is returned and leaves it unfinished."""
        try:
            async with building(folder):
                if self._finished(folder, steps[-1]):
                    return None  # another task was given the same paper and built it meanwhile
                paper: Paper = _load(folder / "paper.json", Paper)
                (folder / "drop.json").unlink(missing_ok=True)  # an older endpoint failure
                outcome = await run_item(
                    PaperDraft(paper=paper),
                    steps,
                    StepFolder(folder),
                    source=paper.meta.source_path,
                    item_id=paper.id,
                )
                if isinstance(outcome, BuildFailure):
                    return outcome
                if isinstance(outcome, Drop):
                    _save(folder / "drop.json", outcome)
                return None
        finally:
            semaphore.release()
            self._tick("papers", None, title[:40])

    def _assemble(
        self, run: _Run, failures: Iterable[BuildFailure]
    ) -> tuple[Sequence[Instance], list[Drop]]:
        """instances.jsonl, dropped.jsonl and failed.jsonl from the per-paper records.

        The instances stream from their folders through the screen into the file, a batch at a
        time, and are read back from it when used: a build's memory does not grow with its
        corpus (only its drops, a line each, are held).
        """
        drops = list(run.drops)
        path = self.out / "instances.jsonl"
        # a killed write's leftovers
        for name in ("instances.jsonl", "dropped.jsonl", "failed.jsonl"):
            remove_stale_temp_files(self.out / name)
        count = write_jsonl(path, self._screen(self._relocated(run, drops)))
        write_jsonl(self.out / "dropped.jsonl", drops)
        write_jsonl(self.out / "failed.jsonl", failures)
        return reread_jsonl(path, Instance, count), drops

    def _relocated(self, run: _Run, drops: list[Drop]) -> Iterator[Instance]:
        """Each finished paper's instance, in source order, with its source path made relative
        (records of older builds may carry a local path or a secret: cleaned on resume); each
        dropped paper's drop is appended to ``drops`` as it is passed."""
        for source, paper_id in sorted(run.items):
            folder = self.out / "papers" / paper_id
            instance = _load(folder / "instance.json", Instance)
            drop = _final_drop(folder)
            if instance is not None:
                domain = (self.disciplines or {}).get(source, instance.domain)
                if (instance.source_path, instance.domain) != (source, domain):
                    instance = instance.model_copy(update={"source_path": source, "domain": domain})
                    _save(folder / "instance.json", instance)
                    _relocate_paper(folder, source)
                yield instance
            elif drop is not None:
                drop = drop.model_copy(update={"source": source})
                if drop != _load(folder / "drop.json", Drop):
                    _save(folder / "drop.json", drop)
                    _relocate_paper(folder, source)
                drops.append(drop)

    def _screen(self, instances: Iterable[Instance]) -> Iterator[Instance]:
        """The overlap screen's verdicts on every instance, in batches of ``SCREEN_BATCH``.

        An instance's screened form is kept in ``screened.json`` beside it, with a hash of the
        instance it came from: a resumed build re-embeds nothing it screened before (on a large
        build the screen, not reading, is what a resume would otherwise spend its time on).
        Batches bound the memory (one batch of a whole corpus's criteria made a build's peak grow
        with its size); each instance's verdicts depend on it alone.
        """
        from papergym.audit.overlap import screen_instances

        self._tick("leakage screen", 1, "")
        for batch in _batched(instances, SCREEN_BATCH):
            hashes = [content_hash(i.model_dump(mode="json")) for i in batch]
            cached = [self._screened(i.paper_id, h) for i, h in zip(batch, hashes, strict=True)]
            pending = [i for i, c in zip(batch, cached, strict=True) if c is None]
            fresh = iter(screen_instances(pending) if pending else [])
            for instance, digest, done in zip(batch, hashes, cached, strict=True):
                if done is None:
                    done = next(fresh)
                    record = Screened(of=digest, instance=done)
                    _save(self.out / "papers" / instance.paper_id / "screened.json", record)
                yield done
        self._tick("leakage screen", None, "")

    def _screened(self, paper_id: str, digest: str) -> Instance | None:
        try:
            record = _load(self.out / "papers" / paper_id / "screened.json", Screened)
        except ValueError:
            return None  # written by another version: screened again
        return record.instance if record is not None and record.of == digest else None

    def _tick(self, step: str, total: int | None, item: str) -> None:
        if self.progress:
            self.progress(step, total, item)


def usage_json(tracker: UsageTracker | None) -> list[dict[str, object]] | None:
    return tracker.as_dict() if tracker is not None else None
