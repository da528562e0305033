"""``papergym write``: LaTeX papers from bibliographies (``run``, the default subcommand), and
``papergym write prepare``: training data for the writer from real papers."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from papergym import __version__
from papergym.cliutil import (
    HELP_SETTINGS,
    ApiKeyEnvOption,
    BaseUrlOption,
    CacheDirOption,
    DebugOption,
    DefaultCommandGroup,
    JsonOption,
    LLMConfigOption,
    ModelOption,
    NoCacheOption,
    exit_unfinished,
    reports_errors,
    stderr,
    stdout,
)
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.report import usage_table
from papergym.llm.types import LLMError
from papergym.redact import redact
from papergym.settings.cli import (
    OVERRIDES_HELP,
    ConfigOption,
    flags,
    llm_flags,
    paths_and_overrides,
    resolve,
)
from papergym.settings.models import PaperGymConfig
from papergym.sources.bib import lost_entries, read_bib
from papergym.sources.discover import PaperSource, discover
from papergym.write.data import (
    DROPS_FILE,
    MANIFEST_FILE,
    PROMPTS_FILE,
    SFT_FILE,
    LeakageFigures,
    WriteManifest,
)
from papergym.write.prepare import Prepared, prepare_papers
from papergym.write.records import WriteDrop, WrittenPaper
from papergym.write.writer import PaperWriter, WriteJob, check_job

NO_LLM = (
    "papergym write needs an LLM for the writer role (it has no offline mode): pass --base-url "
    "URL and --model NAME, or --llm-config FILE, or set llm in the -c file"
)

write_app = typer.Typer(
    name="write",
    help="Write LaTeX papers from bibliographies (the default subcommand, run: `papergym write "
    "BIB -o OUT`), and prepare training data for the writer from real papers (prepare).",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=HELP_SETTINGS,
    cls=DefaultCommandGroup,
)


def _progress(label: str) -> Progress:
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )


# --- write ------------------------------------------------------------------------------------


def _jobs(bibs: list[Path], settings: PaperGymConfig, topic: str | None) -> list[WriteJob]:
    """A job per .bib, every one checked before anything is written."""
    model = settings.llm.for_role("writer").model
    names: Counter[str] = Counter()
    jobs: list[WriteJob] = []
    for bib in bibs:
        # only the references offered are converted: a 100,000-entry .bib costs seconds
        parsed = read_bib(
            bib,
            limit=settings.write.max_references,
            minimum=settings.write.min_references,
            minimum_setting="write.min_references",
        )
        if lost := lost_entries(parsed):
            stderr.print(
                f"warning: {bib}: {lost}; writing from {parsed.usable} usable references",
                markup=False,
                soft_wrap=True,
            )
        names[bib.stem] += 1
        name = bib.stem if names[bib.stem] == 1 else f"{bib.stem}-{names[bib.stem]}"
        jobs.append(
            WriteJob(
                name=name,
                bib=bib,
                parsed=parsed,
                topic=topic,
                plan_only=settings.write.plan_only,
                model=model,
                settings=settings.write,
            )
        )
    return jobs


async def _write_all(
    jobs: list[WriteJob], out: Path, llm: LLMClient
) -> tuple[list[WrittenPaper], list[WriteDrop], list[str]]:
    try:
        await llm.ping(["writer"])
    except LLMError as error:
        raise BadInputError(None, f"writer: {redact(str(error))}") from None
    out.mkdir(parents=True, exist_ok=True)
    written: list[WrittenPaper] = []
    drops: list[WriteDrop] = []
    failures: list[str] = []
    limit = asyncio.Semaphore(jobs[0].settings.paper_concurrency if jobs else 1)
    with _progress("write") as progress:
        task = progress.add_task("", total=None)  # sections are known once outlined

        def hook(name: str, step: str) -> None:
            progress.update(task, advance=1, description=f"{name}: {step}")

        async def one(job: WriteJob) -> None:
            async with limit:
                try:
                    result = await PaperWriter(job, llm, out / job.name, hook).write()
                except LLMError as error:  # endpoint down, answer cut, budget: not a drop
                    failures.append(f"{job.bib}: {redact(str(error)).splitlines()[0]}")
                    return
            if isinstance(result, WriteDrop):
                drops.append(result)
            else:
                written.append(result)

        await asyncio.gather(*(one(job) for job in jobs))
    return written, drops, failures


def _bib_summary(job: WriteJob) -> dict[str, object]:
    """What a .bib gave and lost, for --json."""
    parsed = job.parsed
    return {
        "bib": str(job.bib),
        "paper": job.name,
        "references": parsed.usable,
        "unparsed_entries": parsed.failed_blocks,
        "unparsed": [f.described for f in parsed.failures],
        "untitled": len(parsed.untitled),
        "duplicates": parsed.duplicates,
    }


def _print_written(written: list[WrittenPaper], drops: list[WriteDrop], out: Path) -> None:
    table = Table(title=f"Written: {out}", title_justify="left")
    columns = ("paper", "title", "sections", "references", "unparsed", "cited", "simulated numbers")
    for column in (*columns, "plan only"):
        table.add_column(column, overflow="fold")
    for paper in sorted(written, key=lambda p: p.name):
        table.add_row(
            paper.name,
            paper.title[:60],
            str(len(paper.sections)),
            str(paper.references),
            str(paper.unparsed_entries),
            str(len(paper.cited)),
            str(len(paper.simulated_numbers)),
            "yes" if paper.plan_only else "no",
        )
    stdout.print(table)
    if drops:
        dropped = Table(title=f"{len(drops)} paper(s) dropped", title_justify="left")
        for column in ("paper", "step", "reason"):
            dropped.add_column(column, overflow="fold")
        for drop in drops:
            dropped.add_row(drop.name, drop.step, drop.reason)
        stdout.print(dropped)


@write_app.command("run")
@reports_errors
def write_run(
    arguments: Annotated[
        list[str],
        typer.Argument(
            metavar="BIB... [KEY=VALUE]...",
            help="BibTeX files, one paper each (named after the file), then optional config "
            "overrides: " + OVERRIDES_HELP,
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o", "--out", help="Output folder: one sub-folder per paper.", show_default=False
        ),
    ],
    topic: Annotated[
        str | None,
        typer.Option(
            "--topic",
            help="What the paper should be about (default: the model chooses from the references).",
            show_default=False,
        ),
    ] = None,
    plan_only: Annotated[
        bool | None,
        typer.Option(
            "--plan-only",
            help="Sets write.plan_only: experiments and results are written as an experiment "
            "plan without numbers (checked), instead of simulated numbers marked as such.",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    llm_config: LLMConfigOption = None,
    base_url: BaseUrlOption = None,
    model: ModelOption = None,
    api_key_env: ApiKeyEnvOption = None,
    no_cache: NoCacheOption = False,
    cache_dir: CacheDirOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Write a LaTeX paper from each BIB: an outline checked against the bibliography, then each section in turn, with the outline and the sections so far in view (the writer role).

    Writes OUT/<bib name>/paper.tex (citing only keys of the .bib), references.bib (a copy), outline.json, metadata.json (title, sections, keys cited, every simulated number) and the per-step files a rerun resumes from; OUT/drops.jsonl lists papers that could not be written (an outline still invalid after repairs) with the reason. No experiment is run: every number in an experiments, results, discussion or conclusion section, or the abstract, is marked \\simulated{} in the text and listed in the metadata, or with --plan-only those parts are an experiment plan without numbers.

    Exit code 0 when every paper was written or dropped with a reason; 1 when the endpoint failed (run the same command again: finished sections are kept); 2 on bad input (a .bib that does not parse, or holds fewer usable entries, with a key and a title, than write.min_references; no LLM configured) or when no paper could be written. Entries of a .bib that cannot be parsed are left out with a warning naming the first, and counted in metadata.json (unparsed_entries) and the summary.
    """
    paths, overrides = paths_and_overrides(arguments, ".bib files")
    given = [
        *flags(plan_only=("write.plan_only", "--plan-only", plan_only)),
        *llm_flags(llm_config, base_url, model, api_key_env, no_cache, cache_dir),
    ]
    settings = resolve(config, overrides, given)
    if not settings.llm.configured:
        raise BadInputError(None, NO_LLM)
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")
    _refuse_foreign_out(out)
    jobs = _jobs(paths, settings, topic)
    for job in jobs:
        check_job(out / job.name, job)
    llm = LLMClient.from_config(settings.llm)

    async def run() -> tuple[list[WrittenPaper], list[WriteDrop], list[str]]:
        try:
            return await _write_all(jobs, out, llm)
        finally:
            await llm.aclose()

    written, drops, failures = asyncio.run(run())
    drops.sort(key=lambda d: d.name)
    write_jsonl(out / "drops.jsonl", drops)
    if json_output:
        summary = {
            "out": str(out),
            "written": [p.model_dump(mode="json") for p in written],
            "drops": [d.model_dump(mode="json") for d in drops],
            "bibs": [_bib_summary(job) for job in jobs],
            "failed": failures,
            "usage": llm.tracker.as_dict(),
        }
        print(json.dumps(summary, ensure_ascii=False, indent=2))
    else:
        _print_written(written, drops, out)
        stdout.print(usage_table(llm.tracker, per=("paper", max(len(written), 1))))
    if failures:
        exit_unfinished(
            failures,
            "paper(s) not finished because the LLM endpoint failed; finished sections are kept: "
            "run the same command again",
        )
    if not written:
        stderr.print(
            f"error: no paper written: {len(drops)} dropped (see {out / 'drops.jsonl'})",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(2)


# --- prepare ----------------------------------------------------------------------------------


def _refuse_foreign_out(out: Path) -> None:
    """A `papergym write` folder holds drops.jsonl and one folder per paper; a file of
    another command's output (reviews.jsonl, review.json, instances.jsonl...) means the wrong -o."""
    if not out.is_dir():
        return
    foreign = sorted(
        p.name
        for p in out.iterdir()
        if not p.is_dir() and p.name != "drops.jsonl" and not p.name.startswith(".")
    )
    if foreign:
        raise BadInputError(
            out, f"holds {', '.join(foreign[:3])}: not a `papergym write` folder; use another -o"
        )


def _check_data_out(out: Path) -> None:
    """DATA may be new, empty, or an earlier prepare's folder (replaced); nothing else."""
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")
    if not out.is_dir() or not any(out.iterdir()):
        return
    manifest = out / MANIFEST_FILE
    try:
        kind = json.loads(manifest.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None
    if kind != "write-prepare":
        raise BadInputError(
            out, "holds files that are not `papergym write prepare` data; use another -o"
        )


def _sources(paths: list[Path]) -> list[PaperSource]:
    sources: list[PaperSource] = []
    for path in paths:
        sources.extend(discover(path))
    return sources


def _manifest(results: list[Prepared], settings: PaperGymConfig, sources: int) -> WriteManifest:
    examples = [r.example for r in results if r.example is not None]
    return WriteManifest(
        version=__version__,
        command=" ".join(["papergym", *sys.argv[1:]]),
        papers=sources,
        examples=len(examples),
        train=sum(e.split == "train" for e in examples),
        test=sum(e.split == "test" for e in examples),
        drops=tuple(r.drop for r in results if r.drop is not None),
        leakage=LeakageFigures(
            ngram=settings.write.leakage_ngram,
            papers_checked=sources,
            references_left_out=sum(r.left_out for r in results),
        ),
        settings=settings.write.model_dump(mode="json"),
    )


def _print_prepared(manifest: WriteManifest, out: Path) -> None:
    table = Table(title=f"Write data: {out}", title_justify="left", show_header=False)
    table.add_row("papers read", str(manifest.papers))
    table.add_row(
        "examples (train / test)", f"{manifest.examples} ({manifest.train} / {manifest.test})"
    )
    table.add_row("dropped", str(len(manifest.drops)))
    table.add_row(
        f"references kept out of prompts ({manifest.leakage.ngram}-gram check)",
        str(manifest.leakage.references_left_out),
    )
    stdout.print(table)
    if manifest.drops:
        drops = Table(title="Dropped papers", title_justify="left")
        drops.add_column("paper", overflow="fold")
        drops.add_column("reason", overflow="fold")
        for drop in manifest.drops:
            drops.add_row(drop.source, drop.reason)
        stdout.print(drops)


@write_app.command("prepare")
@reports_errors
def write_prepare(
    arguments: Annotated[
        list[str],
        typer.Argument(
            metavar="PAPERS... [KEY=VALUE]...",
            help="Paper sources, as for `papergym ingest` (paper folders, .tex files, e-print "
            "archives, folders of papers), then optional config overrides: " + OVERRIDES_HELP,
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="The DATA folder (created; an earlier prepare's folder is replaced).",
            show_default=False,
        ),
    ],
    config: ConfigOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Training data for the writer from real papers: each paper's own bibliography is the input, its outline and sections the target.

    Writes DATA/sft.jsonl (id, system, prompt, completion: the paper in the writer's format, an outline as % comments then \\title, the abstract and each section with \\cite{key} kept), DATA/prompts.jsonl (the prompt set `papergym train cycle` samples from), DATA/drops.jsonl and DATA/manifest.json (kind "write-prepare"). Leakage rule: no write.leakage_ngram-word run (default 8) of the paper's own text appears in its prompt; references that share one are kept out, and the paper itself if it is in its own bibliography. No LLM is used.

    Exit code 0 when data was written; 2 on bad input or when no paper gave data (each drop's reason is printed).
    """
    paths, overrides = paths_and_overrides(arguments, "paper sources")
    settings = resolve(config, overrides)
    _check_data_out(out)
    sources = _sources(paths)
    with _progress("prepare") as progress:
        task = progress.add_task("", total=len(sources))
        results = prepare_papers(
            sources,
            settings.write,
            on_paper=lambda s: progress.update(task, advance=1, description=s.path.name),
        )
    manifest = _manifest(results, settings, len(sources))
    if not manifest.examples:
        for drop in manifest.drops:
            stderr.print(f"error: {drop.source}: {drop.reason}", markup=False, soft_wrap=True)
        stderr.print("error: no paper gave training data", markup=False)
        raise typer.Exit(2)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST_FILE).unlink(missing_ok=True)  # an earlier run's: it no longer describes
    write_jsonl(out / SFT_FILE, [r.example for r in results if r.example is not None])
    write_jsonl(out / PROMPTS_FILE, [r.prompt for r in results if r.prompt is not None])
    write_jsonl(out / DROPS_FILE, list(manifest.drops))
    write_text_atomic(out / MANIFEST_FILE, manifest.model_dump_json(indent=1))  # last: complete
    if json_output:
        print(manifest.model_dump_json(indent=2))
    else:
        _print_prepared(manifest, out)
        stdout.print(f"wrote {out}/{{{SFT_FILE}, {PROMPTS_FILE}, {DROPS_FILE}, {MANIFEST_FILE}}}")
