"""``papergym build``: papers → RL instances, with a card, a summary and resumable output."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from papergym.cli.common import (
    OVERRIDES_HELP,
    ApiKeyEnvOption,
    BaseUrlOption,
    CacheDirOption,
    ConfigOption,
    DebugOption,
    JsonOption,
    LLMConfigOption,
    ModelOption,
    NoCacheOption,
    flags,
    llm_flags,
    paths_and_overrides,
    reports_errors,
    resolve,
    stderr,
    stdout,
)
from papergym.errors import BadInputError
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.report import usage_table
from papergym.llm.types import LLMError, Role
from papergym.recipes.reading import SourceReader
from papergym.recipes.runner import (
    Builder,
    BuildResult,
    BuildSettings,
    ProgressHook,
    check_output,
    open_sources,
    settings_for,
    start_output,
    usage_json,
)
from papergym.records import BuilderName
from papergym.redact import redact
from papergym.settings.models import PaperGymConfig

EXTRACTIVE_NOTE = (
    "Built by the extractive baseline: sentences are selected from the paper, not written; "
    "criteria are templated from method and experiment sentences. Use an LLM endpoint for the "
    "full recipe."
)


@reports_errors
def build(
    sources: Annotated[
        list[str],
        typer.Argument(
            help="Paper sources, as for `papergym ingest`: paper folders, .tex files, "
            "arXiv e-prints, or folders of papers; and config overrides: " + OVERRIDES_HELP,
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Output folder (created; an existing one from the same build settings is "
            "resumed, one from other settings refused, naming the keys that differ).",
            show_default=False,
        ),
    ],
    config: ConfigOption = None,
    recipe: Annotated[
        Literal["papergym", "innov", "design", "ares"] | None,
        typer.Option(
            "--recipe",
            help="Sets build.recipe (default papergym). papergym: plan from goal+background, "
            "graded on method and experiments; innov: method only; design: the method is "
            "given, plan its validation; ares: SOURCES are a corpus of documents (JSONL, "
            "parquet, a saved Hugging Face dataset, folders of .txt/.md; see docs/ares.md).",
            show_default=False,
        ),
    ] = None,
    builder: Annotated[
        Literal["auto", "llm", "extractive"] | None,
        typer.Option(
            "--builder",
            help="Sets build.builder (default auto). llm: the full recipe through the "
            "configured LLM; extractive: the offline baseline (no LLM, no network); auto: llm "
            "when an LLM is configured.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="Sets build.limit: build at most N papers; with --recipe ares, read the first "
            "N rows of the corpus only (a later run with a larger limit continues).",
        ),
    ] = None,
    leakage_judge: Annotated[
        bool | None,
        typer.Option(
            "--leakage-judge/--no-leakage-judge",
            help="Sets build.leakage_judge (default on): with the LLM builder, ask the judge "
            "role, per instance, which criteria can be inferred from the question alone.",
            show_default=False,
        ),
    ] = None,
    paper_concurrency: Annotated[
        int | None,
        typer.Option(
            "--paper-concurrency",
            min=1,
            help="Sets build.paper_concurrency (default 16): papers processed at once (LLM "
            "calls are bounded separately by the endpoint's max_concurrency). Not used by "
            "--recipe ares: documents in flight there are ares.concurrency (default 64).",
            show_default=False,
        ),
    ] = None,
    llm_config: LLMConfigOption = None,
    base_url: BaseUrlOption = None,
    model: ModelOption = None,
    api_key_env: ApiKeyEnvOption = None,
    no_cache: NoCacheOption = False,
    cache_dir: CacheDirOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Build RL instances (question, reference answer, leakage-checked rubric) from papers.

    Writes OUT/instances.jsonl, dropped.jsonl, failed.jsonl, per-paper records under papers/, card.md, card.json, build.yaml (the settings a resumed build must match) and config.yaml (the resolved configuration, secrets masked). Re-running the same command resumes: finished papers are skipped and LLM answers come from the cache.

    Settings come from -c FILE (its build and llm sections), key=value arguments (build.recipe=innov, llm.default.model=M) and the flags, which set the same keys; see `papergym config reference`.

    A paper whose LLM endpoint failed (unreachable, server errors, answers still cut off, budget spent) is not dropped: it is listed in failed.jsonl and retried by the next run. Exit code 0 when instances were built and nothing failed; 1 when papers failed for the endpoint (run the same command again); 2 on bad input or when no instance could be built.
    """
    paths, overrides = paths_and_overrides(sources, "paper sources")
    given = [
        *flags(
            recipe=("build.recipe", "--recipe", recipe),
            builder=("build.builder", "--builder", builder),
            limit=("build.limit", "--limit", limit),
            leakage_judge=("build.leakage_judge", "--leakage-judge", leakage_judge),
            paper_concurrency=("build.paper_concurrency", "--paper-concurrency", paper_concurrency),
        ),
        *llm_flags(llm_config, base_url, model, api_key_env, no_cache, cache_dir),
    ]
    resolved = resolve(config, overrides, given)
    section = resolved.build
    if section.recipe == "ares":  # documents, not papers: sharded and streamed (docs/ares.md)
        from papergym.recipes.ares.command import build_ares

        return build_ares(paths, out, resolved, json_output)
    chosen = _builder(section.builder, resolved.llm)
    settings = settings_for(
        section.recipe,
        chosen,
        resolved.llm,
        leakage_judge=section.leakage_judge,
        limit=section.limit,
        paper_concurrency=section.paper_concurrency,
        max_unit_words=section.max_unit_words,
    )
    # saved with the builder auto chose, so the record says what ran
    resolved = resolved.model_copy(update={"build": section.model_copy(update={"builder": chosen})})
    # Everything that can be refused is checked before the output folder is touched.
    resuming = check_output(out, settings)
    reader = open_sources(paths, out)
    llm = resolved.llm if chosen == "llm" else None
    result = asyncio.run(_run(out, settings, resolved, llm, reader))
    _write_card(out, result, settings.model_dump(), chosen)
    if json_output:
        print(json.dumps(_summary_json(result, resuming), ensure_ascii=False, indent=2))
    else:
        _print_summary(result, resuming)
    _exit_status(result)


def _exit_status(result: BuildResult) -> None:
    """One line and a non-zero exit when the build is not complete (see the command's help)."""
    if result.failures:
        steps = Counter(f.step for f in result.failures)
        kinds = ", ".join(f"{n} {step}" for step, n in steps.most_common())
        stderr.print(
            f"[red]error:[/red] {len(result.failures)} paper(s) not finished because the LLM "
            f"endpoint failed ({kinds}; see {escape(str(result.out / 'failed.jsonl'))}); "
            "they are not dropped: run the same command again to retry them",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
    if not result.instances:
        stderr.print(
            f"[red]error:[/red] no instance built: {result.papers} paper(s), "
            f"{len(result.drops)} dropped (see {escape(str(result.out / 'dropped.jsonl'))})",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2)


def _builder(choice: str, config: LLMConfig) -> BuilderName:
    if choice == "llm" and not config.configured:
        raise BadInputError(
            None,
            "--builder llm (build.builder) needs an LLM: pass --llm-config, or --base-url and "
            "--model, or set llm in the -c file",
        )
    if choice == "auto":
        return "llm" if config.configured else "extractive"
    return "llm" if choice == "llm" else "extractive"


async def _run(
    out: Path,
    settings: BuildSettings,
    resolved: PaperGymConfig,
    config: LLMConfig | None,
    given: SourceReader,
) -> BuildResult:
    llm = LLMClient.from_config(config) if config is not None else None
    try:
        if llm is not None:
            roles: list[Role] = ["extractor", "writer", "rubric"]
            try:  # fail fast, before the output folder is created
                await llm.ping([*roles, "judge"] if settings.leakage_judge else roles)
            except LLMError as error:
                stderr.print(
                    f"[red]error:[/red] {escape(redact(str(error).strip()))}",
                    highlight=False,
                    soft_wrap=True,
                )
                raise typer.Exit(1) from None
        start_output(out, settings, resolved)
        with _Progress() as hook:
            builder = Builder(out=out, settings=settings, llm=llm, progress=hook)
            return await builder.run(given)
    finally:
        if llm is not None:
            await llm.aclose()


class _Progress:
    """A rich progress display with one bar per step, fed by the runner's hook."""

    def __enter__(self) -> ProgressHook:
        self.progress = Progress(
            TextColumn("{task.fields[step]:<15}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=stderr,
            transient=False,
            disable=not stderr.is_terminal,
        )
        self.tasks: dict[str, TaskID] = {}
        self.progress.__enter__()
        return self.hook

    def hook(self, step: str, total: int | None, item: str) -> None:
        if step not in self.tasks:
            self.tasks[step] = self.progress.add_task(item, total=total, step=step)
        elif total is None:
            self.progress.update(self.tasks[step], advance=1, description=item)

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)


def _write_card(out: Path, result: BuildResult, config: dict[str, object], builder: str) -> None:
    from papergym.export.card import write_card

    write_card(
        out,
        result.instances,
        result.drops,
        config=config,
        usage=usage_json(result.usage),
        builder_note=EXTRACTIVE_NOTE if builder == "extractive" else None,
        leakage=None,
        failures=result.failures,
    )


def _summary_json(result: BuildResult, resuming: bool) -> dict[str, object]:
    return {
        "out": str(result.out),
        "papers": result.papers,
        "instances": len(result.instances),
        "resumed_papers": result.resumed if resuming else 0,
        "drops": [d.model_dump() for d in result.drops],
        "failed": [f.model_dump() for f in result.failures],
        "usage": usage_json(result.usage),
    }


def _reasons_table(title: str, rows: list[tuple[str, str]]) -> Table:
    reasons = Table(title=title, title_justify="left")
    for column in ("step", "reason", "count"):
        reasons.add_column(column, overflow="fold")
    for (step, reason), count in Counter((s, r[:90]) for s, r in rows).most_common():
        reasons.add_row(step, reason, str(count))
    return reasons


def _print_summary(result: BuildResult, resuming: bool) -> None:
    table = Table(title=f"Build: {result.out}", title_justify="left", show_header=False)
    table.add_row("papers", str(result.papers))
    table.add_row("instances", str(len(result.instances)))
    if resuming:
        table.add_row("already finished before this run", str(result.resumed))
    criteria = [c for i in result.instances for c in i.rubric.specific]
    table.add_row(
        "specific criteria",
        f"{len(criteria)} ({sum(c.dimension == 'method' for c in criteria)} method)",
    )
    table.add_row("dropped", str(len(result.drops)))
    if result.failures:
        table.add_row("failed (endpoint; retried next run)", str(len(result.failures)))
    stdout.print(table)
    for title, rows in (
        ("Drops by step and reason", result.drops),
        ("Not finished: the LLM endpoint failed (run again to retry)", result.failures),
    ):
        if rows:
            stdout.print(_reasons_table(title, [(r.step, r.reason) for r in rows]))
    if result.usage is not None:
        stdout.print(usage_table(result.usage, per=("instance", max(len(result.instances), 1))))
    stdout.print(f"wrote {result.out / 'instances.jsonl'}, {result.out / 'card.md'}")
