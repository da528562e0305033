"""A Hugging Face dataset for TRL: GRPO and rubric-conditioned self-distillation (SPEC §4, §7).

TRL passes every column other than ``prompt`` to reward functions as keyword arguments, so
``question``, ``reference`` and ``rubric`` (the whole rubric as a JSON string) reach the reward.
``privileged_context`` is the rubric as readable text: the self-distillation teacher sees the
question plus this, while the student (and the policy at inference) sees the question alone.
Criterion weights travel in the ``rubric`` JSON; ``privileged_context`` shows them, with the
pitfalls (negative weights) listed as mistakes to avoid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from papergym.export.common import (
    ExportResult,
    chat_prompt,
    ranked,
    rubric_json,
    split_instances,
    write_split_tables,
)
from papergym.export.datesplit import DateSplit
from papergym.export.hf import save_splits
from papergym.records import Instance, Rubric, SourceKind

FORMAT = "trl"
DATASET_DIR = "dataset"

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
TRL_SCHEMA = pa.schema(
    [
        ("prompt", pa.list_(_MESSAGE)),
        ("question", pa.string()),
        ("reference", pa.string()),
        ("rubric", pa.string()),
        ("privileged_context", pa.string()),
        ("instance_id", pa.string()),
        ("paper_id", pa.string()),
        ("recipe", pa.string()),
        ("domain", pa.string()),
    ]
)

PRIVILEGED_HEADER = (
    "Grading rubric for this task. A strong research plan satisfies every criterion below."
)


WEIGHTED_HEADER = (
    "Grading rubric for this task. A strong research plan satisfies the criteria below, the "
    "heavier ones first, and makes none of the listed mistakes."
)


DOCUMENT_HEADERS: dict[bool, str] = {
    False: "Grading rubric for this task. A strong answer satisfies every criterion below.",
    True: "Grading rubric for this task. A strong answer satisfies the criteria below, the "
    "heavier ones first, and makes none of the listed mistakes.",
}
"""The headers for an instance built from a plain document (ARES), unweighted and weighted: its
question asks for an answer, not a research plan."""


def privileged_context(rubric: Rubric, source_kind: SourceKind = "paper") -> str:
    """The rubric as text for the teacher: specific criteria numbered by rank, then general.

    A weighted rubric shows each criterion's weight, and lists its pitfalls apart, as mistakes
    to avoid: a teacher shown a pitfall among the criteria to satisfy would steer the student
    towards the mistake. An unweighted rubric reads exactly as it did before weights existed.
    A document's rubric (``source_kind="document"``) speaks of an answer, not a research plan.
    """
    if source_kind == "document":
        header = DOCUMENT_HEADERS[rubric.weighted]
    else:
        header = WEIGHTED_HEADER if rubric.weighted else PRIVILEGED_HEADER
    if not rubric.weighted:
        lines = [header, "", "Task-specific criteria, most important first:"]
        lines += [f"{n}. {c.text}" for n, c in enumerate(ranked(rubric), start=1)]
    else:
        desired = [c for c in ranked(rubric) if not c.pitfall]
        lines = [header, "", "Task-specific criteria, most important first:"]
        lines += [f"{n}. {c.text} (weight {c.weight:g})" for n, c in enumerate(desired, start=1)]
        if rubric.pitfalls:
            lines += ["", "Mistakes to avoid (each one costs its weight):"]
            lines += [f"- {c.text} (weight {c.weight:g})" for c in ranked(rubric) if c.pitfall]
    if rubric.general:
        lines += ["", "General criteria:"]
        lines += [f"- {c.text}" for c in rubric.general]
    return "\n".join(lines)


def trl_row(instance: Instance, *, system_prompt: str | None = None) -> dict[str, Any]:
    """One TRL row: a chat-format prompt plus the columns the reward and the teacher read."""
    return {
        "prompt": chat_prompt(instance.question, system_prompt),
        "question": instance.question,
        "reference": instance.reference_answer,
        "rubric": rubric_json(instance.rubric),
        "privileged_context": privileged_context(instance.rubric, instance.source_kind),
        "instance_id": instance.id,
        "paper_id": instance.paper_id,
        "recipe": instance.recipe,
        "domain": instance.domain,  # the discipline, to filter or weight a mixed dataset by
    }


def trl_rows(instances: list[Instance], system_prompt: str | None = None) -> list[dict[str, Any]]:
    return [trl_row(instance, system_prompt=system_prompt) for instance in instances]


def write_trl(
    instances: list[Instance],
    out_dir: Path,
    *,
    test_fraction: float | None = None,
    date_split: DateSplit | None = None,
    system_prompt: str | None = None,
) -> ExportResult:
    """Save ``out_dir/dataset`` (``DatasetDict``) and the same rows as ``train.parquet``/``test``."""
    splits = split_instances(instances, test_fraction, date_split)
    rows = {name: trl_rows(items, system_prompt) for name, items in splits.items()}
    target = save_splits(out_dir / DATASET_DIR, rows, TRL_SCHEMA)
    files = write_split_tables(
        out_dir,
        splits,
        lambda _items, split: pa.Table.from_pylist(rows[split], schema=TRL_SCHEMA),
        FORMAT,
    )
    return ExportResult(FORMAT, out_dir, {k: len(v) for k, v in splits.items()}, [target, *files])
