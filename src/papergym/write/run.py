"""Writing papers from bibliographies (``papergym write``) and preparing the writer's training
data from real papers (``papergym write prepare``), callable from Python.

:func:`write_papers` checks every .bib and the output folder before anything is written, then
writes each paper into ``OUT/<bib name>/`` (resuming what an earlier run saved there, see
:mod:`papergym.write.writer`) and lists the papers that could not be written in
``OUT/drops.jsonl``. :func:`prepare_data` turns papers into ``DATA/`` (see
:mod:`papergym.write.data`). Both return a result the command line prints.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym import __version__
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import LLMError
from papergym.llm.usage import UsageTracker
from papergym.redact import redact
from papergym.runfolder import check_output_path, is_empty
from papergym.sources.bib import lost_entries, read_bib
from papergym.sources.discover import discover
from papergym.write.data import (
    DATA_KIND,
    DROPS_FILE,
    MANIFEST_FILE,
    PROMPTS_FILE,
    SFT_FILE,
    LeakageFigures,
    WriteManifest,
)
from papergym.write.prepare import Prepared, prepare_papers
from papergym.write.records import WriteDrop, WrittenPaper
from papergym.write.settings import WriteSection
from papergym.write.writer import Hook, PaperWriter, WriteJob, check_job

NO_LLM = (
    "papergym write needs an LLM for the writer role (it has no offline mode): pass --base-url "
    "URL and --model NAME, or --llm-config FILE, or set llm in the -c file"
)

Started = Callable[[int | None, int], None]
"""Told ``(items, items already done)`` when the work starts (None: not known yet)."""
Warned = Callable[[str], None]
"""Told a warning (one line) as it arises."""


@dataclass(frozen=True)
class WriteRun:
    """What a write run did: the jobs (one per .bib), the papers written, those dropped with a
    reason (also in ``OUT/drops.jsonl``), those the endpoint failed (one line each: the same
    call resumes them), and the LLM usage."""

    out: Path
    jobs: list[WriteJob]
    written: list[WrittenPaper]
    drops: list[WriteDrop]
    failures: list[str]
    usage: UsageTracker


def write_papers(
    bibs: Sequence[Path],
    out: Path,
    section: WriteSection,
    llm: LLMConfig,
    *,
    topic: str | None = None,
    on_warning: Warned | None = None,
    on_start: Started | None = None,
    on_step: Hook | None = None,
) -> WriteRun:
    """Write a paper from each of ``bibs`` into ``out`` with the writer role of ``llm``.

    Bad input (no LLM, an unusable .bib, a folder of another command or written under other
    settings, an unreachable endpoint) raises :class:`BadInputError` with nothing written.
    ``on_warning`` is told each .bib's unparsed entries; ``on_step(paper, step)`` each outline,
    section and abstract done.
    """
    if not llm.configured:
        raise BadInputError(None, NO_LLM)
    check_write_out(out)
    jobs = plan_jobs(bibs, section, llm.for_role("writer").model, topic, on_warning)
    for job in jobs:
        check_job(out / job.name, job)
    client = LLMClient.from_config(llm)

    async def run() -> tuple[list[WrittenPaper], list[WriteDrop], list[str]]:
        try:
            return await write_all(jobs, out, client, on_start, on_step)
        finally:
            await client.aclose()

    written, drops, failures = asyncio.run(run())
    drops.sort(key=lambda d: d.name)
    write_jsonl(out / DROPS_FILE, drops)
    return WriteRun(out, jobs, written, drops, failures, client.tracker)


def check_write_out(out: Path) -> None:
    """A `papergym write` folder holds drops.jsonl and one folder per paper; a file of
    another command's output (reviews.jsonl, review.json, instances.jsonl...) means the wrong -o."""
    check_output_path(out)
    if not out.is_dir():
        return
    foreign = sorted(
        p.name
        for p in out.iterdir()
        if not p.is_dir() and p.name != DROPS_FILE and not p.name.startswith(".")
    )
    if foreign:
        raise BadInputError(
            out, f"holds {', '.join(foreign[:3])}: not a `papergym write` folder; use another -o"
        )


def plan_jobs(
    bibs: Sequence[Path],
    section: WriteSection,
    model: str,
    topic: str | None,
    on_warning: Warned | None = None,
) -> list[WriteJob]:
    """A job per .bib (named after it; a repeated name gets -2, -3...), each .bib read and
    checked before anything is written."""
    names: Counter[str] = Counter()
    jobs: list[WriteJob] = []
    for bib in bibs:
        # only the references offered are converted: a 100,000-entry .bib costs seconds
        parsed = read_bib(
            bib,
            limit=section.max_references,
            minimum=section.min_references,
            minimum_setting="write.min_references",
        )
        if (lost := lost_entries(parsed)) and on_warning is not None:
            on_warning(f"{bib}: {lost}; writing from {parsed.usable} usable references")
        names[bib.stem] += 1
        name = bib.stem if names[bib.stem] == 1 else f"{bib.stem}-{names[bib.stem]}"
        jobs.append(
            WriteJob(
                name=name,
                bib=bib,
                parsed=parsed,
                topic=topic,
                plan_only=section.plan_only,
                model=model,
                settings=section,
            )
        )
    return jobs


async def write_all(
    jobs: list[WriteJob],
    out: Path,
    client: LLMClient,
    on_start: Started | None = None,
    on_step: Hook | None = None,
) -> tuple[list[WrittenPaper], list[WriteDrop], list[str]]:
    """Write ``jobs`` into ``out`` (``client`` is not closed): the papers written, dropped, and
    not finished because the endpoint failed."""
    try:
        await client.ping(["writer"])
    except LLMError as error:
        raise BadInputError(None, f"writer: {redact(str(error))}") from None
    out.mkdir(parents=True, exist_ok=True)
    written: list[WrittenPaper] = []
    drops: list[WriteDrop] = []
    failures: list[str] = []
    limit = asyncio.Semaphore(jobs[0].settings.paper_concurrency if jobs else 1)
    if on_start is not None:
        on_start(None, 0)  # sections are known once outlined

    async def one(job: WriteJob) -> None:
        async with limit:
            try:
                result = await PaperWriter(job, client, out / job.name, on_step).write()
            except LLMError as error:  # endpoint down, answer cut, budget: not a drop
                failures.append(f"{job.bib}: {redact(str(error)).splitlines()[0]}")
                return
        if isinstance(result, WriteDrop):
            drops.append(result)
        else:
            written.append(result)

    await asyncio.gather(*(one(job) for job in jobs))
    return written, drops, failures


# --- prepare ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedData:
    """What ``write prepare`` made of its papers; nothing is written when no paper gave an
    example (``manifest.examples`` is 0: each drop says why)."""

    out: Path
    manifest: WriteManifest


def prepare_data(
    paths: Sequence[Path],
    out: Path,
    section: WriteSection,
    *,
    command: str,
    on_start: Started | None = None,
    on_paper: Callable[[str], None] | None = None,
) -> PreparedData:
    """Training data for the writer from the papers at ``paths``, into ``out`` (new, empty, or
    an earlier prepare's folder, replaced). ``command`` is recorded in the manifest."""
    check_data_out(out)
    sources = [source for path in paths for source in discover(path)]
    if on_start is not None:
        on_start(len(sources), 0)
    results = prepare_papers(
        sources, section, on_paper=(lambda s: on_paper(s.path.name)) if on_paper else None
    )
    manifest = _manifest(results, section, len(sources), command)
    if manifest.examples:
        out.mkdir(parents=True, exist_ok=True)
        (out / MANIFEST_FILE).unlink(missing_ok=True)  # an earlier run's: it no longer describes
        write_jsonl(out / SFT_FILE, [r.example for r in results if r.example is not None])
        write_jsonl(out / PROMPTS_FILE, [r.prompt for r in results if r.prompt is not None])
        write_jsonl(out / DROPS_FILE, list(manifest.drops))
        write_text_atomic(out / MANIFEST_FILE, manifest.model_dump_json(indent=1))  # last
    return PreparedData(out, manifest)


def check_data_out(out: Path) -> None:
    """DATA may be new, empty, or an earlier prepare's folder (replaced); nothing else."""
    check_output_path(out)
    if is_empty(out):
        return
    try:
        kind = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None
    if kind != DATA_KIND:
        raise BadInputError(
            out, "holds files that are not `papergym write prepare` data; use another -o"
        )


def _manifest(
    results: list[Prepared], section: WriteSection, sources: int, command: str
) -> WriteManifest:
    examples = [r.example for r in results if r.example is not None]
    return WriteManifest(
        version=__version__,
        command=command,
        papers=sources,
        examples=len(examples),
        train=sum(e.split == "train" for e in examples),
        test=sum(e.split == "test" for e in examples),
        drops=tuple(r.drop for r in results if r.drop is not None),
        leakage=LeakageFigures(
            ngram=section.leakage_ngram,
            papers_checked=sources,
            references_left_out=sum(r.left_out for r in results),
        ),
        settings=section.model_dump(mode="json"),
    )
