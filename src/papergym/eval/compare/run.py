"""``papergym compare`` as a function: every question × ordering × judge asked once, the
verdicts logged as they come, and the summary written when none is missing.

:func:`run_compare` takes the ``compare`` and ``llm`` sections and the eval folders and returns
a :class:`CompareResult`; ``papergym compare`` (:mod:`papergym.cli.compare`) parses its options,
shows the progress and prints the result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym.errors import BadInputError
from papergym.eval.compare.inputs import (
    EvalFolder,
    check_same_data,
    compared_systems,
    load_questions,
    read_eval_folder,
)
from papergym.eval.compare.judge import (
    Judge,
    RunOutcome,
    Task,
    check_resumable,
    plan_tasks,
    resolve_judges,
    run_tasks,
)
from papergym.eval.compare.orderings import Design, orderings_of
from papergym.eval.compare.prompt import setup_id
from papergym.eval.compare.records import (
    CONFIG_FILE,
    SUMMARY_FILE,
    VERDICTS_FILE,
    CompareSummary,
    CompareVerdict,
)
from papergym.eval.compare.settings import CompareSection
from papergym.eval.compare.summary import summarise
from papergym.eval.evaluate import response_cache
from papergym.eval.log import RecordLog
from papergym.jsonl import write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import LLMError
from papergym.llm.usage import UsageTracker
from papergym.redact import redact
from papergym.runfolder import RunRecord, refuse_foreign

FOLDER = RunRecord(VERDICTS_FILE, "compare")
"""What marks a compare folder: its verdicts.jsonl, created before anything else."""


@dataclass(frozen=True)
class CompareResult:
    """What a comparison left: the summary written (None while verdicts are missing: the
    same call asks for them again), the verdicts that failed at their endpoint, how many were
    planned and how many are kept in ``log``, and the judges' LLM calls."""

    out: Path
    summary: CompareSummary | None
    failed: list[str]
    planned: int
    kept: int
    log: Path
    usage: UsageTracker


def refuse_foreign_folder(out: Path) -> None:
    """``out`` must be new, empty, or a compare folder (its verdicts.jsonl, created first,
    says so): compare writes config.yaml and summary.json, and another command's folder (an
    eval folder among them) has its own."""
    refuse_foreign(out, FOLDER)


@dataclass(frozen=True)
class _Plan:
    """Everything asked, read and checked before the first verdict."""

    folders: list[EvalFolder]
    judges: list[Judge]
    systems: list[str]
    questions: list[str]
    answers: dict[str, dict[str, str]]
    design: Design
    orderings: list[tuple[str, ...]]
    setup: str
    tasks: list[Task]


def _plan(
    eval_dirs: Sequence[Path], section: CompareSection, llm: LLMConfig, data: Path | None
) -> _Plan:
    judges = resolve_judges(section.judges, llm)
    folders = [read_eval_folder(path, section.sample) for path in eval_dirs]
    check_same_data(folders)
    systems = compared_systems(folders)
    questions = load_questions(folders[0].summary, data)
    kind, orderings = orderings_of(systems)
    return _Plan(
        folders=folders,
        judges=judges,
        systems=systems,
        questions=[q.id for q in questions],
        answers={name: texts for f in folders for name, texts in f.answers.items()},
        design=kind,
        orderings=orderings,
        setup=setup_id(section),
        tasks=plan_tasks(questions, orderings, judges),
    )


def _clients(judges: Sequence[Judge], llm: LLMConfig) -> dict[str, LLMClient]:
    """A client per judge, sharing one cache and one usage tracker (and so one budget)."""
    cache = response_cache(llm)
    tracker = UsageTracker(
        prices=dict(llm.prices), budget_usd=llm.budget_usd, budget_tokens=llm.budget_tokens
    )
    return {j.name: LLMClient(j.config, cache=cache, tracker=tracker) for j in judges}


async def _judge_all(
    plan: _Plan,
    llm: LLMConfig,
    tasks: Sequence[Task],
    section: CompareSection,
    log: RecordLog[CompareVerdict],
    on_start: Callable[[], None],
    on_verdict: Callable[[CompareVerdict], None],
) -> tuple[RunOutcome, UsageTracker]:
    clients = _clients(plan.judges, llm)
    tracker = next(iter(clients.values())).tracker
    try:
        for judge in plan.judges:  # a dead endpoint is bad input before any question is asked
            try:
                await clients[judge.name].ping([judge.role])
            except LLMError as error:
                raise BadInputError(None, redact(f"judge {judge.name}: {error}")) from None
        on_start()

        def done(verdict: CompareVerdict) -> None:
            log.append([verdict])
            on_verdict(verdict)

        outcome = await run_tasks(clients, tasks, plan.answers, section, plan.setup, done)
    finally:
        for client in clients.values():
            await client.aclose()
    return outcome, tracker


def _in_plan_order(
    tasks: Sequence[Task], setup: str, verdicts: Sequence[CompareVerdict]
) -> list[CompareVerdict]:
    """One verdict per task, in the plan's order; of a key recorded twice, the first."""
    keys = {t.key(setup) for t in tasks}
    unique = {v.key: v for v in reversed(verdicts) if v.key in keys}
    return [unique[t.key(setup)] for t in tasks]


def _summary(
    plan: _Plan,
    verdicts: Sequence[CompareVerdict],
    eval_dirs: Sequence[Path],
    section: CompareSection,
    usage: UsageTracker,
) -> CompareSummary:
    return summarise(
        _in_plan_order(plan.tasks, plan.setup, verdicts),
        folders=eval_dirs,
        data_id=plan.folders[0].summary.data_id,
        systems=plan.systems,
        judges=[j.name for j in plan.judges],
        judge_models={j.name: j.model for j in plan.judges},
        questions=plan.questions,
        kind=plan.design,
        orderings=plan.orderings,
        section=section,
        usage=usage.as_dict(),
    )


def _ignore(*_: object) -> None:
    return None


def run_compare(
    eval_dirs: Sequence[Path],
    out: Path,
    *,
    section: CompareSection,
    llm: LLMConfig,
    config_yaml: str,
    data: Path | None = None,
    on_start: Callable[[int], None] = _ignore,
    on_verdict: Callable[[CompareVerdict], None] = _ignore,
) -> CompareResult:
    """Compare the systems of ``eval_dirs`` into ``out``, resuming what an earlier run left.

    ``llm`` holds the judges' endpoints, cache, prices and budget; ``config_yaml`` is the
    resolved configuration saved as config.yaml; ``data`` is the data the folders were
    evaluated on, when it is no longer where their summaries say. Everything is read and
    checked (bad input raises :class:`BadInputError`, with nothing written) before the folder
    appears; then ``on_start`` gets the number of verdicts to ask for and ``on_verdict`` each
    verdict as it is logged.
    """
    refuse_foreign_folder(out)
    plan = _plan(eval_dirs, section, llm, data)
    log: RecordLog[CompareVerdict] = RecordLog(out / VERDICTS_FILE, CompareVerdict)
    done = log.read()
    check_resumable(done, {t.key(plan.setup) for t in plan.tasks}, log.path)
    finished = {v.key for v in done}
    todo = [t for t in plan.tasks if t.key(plan.setup) not in finished]

    def start() -> None:  # once every check passed: bad input leaves nothing behind
        out.mkdir(parents=True, exist_ok=True)
        log.path.touch()  # first: it marks the folder as compare's (refuse_foreign_folder)
        write_text_atomic(out / CONFIG_FILE, config_yaml)
        on_start(len(todo))

    outcome, tracker = asyncio.run(_judge_all(plan, llm, todo, section, log, start, on_verdict))
    kept = len(done) + len(outcome.verdicts)
    if outcome.failed:
        return CompareResult(out, None, outcome.failed, len(plan.tasks), kept, log.path, tracker)
    summary = _summary(plan, [*done, *outcome.verdicts], eval_dirs, section, tracker)
    write_text_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    return CompareResult(out, summary, [], len(plan.tasks), kept, log.path, tracker)
