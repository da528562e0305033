"""``papergym audit`` as a function: :func:`run_audit`.

It takes the ``audit`` and ``llm`` sections and the rubric datasets, screens every criterion
for overlap with its question (and, with ``audit.judge``, asks the LLM judge), and returns the
report; the command line (:mod:`papergym.cli.audit`) prints it. With an output folder it also
writes the report, every audited criterion, the resolved configuration and, for PaperGym
inputs, the instances with their verdicts attached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from papergym.audit.formats import AuditDataset, AuditFormat, AuditItem, read_dataset
from papergym.audit.judge import judge_items
from papergym.audit.overlap import attach_verdicts, screen_items
from papergym.audit.report import AuditReport, build_report
from papergym.audit.settings import AuditSection
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.usage import UsageTracker
from papergym.records import Instance

REPORT_FILE = "leakage_report.json"
ITEMS_FILE = "audited.jsonl"
INSTANCES_FILE = "instances.jsonl"
CONFIG_FILE = "audit.config.yaml"


@dataclass(frozen=True)
class AuditResult:
    """The report (with the files written, when an output folder was given) and the judge's
    LLM calls (None when the judge did not run)."""

    report: AuditReport
    usage: UsageTracker | None


def run_audit(
    paths: Sequence[Path],
    section: AuditSection,
    llm: LLMConfig,
    *,
    format: AuditFormat = AuditFormat.auto,
    out: Path | None = None,
    config_yaml: str | None = None,
    on_start: Callable[[int], None] | None = None,
    on_judged: Callable[[AuditItem], None] | None = None,
) -> AuditResult:
    """Audit the datasets at ``paths`` (read as ``format``; auto: detected per file).

    ``out``: the folder to write into, with ``config_yaml`` (the resolved configuration) as
    :data:`CONFIG_FILE`. ``on_start`` is told how many items the judge will judge, once it has
    answered; ``on_judged`` of each item judged. Bad input (a dataset, ``out``, a judge asked
    for without an LLM) is a :class:`~papergym.errors.BadInputError`, raised before anything
    is written.
    """
    judge = _judge_config(llm) if section.judge else None
    if out is not None and out.exists() and not out.is_dir():
        raise BadInputError(out, "output path exists and is not a folder")
    datasets = [read_dataset(path, format) for path in paths]
    items = screen_items(
        [item for d in datasets for item in d.items],
        lexical_threshold=section.lexical_threshold,
        embedding_threshold=section.embedding_threshold,
    )
    tracker: UsageTracker | None = None
    if judge is not None:
        items, tracker = asyncio.run(_judge(judge, items, on_start, on_judged))
    datasets = _regroup(datasets, items)
    thresholds = {"lexical": section.lexical_threshold, "embedding": section.embedding_threshold}
    report = build_report(datasets, top=section.top, thresholds=thresholds)
    if tracker is not None:
        report = report.model_copy(update={"usage": tracker.as_dict()})
    if out is not None:
        written = _write(out, datasets, report, config_yaml)
        report = report.model_copy(update={"written": [str(p) for p in written]})
    return AuditResult(report, tracker)


def _judge_config(config: LLMConfig) -> LLMConfig:
    """The LLM configuration for the judge; none at all is a usage error (exit 2)."""
    if not config.configured:
        raise BadInputError(
            None, "--judge needs an LLM: pass --llm-config, or --base-url and --model"
        )
    config.for_role("judge")  # a config without a judge (and no default) fails here, not later
    return config


async def _judge(
    config: LLMConfig,
    items: list[AuditItem],
    on_start: Callable[[int], None] | None,
    on_judged: Callable[[AuditItem], None] | None,
) -> tuple[list[AuditItem], UsageTracker]:
    llm = LLMClient.from_config(config)
    try:
        await llm.ping(["judge"])  # fail fast on a dead endpoint, before any item
        if on_start is not None:
            on_start(len(items))
        judged = await judge_items(llm, items, on_done=on_judged)
    finally:
        await llm.aclose()
    return judged, llm.tracker


def _regroup(datasets: Sequence[AuditDataset], items: Sequence[AuditItem]) -> list[AuditDataset]:
    """The datasets with their audited items, which come back in the order they were sent."""
    regrouped: list[AuditDataset] = []
    start = 0
    for dataset in datasets:
        end = start + len(dataset.items)
        regrouped.append(replace(dataset, items=list(items[start:end])))
        start = end
    return regrouped


def _write(
    out: Path, datasets: Sequence[AuditDataset], report: AuditReport, config_yaml: str | None
) -> list[Path]:
    """The report, every audited item, the configuration, and our own instances with their
    verdicts attached."""
    written = [out / REPORT_FILE, out / ITEMS_FILE]
    write_jsonl(out / ITEMS_FILE, (item for d in datasets for item in d.items))
    if config_yaml is not None:
        write_text_atomic(out / CONFIG_FILE, config_yaml)
        written.append(out / CONFIG_FILE)
    audited: list[Instance] = [
        attach_verdicts(instance, item)
        for d in datasets
        if d.instances is not None
        for instance, item in zip(d.instances, d.items, strict=True)
    ]
    if audited:
        write_jsonl(out / INSTANCES_FILE, audited)
        written.append(out / INSTANCES_FILE)
    final = report.model_copy(update={"written": [str(p) for p in written]})
    write_text_atomic(out / REPORT_FILE, final.model_dump_json(indent=2) + "\n")
    return written
