"""``papergym review run`` (``papergym review PAPER... -o OUT``): review papers with simulated
reviewers, or the offline baseline when no LLM is configured (:mod:`papergym.review.run`)."""

from __future__ import annotations

import json
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
    numbers_table,
    paths_and_overrides,
    reports_errors,
    resolve,
    stdout,
)
from papergym.cli.flags import Given, config_flags, llm_options
from papergym.cli.progress import ProgressBar
from papergym.llm.report import usage_table
from papergym.review.run import MARKDOWN_FILE, REVIEWS_FILE, ReviewRun, review
from papergym.settings.load import config_yaml

PAPERS_SHOWN = 20
"""Papers listed one per row in the summary; more are summed up only (reviews.md has all)."""


PapersArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="PAPER... [KEY=VALUE]...",
        help="Papers: anything `papergym ingest` reads (paper folders, .tex files, arXiv "
        "e-prints, folders of those) and plain-text or markdown papers (.txt, .md; a folder "
        "of them). The paper id is the file or folder name without its suffix. Then "
        "optional config overrides: " + OVERRIDES_HELP,
        show_default=False,
    ),
]
OutOption = Annotated[
    Path,
    typer.Option(
        "-o",
        "--out",
        help="Output folder: reviews.jsonl (one record per paper), reviews.md, review.json "
        "(the settings a resumed run must match), config.yaml. Running again resumes.",
        show_default=False,
    ),
]


@reports_errors
@config_flags(
    reviewers="review.reviewers", reviewer="review.reviewer", threshold="review.threshold"
)
@llm_options()
def review_run(
    arguments: PapersArgument,
    out: OutOption,
    config: ConfigOption = None,
    llm: Given = (),
    json_output: JsonOption = False,
    debug: DebugOption = False,
    given: Given = (),
) -> None:
    """Review papers with simulated reviewers: reviews, mean rating, decision, meta-review.

    Each paper is anonymised (author block, venue marks, acknowledgements, funding, its code URLs: what was removed is recorded), fitted to review.max_paper_words by a recorded rule, and reviewed by review.reviewers independent LLM calls (distinct profiles and seeds). A review still unparseable after the LLM layer's repairs, or cut by the token limit, is unscored; the paper's score is the mean rating of the rest (unscored when none is left) and the decision is score >= review.threshold. With no LLM configured the offline baseline predicts the score instead (reported as a baseline).

    A bad paper (missing, empty, binary, unreadable, or a link leading out of a folder given) is one line and exit 2, with nothing written. Papers whose endpoint failed, or one of whose reviews was cut by the token limit (raise review.max_tokens), are not saved: exit 1, and the same command retries them; finished papers are never reviewed again. Under llm.budget_tokens (or budget_usd) a paper starts only when its estimated cost fits in what is left, so the papers that start finish and are saved, and the rest wait for the next run.
    """
    paths, overrides = paths_and_overrides(arguments, "PAPER")
    settings = resolve(config, overrides, [*given, *llm])
    with ProgressBar("review") as bar:
        run = review(
            paths,
            out,
            settings.review,
            settings.llm,
            saved_config=config_yaml(settings),
            on_start=bar.start,
            on_paper=bar.advance,
        )
    if json_output:
        usage = run.usage.as_dict() if run.usage is not None else None
        print(json.dumps({**run.summary(), "out": str(out), "usage": usage}, indent=2))
    else:
        _print_summary(run)
    if run.failures:
        exit_unfinished(
            run.failures,
            "paper(s) not reviewed; finished papers are kept: run the same command again",
        )


def _print_summary(run: ReviewRun) -> None:
    facts = run.summary()
    title = f"Review: {facts['papers']} paper(s), {facts['reviewer']}"
    if run.records and len(run.records) <= PAPERS_SHOWN:
        table = numbers_table(
            title, ("paper", "score", "decision", "reviews", "unscored", "ratings")
        )
        for r in run.records:
            table.add_row(
                r.paper_id,
                "-" if r.score is None else f"{r.score:.2f}",
                r.decision or "unscored",
                str(len(r.reviews)),
                str(len(r.unscored)),
                " ".join(str(v.rating) for v in r.reviews) or "-",
            )
        stdout.print(table)
    else:
        stdout.print(title)  # a title above the narrow totals table would wrap
    totals = Table(show_header=False)
    for key, value in facts.items():
        if key not in ("reviewer", "baseline"):
            shown = "-" if value is None else f"{value:.2f}" if isinstance(value, float) else value
            totals.add_row(key.replace("_", " "), str(shown))
    stdout.print(totals)
    if run.usage is not None and run.usage.rows:
        stdout.print(usage_table(run.usage, per=("paper", max(1, run.reviewed))))
    stdout.print(f"wrote {run.out}/{{{REVIEWS_FILE}, {MARKDOWN_FILE}}}")
