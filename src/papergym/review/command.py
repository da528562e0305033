"""``papergym review``: simulated peer review of papers (``run``, the default subcommand), and the
group that ``review fit`` and ``review eval`` join.

``papergym review PAPER... -o OUT`` reads every paper first (a bad one is one line, exit 2,
nothing written), then reviews them — the LLM reviewer when an LLM is configured, else the
offline baseline — appending each paper's record to ``OUT/reviews.jsonl`` as it finishes, so an
interrupted run resumes where it stopped (a finished paper is not reviewed again). At the end it
writes ``OUT/reviews.md`` and prints a summary table and the LLM usage table.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

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
from papergym.eval.log import RecordLog
from papergym.jsonl import append_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.report import usage_table
from papergym.llm.types import BudgetExceededError, LLMError
from papergym.redact import redact
from papergym.review.budget import BudgetGate
from papergym.review.papers import PaperText, load_papers
from papergym.review.records import PaperReview
from papergym.review.report import reviews_markdown, summary
from papergym.review.reviewer import MetaReviewUnreachable, Reviewer, unfinished
from papergym.review.reward import reviewer_name
from papergym.review.runtime import checked_threshold, make_reviewer, reviewer_kind
from papergym.settings.cli import (
    OVERRIDES_HELP,
    ConfigOption,
    flags,
    llm_flags,
    paths_and_overrides,
    resolve,
)
from papergym.settings.load import config_yaml
from papergym.settings.models import PaperGymConfig

REVIEWS_FILE = "reviews.jsonl"
MARKDOWN_FILE = "reviews.md"
PLAN_FILE = "review.json"
CONFIG_FILE = "config.yaml"
PAPERS_SHOWN = 20
"""Papers listed one per row in the summary; more are summed up only (reviews.md has all)."""

review_app = typer.Typer(
    name="review",
    help="Simulated peer review: review papers (the default subcommand, run: `papergym review "
    "PAPER -o OUT`), fit the offline baseline, evaluate a reviewer against human ratings.",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=HELP_SETTINGS,
    cls=DefaultCommandGroup,
)


def review_plan(settings: PaperGymConfig, kind: str, reviewer: Reviewer) -> dict[str, Any]:
    """What a resumed run must share with the first: who reviews, how many, on which scale."""
    review = settings.review
    model = getattr(reviewer, "model", None)
    return {
        "reviewer": kind,
        "model": model if isinstance(model, str) else reviewer_name(reviewer),
        "reviewers": review.reviewers if kind == "llm" else None,
        "venue": review.venue,
        "threshold": getattr(reviewer, "threshold", review.threshold),
        "max_paper_words": review.max_paper_words if kind == "llm" else None,
        "baseline": str(review.baseline) if kind == "offline" and review.baseline else None,
    }


def check_plan(out: Path, plan: dict[str, Any]) -> None:
    """Refuse to resume a folder reviewed with other settings, naming what differs."""
    path = out / PLAN_FILE
    if not path.is_file():
        if out.is_dir() and any(out.iterdir()):  # another command's output, or the user's files
            raise BadInputError(
                out,
                "holds files but no review.json: not a `papergym review` folder; use another -o",
            )
        return
    try:
        before = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        raise BadInputError(path, "unreadable; remove it or use another -o folder") from None
    changed = [
        f"{key}: {before.get(key)} → {plan[key]}" for key in plan if before.get(key) != plan[key]
    ]
    if changed:
        raise BadInputError(
            out,
            f"was reviewed with other settings ({'; '.join(changed)}); use another -o folder "
            "or the same settings",
        )


def finished(out: Path) -> dict[str, PaperReview]:
    """Papers already reviewed in ``out`` (the latest record of each). A run killed while it
    appended a record leaves half a line: it is cut off (that paper is reviewed again)."""
    return {r.paper_id: r for r in RecordLog(out / REVIEWS_FILE, PaperReview).read()}


async def review_papers(
    reviewer: Reviewer,
    papers: list[PaperText],
    out: Path,
    concurrency: int,
    advance: Callable[[str], None],
    gate: BudgetGate | None = None,
) -> list[str]:
    """Review ``papers``, appending each record as it finishes; the failures. A paper whose
    endpoint never answered, or one of whose reviews the token limit cut, is not saved, so the
    next run retries it; under a budget (``gate``) a paper starts only when it fits."""
    bound = asyncio.Semaphore(concurrency)
    failures: list[str] = []
    estimate = getattr(reviewer, "estimated_usage", None)

    async def one(paper: PaperText) -> None:
        async with bound:
            try:
                if gate is None or estimate is None:
                    record = await reviewer.review(paper.paper_id, paper.text)
                else:
                    async with gate.paper(estimate(paper.text)):
                        record = await reviewer.review(paper.paper_id, paper.text)
            except (BudgetExceededError, MetaReviewUnreachable) as error:  # not saved: retried
                failures.append(f"{paper.source}: {error}")
                advance(paper.paper_id)
                return
        record = record.model_copy(update={"source": paper.shown})
        if (why := unfinished(record)) is not None:
            failures.append(f"{paper.source}: {why}")
        else:
            append_jsonl(out / REVIEWS_FILE, record)
        advance(paper.paper_id)

    await asyncio.gather(*(one(p) for p in papers))
    return failures


async def _run(
    settings: PaperGymConfig, papers: list[PaperText], out: Path
) -> tuple[list[PaperReview], int, list[str], LLMClient | None]:
    kind = reviewer_kind(settings)
    llm = LLMClient.from_config(settings.llm) if kind == "llm" else None
    try:
        if llm is not None:
            try:  # fail fast, before the output folder is created
                await llm.ping(["reviewer"])
            except LLMError as error:
                raise BadInputError(None, f"reviewer: {redact(str(error).strip())}") from None
        reviewer = make_reviewer(settings, llm)
        plan = review_plan(settings, kind, reviewer)
        check_plan(out, plan)
        done = finished(out)
        todo = [p for p in papers if p.paper_id not in done]
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / PLAN_FILE, json.dumps(plan, indent=1))
        write_text_atomic(out / CONFIG_FILE, config_yaml(settings))
        gate = BudgetGate(llm.tracker, llm.config.for_role("reviewer").model) if llm else None
        with _progress(len(papers), len(papers) - len(todo)) as advance:
            failures = await review_papers(
                reviewer, todo, out, settings.review.paper_concurrency, advance, gate
            )
        latest = finished(out)
        records = [latest[p.paper_id] for p in papers if p.paper_id in latest]
        return records, len(papers) - len(todo), failures, llm
    finally:
        if llm is not None:
            await llm.aclose()


class _progress:
    """A progress bar over the papers (off when stderr is not a terminal)."""

    def __init__(self, total: int, done: int) -> None:
        self.bar = Progress(
            TextColumn("review"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=stderr,
            transient=True,
            disable=not stderr.is_terminal,
        )
        self.task = self.bar.add_task("", total=total, completed=done)

    def __enter__(self) -> Callable[[str], None]:
        self.bar.__enter__()
        return lambda paper_id: self.bar.update(self.task, advance=1, description=paper_id)

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)


def _print_summary(
    records: list[PaperReview], facts: dict[str, Any], out: Path, llm: LLMClient | None, new: int
) -> None:
    title = f"Review: {facts['papers']} paper(s), {facts['reviewer']}"
    if records and len(records) <= PAPERS_SHOWN:
        table = Table(title=title, title_justify="left")
        for column in ("paper", "score", "decision", "reviews", "unscored", "ratings"):
            table.add_column(column, justify="left" if column == "paper" else "right")
        for r in records:
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
    if llm is not None and llm.tracker.rows:
        stdout.print(usage_table(llm.tracker, per=("paper", max(1, new))))
    stdout.print(f"wrote {out}/{{{REVIEWS_FILE}, {MARKDOWN_FILE}}}")


@review_app.command("run")
@reports_errors
def review_run(
    arguments: Annotated[
        list[str],
        typer.Argument(
            metavar="PAPER... [KEY=VALUE]...",
            help="Papers: anything `papergym ingest` reads (paper folders, .tex files, arXiv "
            "e-prints, folders of those) and plain-text or markdown papers (.txt, .md; a folder "
            "of them). The paper id is the file or folder name without its suffix. Then "
            "optional config overrides: " + OVERRIDES_HELP,
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Output folder: reviews.jsonl (one record per paper), reviews.md, review.json "
            "(the settings a resumed run must match), config.yaml. Running again resumes.",
            show_default=False,
        ),
    ],
    reviewers: Annotated[
        int | None,
        typer.Option(
            "--reviewers",
            min=1,
            help="Sets review.reviewers (default 4): simulated reviewers per paper, each an "
            "independent LLM call with its own profile and sampling seed.",
            show_default=False,
        ),
    ] = None,
    reviewer: Annotated[
        Literal["auto", "llm", "offline"] | None,
        typer.Option(
            "--reviewer",
            help="Sets review.reviewer (default auto). llm: simulated reviewers through the "
            "reviewer role of the llm section; offline: the fitted baseline (no LLM, no "
            "reviews, a predicted score); auto: llm when an LLM is configured.",
            show_default=False,
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            "--threshold",
            help="Sets review.threshold: accept when the score is at least this, on the venue's "
            "rating range (ICLR 1..10; default: the threshold calibrated on human ratings and "
            "shipped with the baseline).",
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
    """Review papers with simulated reviewers: reviews, mean rating, decision, meta-review.

    Each paper is anonymised (author block, venue marks, acknowledgements, funding, its code URLs: what was removed is recorded), fitted to review.max_paper_words by a recorded rule, and reviewed by review.reviewers independent LLM calls (distinct profiles and seeds). A review still unparseable after the LLM layer's repairs, or cut by the token limit, is unscored; the paper's score is the mean rating of the rest (unscored when none is left) and the decision is score >= review.threshold. With no LLM configured the offline baseline predicts the score instead (reported as a baseline).

    A bad paper (missing, empty, binary, unreadable, or a link leading out of a folder given) is one line and exit 2, with nothing written. Papers whose endpoint failed, or one of whose reviews was cut by the token limit (raise review.max_tokens), are not saved: exit 1, and the same command retries them; finished papers are never reviewed again. Under llm.budget_tokens (or budget_usd) a paper starts only when its estimated cost fits in what is left, so the papers that start finish and are saved, and the rest wait for the next run.
    """
    paths, overrides = paths_and_overrides(arguments, "PAPER")
    given = [
        *flags(
            reviewers=("review.reviewers", "--reviewers", reviewers),
            reviewer=("review.reviewer", "--reviewer", reviewer),
            threshold=("review.threshold", "--threshold", threshold),
        ),
        *llm_flags(llm_config, base_url, model, api_key_env, no_cache, cache_dir),
    ]
    settings = resolve(config, overrides, given)
    checked_threshold(settings)
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")
    papers = load_papers(paths)  # every paper read before anything is written
    records, resumed, failures, llm = asyncio.run(_run(settings, papers, out))
    write_text_atomic(out / MARKDOWN_FILE, reviews_markdown(records))
    facts = summary(records, resumed=resumed, failed=len(failures))
    if json_output:
        usage = llm.tracker.as_dict() if llm is not None else None
        print(json.dumps({**facts, "out": str(out), "usage": usage}, indent=2))
    else:
        _print_summary(records, facts, out, llm, len(papers) - resumed)
    if failures:
        exit_unfinished(
            failures,
            "paper(s) not reviewed; finished papers are kept: run the same command again",
        )


# `review fit` and `review eval` (helper A2's files), on this group
from papergym.review.eval_command import eval_command  # noqa: E402
from papergym.review.fit_command import fit_command  # noqa: E402

review_app.command("fit")(fit_command)
review_app.command("eval")(eval_command)
