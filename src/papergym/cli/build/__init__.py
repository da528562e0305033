"""``papergym build``: papers → RL instances (:func:`papergym.recipes.run.build_papers`), or with
``--recipe ares`` a corpus of documents → instances (:mod:`papergym.cli.build.ares`).

This module parses the options and resolves the configuration; :mod:`.papers` and :mod:`.ares`
print each build's summary and decide its exit code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from papergym.cli.common import (
    OVERRIDES_HELP,
    ConfigOption,
    DebugOption,
    JsonOption,
    paths_and_overrides,
    reports_errors,
    resolve,
)
from papergym.cli.flags import Given, config_flags, llm_options
from papergym.cli.groups import single_app

app = single_app()

SourcesArgument = Annotated[
    list[str],
    typer.Argument(
        help="Paper sources, as for `papergym ingest`: paper folders, .tex files, "
        "arXiv e-prints, or folders of papers; and config overrides: " + OVERRIDES_HELP,
        show_default=False,
    ),
]
OutOption = Annotated[
    Path,
    typer.Option(
        "-o",
        "--out",
        help="Output folder (created; an existing one from the same build settings is "
        "resumed, one from other settings refused, naming the keys that differ).",
        show_default=False,
    ),
]


@app.command("build")
@reports_errors
@config_flags(
    recipe="build.recipe",
    builder="build.builder",
    limit="build.limit",
    leakage_judge="build.leakage_judge",
    paper_concurrency="build.paper_concurrency",
    mix="build.mix",
    target="build.target",
    seed="build.seed",
)
@llm_options()
def build(
    sources: SourcesArgument,
    out: OutOption,
    config: ConfigOption = None,
    llm: Given = (),
    json_output: JsonOption = False,
    debug: DebugOption = False,
    given: Given = (),
) -> None:
    """Build RL instances (question, reference answer, leakage-checked rubric) from papers.

    Writes OUT/instances.jsonl, dropped.jsonl, failed.jsonl, per-paper records under papers/, card.md, card.json, build.yaml (the settings a resumed build must match) and config.yaml (the resolved configuration, secrets masked). Re-running the same command resumes: finished papers are skipped and LLM answers come from the cache.

    Settings come from -c FILE (its build and llm sections), key=value arguments (build.recipe=innov, llm.default.model=M) and the flags, which set the same keys; see `papergym config reference`.

    A paper whose LLM endpoint failed (unreachable, server errors, answers still cut off, budget spent) is not dropped: it is listed in failed.jsonl and retried by the next run. Exit code 0 when instances were built and nothing failed; 1 when papers failed for the endpoint (run the same command again); 2 on bad input or when no instance could be built.
    """
    paths, overrides = paths_and_overrides(sources, "paper sources")
    resolved = resolve(config, overrides, [*given, *llm])
    if resolved.build.recipe == "ares":  # documents, not papers: sharded and streamed
        from papergym.cli.build.ares import build_ares

        build_ares(paths, out, resolved, json_output)
        return
    from papergym.cli.build.papers import build_papers_command

    build_papers_command(paths, out, resolved, json_output)
