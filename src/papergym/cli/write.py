"""``papergym write``: LaTeX papers from bibliographies (``run``, the default subcommand), and
``papergym write prepare``: training data for the writer from real papers
(:mod:`papergym.write.run`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from papergym.cli.common import (
    OVERRIDES_HELP,
    ConfigOption,
    DebugOption,
    JsonOption,
    exit_unfinished,
    paths_and_overrides,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.cli.flags import Given, config_flags, llm_options
from papergym.cli.groups import sub_app
from papergym.cli.progress import ProgressBar
from papergym.llm.report import usage_table
from papergym.write.data import DROPS_FILE, MANIFEST_FILE, PROMPTS_FILE, SFT_FILE, WriteManifest
from papergym.write.run import WriteRun, prepare_data, write_papers
from papergym.write.writer import WriteJob

app = sub_app(
    "write",
    "Write LaTeX papers from bibliographies (the default subcommand, run: `papergym write BIB -o "
    "OUT`), and prepare training data for the writer from real papers (prepare).",
    default_command=True,
)

BibsArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="BIB... [KEY=VALUE]...",
        help="BibTeX files, one paper each (named after the file), then optional config "
        "overrides: " + OVERRIDES_HELP,
        show_default=False,
    ),
]
OutOption = Annotated[
    Path,
    typer.Option(
        "-o", "--out", help="Output folder: one sub-folder per paper.", show_default=False
    ),
]
TopicOption = Annotated[
    str | None,
    typer.Option(
        "--topic",
        help="What the paper should be about (default: the model chooses from the references).",
        show_default=False,
    ),
]


@app.command("run")
@reports_errors
@config_flags(plan_only=("write.plan_only", "--plan-only"))
@llm_options()
def write_run(
    arguments: BibsArgument,
    out: OutOption,
    topic: TopicOption = None,
    config: ConfigOption = None,
    llm: Given = (),
    json_output: JsonOption = False,
    debug: DebugOption = False,
    given: Given = (),
) -> None:
    """Write a LaTeX paper from each BIB: an outline checked against the bibliography, then each section in turn, with the outline and the sections so far in view (the writer role).

    Writes OUT/<bib name>/paper.tex (citing only keys of the .bib), references.bib (a copy), outline.json, metadata.json (title, sections, keys cited, every simulated number) and the per-step files a rerun resumes from; OUT/drops.jsonl lists papers that could not be written (an outline still invalid after repairs) with the reason. No experiment is run: every number in an experiments, results, discussion or conclusion section, or the abstract, is marked \\simulated{} in the text and listed in the metadata, or with --plan-only those parts are an experiment plan without numbers.

    Exit code 0 when every paper was written or dropped with a reason; 1 when the endpoint failed (run the same command again: finished sections are kept); 2 on bad input (a .bib that does not parse, or holds fewer usable entries, with a key and a title, than write.min_references; no LLM configured) or when no paper could be written. Entries of a .bib that cannot be parsed are left out with a warning naming the first, and counted in metadata.json (unparsed_entries) and the summary.
    """
    paths, overrides = paths_and_overrides(arguments, ".bib files")
    settings = resolve(config, overrides, [*given, *llm])
    with ProgressBar("write") as bar:
        run = write_papers(
            paths,
            out,
            settings.write,
            settings.llm,
            topic=topic,
            on_warning=_warn,
            on_start=bar.start,
            on_step=lambda name, step: bar.advance(f"{name}: {step}"),
        )
    if json_output:
        print(json.dumps(_run_json(run), ensure_ascii=False, indent=2))
    else:
        _print_written(run)
        stdout.print(usage_table(run.usage, per=("paper", max(len(run.written), 1))))
    if run.failures:
        exit_unfinished(
            run.failures,
            "paper(s) not finished because the LLM endpoint failed; finished sections are kept: "
            "run the same command again",
        )
    if not run.written:
        stderr.print(
            f"error: no paper written: {len(run.drops)} dropped (see {out / DROPS_FILE})",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(2)


def _warn(line: str) -> None:
    stderr.print(f"warning: {line}", markup=False, soft_wrap=True)


def _run_json(run: WriteRun) -> dict[str, object]:
    return {
        "out": str(run.out),
        "written": [p.model_dump(mode="json") for p in run.written],
        "drops": [d.model_dump(mode="json") for d in run.drops],
        "bibs": [_bib_summary(job) for job in run.jobs],
        "failed": run.failures,
        "usage": run.usage.as_dict(),
    }


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


def _print_written(run: WriteRun) -> None:
    table = Table(title=f"Written: {run.out}", title_justify="left")
    columns = ("paper", "title", "sections", "references", "unparsed", "cited", "simulated numbers")
    for column in (*columns, "plan only"):
        table.add_column(column, overflow="fold")
    for paper in sorted(run.written, key=lambda p: p.name):
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
    if run.drops:
        dropped = Table(title=f"{len(run.drops)} paper(s) dropped", title_justify="left")
        for column in ("paper", "step", "reason"):
            dropped.add_column(column, overflow="fold")
        for drop in run.drops:
            dropped.add_row(drop.name, drop.step, drop.reason)
        stdout.print(dropped)


SourcesArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="PAPERS... [KEY=VALUE]...",
        help="Paper sources, as for `papergym ingest` (paper folders, .tex files, e-print "
        "archives, folders of papers), then optional config overrides: " + OVERRIDES_HELP,
        show_default=False,
    ),
]
DataOutOption = Annotated[
    Path,
    typer.Option(
        "-o",
        "--out",
        help="The DATA folder (created; an earlier prepare's folder is replaced).",
        show_default=False,
    ),
]


@app.command("prepare")
@reports_errors
def write_prepare(
    arguments: SourcesArgument,
    out: DataOutOption,
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
    with ProgressBar("prepare") as bar:
        prepared = prepare_data(
            paths,
            out,
            settings.write,
            command=" ".join(["papergym", *sys.argv[1:]]),
            on_start=bar.start,
            on_paper=bar.advance,
        )
    manifest = prepared.manifest
    if not manifest.examples:
        for drop in manifest.drops:
            stderr.print(f"error: {drop.source}: {drop.reason}", markup=False, soft_wrap=True)
        stderr.print("error: no paper gave training data", markup=False)
        raise typer.Exit(2)
    if json_output:
        print(manifest.model_dump_json(indent=2))
    else:
        _print_prepared(manifest, out)
        stdout.print(f"wrote {out}/{{{SFT_FILE}, {PROMPTS_FILE}, {DROPS_FILE}, {MANIFEST_FILE}}}")


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
