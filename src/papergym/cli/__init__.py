"""The ``papergym`` command line.

Every verb is a module of this package that only parses its options and calls a package's
``run`` code; it is imported when that verb runs, so ``papergym --help`` costs little more
than typer itself. Conventions every command follows: a readable summary by default and the
same information as JSON with ``--json``; exit code 0 on success, 2 on bad input or usage, 1 on
an internal failure; a one-line error message, with the traceback only under ``--debug``.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from papergym.cli.groups import HELP_SETTINGS, LazyGroup, Verb

VERBS: tuple[Verb, ...] = (
    Verb(
        "build",
        "build",
        "Build RL instances (question, reference answer, leakage-checked rubric) from papers.",
    ),
    Verb(
        "audit",
        "audit",
        "Measure criterion leakage: the share of rubric criteria a reader could infer from the "
        "question alone.",
    ),
    Verb(
        "export",
        "export",
        "Export built instances for verl, TRL, Hugging Face datasets, parquet or a verifiers "
        "environment, with a dataset card.",
    ),
    Verb(
        "score",
        "score",
        "Score answers against their instances' rubrics; unscored answers are reported, never 0.",
    ),
    Verb(
        "serve-reward",
        "serve_reward",
        "Serve the rubric reward (or, with --reward review, the review reward) over HTTP: POST "
        "/get_reward (OpenRLHF), POST /score, GET /health.",
    ),
    Verb(
        "check-reward",
        "check_reward",
        "The reward's self-test: gaming probes (empty, restated question, other paper, padded, "
        "criteria list, shuffled or dressed words, judge injection) and half of the criteria.",
    ),
    Verb(
        "calibrate-reward",
        "calibrate_reward",
        "Calibrate the offline judge: choose its lexical weight and threshold on built instances.",
    ),
    Verb(
        "judge",
        "judge",
        "Measure a rubric judge or a reviewer against human labels (calibrate: agreement, "
        "Cohen's kappa, self-consistency); fit the offline judge (fit, alias of "
        "calibrate-reward).",
    ),
    Verb(
        "fake-llm",
        "fake_llm",
        "Serve a fake OpenAI-compatible LLM: dry runs of the LLM recipe, and faults on demand.",
    ),
    Verb(
        "report",
        "report",
        "Write a self-contained HTML report (plots, tables with intervals, cost and latency, a "
        "browser of every question) and report.md.",
    ),
    Verb(
        "eval",
        "eval",
        "Evaluate systems on a build's questions: answers, rubric scores, intervals, differences.",
    ),
    Verb(
        "compare",
        "compare",
        "Compare the answers of several systems with an LLM judge: win, tie and loss rates with "
        "intervals.",
    ),
    Verb(
        "fetch",
        "fetch",
        "Download arXiv e-print sources and their metadata (id, version, title, categories, "
        "dates, licence) into PAPERS/<id>/.",
    ),
    Verb(
        "ingest",
        "ingest",
        "Read LaTeX paper sources into clean papers (title, abstract, sections) as papers.jsonl.",
    ),
    Verb(
        "llm-check",
        "llm_check",
        "Check that each configured LLM endpoint answers, and answers valid JSON for a schema.",
    ),
    Verb(
        "train",
        "train",
        "Train a research planner on a build: OPSD, GRPO, SFT, the two-stage pipeline, or a verl "
        "bundle for multi-node GRPO; or a paper writer: SFT on real papers (write-sft), then by "
        "review (cycle).",
    ),
    Verb(
        "review",
        "review",
        "Simulated peer review: review papers (the default subcommand, run: `papergym review "
        "PAPER -o OUT`), fit the offline baseline, evaluate a reviewer against human ratings, "
        "compare groups of papers by their scores.",
    ),
    Verb(
        "write",
        "write",
        "Write LaTeX papers from bibliographies (the default subcommand, run: `papergym write BIB "
        "-o OUT`), and prepare training data for the writer from real papers (prepare).",
    ),
    Verb("config", "config", "Show the resolved configuration, or the reference of every key."),
    Verb(
        "llm-prepare",
        "llm_prepare",
        "Prepare a model folder from a GGUF file, for servers that cannot read GGUF (transformers "
        "serve).",
    ),
)


class PaperGymGroup(LazyGroup):
    verbs = VERBS


app = typer.Typer(
    name="papergym",
    help="Turn research papers into rubric-graded RL environments for research planning.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help at any width (see groups.HELP_SETTINGS)
    context_settings=HELP_SETTINGS,
    cls=PaperGymGroup,
)


def _version(value: bool) -> None:
    if value:
        from papergym import __version__

        print(f"papergym {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """PaperGym: research papers → rubric-graded RL environments for research planning."""


def main() -> None:
    """Entry point of the ``papergym`` script."""
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover - interactive only
        sys.exit(130)
