"""Reviewing papers into an output folder (``papergym review``), callable from Python.

:func:`review` reads every paper first (a bad one is bad input and nothing is written), then
reviews them — the LLM reviewer when an LLM is configured, else the offline baseline —
appending each paper's record to ``OUT/reviews.jsonl`` as it finishes, so an interrupted run
resumes where it stopped (a finished paper is not reviewed again; a folder reviewed with other
settings is refused, see :mod:`papergym.runfolder`). At the end it writes ``OUT/reviews.md``
and returns a :class:`ReviewRun`, which the command line prints.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
from papergym.eval.log import RecordLog
from papergym.jsonl import append_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import BudgetExceededError, LLMError
from papergym.llm.usage import UsageTracker
from papergym.redact import redact
from papergym.review.budget import BudgetGate
from papergym.review.papers import PaperText, load_papers
from papergym.review.records import PaperReview
from papergym.review.report import reviews_markdown, summary
from papergym.review.reviewer import MetaReviewUnreachable, Reviewer, unfinished
from papergym.review.reward import reviewer_name
from papergym.review.runtime import checked_threshold, make_reviewer, reviewer_kind
from papergym.review.settings import ReviewSection
from papergym.runfolder import RunRecord, check_output_path, resumes

REVIEWS_FILE = "reviews.jsonl"
MARKDOWN_FILE = "reviews.md"
PLAN_FILE = "review.json"
CONFIG_FILE = "config.yaml"
PLAN_RECORD = RunRecord(PLAN_FILE, "review")
"""review.json: what a resumed run must share with the first (see :func:`review_plan`)."""

Started = Callable[[int, int], None]
"""Told ``(papers, papers already reviewed)`` once the folder is checked, before reviewing."""
Advanced = Callable[[str], None]
"""Told a paper's id each time one is done (reviewed, or not finished)."""


@dataclass(frozen=True)
class ReviewRun:
    """What a review run left in ``out``: every paper's latest record (the papers given, in
    their order), how many were reviewed by an earlier run, the papers not finished (one line
    each: the same call retries them), and the LLM usage (None for the offline baseline)."""

    out: Path
    records: list[PaperReview]
    resumed: int
    reviewed: int
    """Papers this run set out to review (the ones not reviewed before)."""
    failures: list[str]
    usage: UsageTracker | None

    def summary(self) -> dict[str, Any]:
        """Papers, scored or not, reviews, mean score and decisions (see :func:`summary`)."""
        return summary(self.records, resumed=self.resumed, failed=len(self.failures))


def review_plan(section: ReviewSection, kind: str, reviewer: Reviewer) -> dict[str, Any]:
    """What a resumed run must share with the first: who reviews, how many, on which scale."""
    model = getattr(reviewer, "model", None)
    return {
        "reviewer": kind,
        "model": model if isinstance(model, str) else reviewer_name(reviewer),
        "reviewers": section.reviewers if kind == "llm" else None,
        "venue": section.venue,
        "threshold": getattr(reviewer, "threshold", section.threshold),
        "max_paper_words": section.max_paper_words if kind == "llm" else None,
        "baseline": str(section.baseline) if kind == "offline" and section.baseline else None,
    }


def check_plan(out: Path, plan: dict[str, Any]) -> bool:
    """Whether ``out`` continues a review run with ``plan``; refuses a folder reviewed with
    other settings (naming what differs) and one that holds no review.json (another command's
    output, or the user's files). Writes nothing."""
    # a key an earlier review.json lacks counts as None, as it always has
    return resumes(
        out, PLAN_RECORD, plan, recorded_identity=lambda old: {k: old.get(k) for k in plan}
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
    advance: Advanced,
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


def review(
    paths: Sequence[Path],
    out: Path,
    section: ReviewSection,
    llm: LLMConfig,
    *,
    saved_config: str | None = None,
    on_start: Started | None = None,
    on_paper: Advanced | None = None,
) -> ReviewRun:
    """Review the papers at ``paths`` into ``out`` (resuming it) and write ``reviews.md``.

    ``saved_config`` is written as ``OUT/config.yaml`` (the resolved configuration of the
    command, as every command saves it). Bad input (a paper, the threshold, the folder, an
    unreachable reviewer endpoint) raises :class:`BadInputError` before anything is written.
    """
    checked_threshold(section)
    check_output_path(out)
    papers = load_papers(list(paths))  # every paper read before anything is written
    kind = reviewer_kind(section, llm)

    async def run() -> tuple[int, list[str], UsageTracker | None]:
        client = LLMClient.from_config(llm) if kind == "llm" else None
        try:
            reviewer = await _reviewer(section, llm, client)
            todo = _start(out, review_plan(section, kind, reviewer), papers, saved_config)
            if on_start is not None:
                on_start(len(papers), len(papers) - len(todo))
            concurrency, advance = section.paper_concurrency, on_paper or _ignore
            failures = await review_papers(
                reviewer, todo, out, concurrency, advance, _budget_gate(client)
            )
            return len(todo), failures, client.tracker if client is not None else None
        finally:
            if client is not None:
                await client.aclose()

    reviewed, failures, usage = asyncio.run(run())
    latest = finished(out)
    records = [latest[p.paper_id] for p in papers if p.paper_id in latest]
    write_text_atomic(out / MARKDOWN_FILE, reviews_markdown(records))
    return ReviewRun(out, records, len(papers) - reviewed, reviewed, failures, usage)


async def _reviewer(section: ReviewSection, llm: LLMConfig, client: LLMClient | None) -> Reviewer:
    """The reviewer ``section`` describes, once its endpoint answers (an unreachable one is
    bad input, found before the output folder is created)."""
    if client is not None:
        try:
            await client.ping(["reviewer"])
        except LLMError as error:
            raise BadInputError(None, f"reviewer: {redact(str(error).strip())}") from None
    return make_reviewer(section, llm, client)


def _budget_gate(client: LLMClient | None) -> BudgetGate | None:
    """Under llm.budget_tokens (or budget_usd), a paper starts only when its estimate fits."""
    if client is None:
        return None
    return BudgetGate(client.tracker, client.config.for_role("reviewer").model)


def _start(
    out: Path, plan: dict[str, Any], papers: list[PaperText], saved_config: str | None
) -> list[PaperText]:
    """The papers ``out`` has not reviewed yet, once the folder is checked against ``plan`` and
    the plan (and the configuration) recorded in it."""
    check_plan(out, plan)
    done = finished(out)
    todo = [p for p in papers if p.paper_id not in done]
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / PLAN_FILE, json.dumps(plan, indent=1))
    if saved_config is not None:
        write_text_atomic(out / CONFIG_FILE, saved_config)
    return todo


def _ignore(paper_id: str) -> None:
    """No progress to report."""
