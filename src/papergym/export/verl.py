"""verl RL parquet: one row per instance in the layout verl's ``RLHFDataset`` reads (SPEC §7).

verl hands the reward function only the decoded response plus ``ground_truth`` and
``extra_info``, so the question, the reference answer and the whole rubric travel in them.
JSON payloads are strings and the schema is written out here, not inferred: pyarrow would
otherwise infer a different struct per file (for example a rubric whose leakage verdicts are
all empty), and verl concatenates files with ``datasets``, which refuses mismatched schemas.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from papergym.export.common import (
    DATA_SOURCES,
    ExportResult,
    chat_prompt,
    rubric_dict,
    rubric_json,
    split_instances,
    to_json,
    write_split_tables,
)
from papergym.export.datesplit import DateSplit
from papergym.records import Instance

FORMAT = "verl"
ABILITY = "research_planning"
DOCUMENT_ABILITY = "rubric_qa"
"""The ability of an instance built from a plain document (ARES): a question answered in prose
and graded by a weighted rubric, whatever its domain (the domain travels in ``extra_info``)."""
REWARD_STYLE = "rubric"

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
EXTRA_INFO_FIELDS: tuple[str, ...] = (
    "instance_id",
    "paper_id",
    "title",
    "domain",
    "recipe",
    "builder",
    "question",
    "reference_answer",
    "rubric",
)
VERL_SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", pa.list_(_MESSAGE)),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        (
            "extra_info",
            pa.struct(
                [("index", pa.int64()), ("split", pa.string())]
                + [(name, pa.string()) for name in EXTRA_INFO_FIELDS]
            ),
        ),
    ]
)


def data_source(instance: Instance) -> str:
    """``papergym/plan``, ``papergym/innov`` or ``papergym/design``, by recipe."""
    return DATA_SOURCES.get(instance.recipe, f"papergym/{instance.recipe}")


def ability(instance: Instance) -> str:
    """``research_planning`` for a paper's task, ``rubric_qa`` for a document's question."""
    return DOCUMENT_ABILITY if instance.source_kind == "document" else ABILITY


def ground_truth(instance: Instance) -> str:
    """What the reward needs, as one JSON string: question, reference answer, whole rubric.

    ``json.loads(gt)["rubric"]`` validates back into an equal :class:`~papergym.records.Rubric`.
    A document's instance adds ``"source_kind": "document"`` (the judge words its prompt for an
    answer, not a plan); a paper's ground truth is what it always was.
    """
    truth: dict[str, Any] = {
        "question": instance.question,
        "reference_answer": instance.reference_answer,
        "rubric": rubric_dict(instance.rubric),
    }
    if instance.source_kind != "paper":
        truth["source_kind"] = instance.source_kind
    return to_json(truth)


def verl_row(
    instance: Instance, index: int, *, split: str = "train", system_prompt: str | None = None
) -> dict[str, Any]:
    """One verl row; ``index`` is the row's position in its split file."""
    return {
        "data_source": data_source(instance),
        "prompt": chat_prompt(instance.question, system_prompt),
        "ability": ability(instance),
        "reward_model": {"style": REWARD_STYLE, "ground_truth": ground_truth(instance)},
        "extra_info": {
            "index": index,
            "split": split,
            "instance_id": instance.id,
            "paper_id": instance.paper_id,
            "title": instance.title,
            "domain": instance.domain,
            "recipe": instance.recipe,
            "builder": instance.builder,
            "question": instance.question,
            "reference_answer": instance.reference_answer,
            "rubric": rubric_json(instance.rubric),
        },
    }


def verl_table(
    instances: list[Instance], split: str = "train", system_prompt: str | None = None
) -> pa.Table:
    """The rows of one split under the fixed :data:`VERL_SCHEMA`."""
    rows = [
        verl_row(instance, index, split=split, system_prompt=system_prompt)
        for index, instance in enumerate(instances)
    ]
    return pa.Table.from_pylist(rows, schema=VERL_SCHEMA)


def write_verl(
    instances: list[Instance],
    out_dir: Path,
    *,
    test_fraction: float | None = None,
    date_split: DateSplit | None = None,
    system_prompt: str | None = None,
) -> ExportResult:
    """Write ``train.parquet`` (and ``test.parquet`` when ``test_fraction`` is given)."""
    splits = split_instances(instances, test_fraction, date_split)
    files = write_split_tables(
        out_dir,
        splits,
        lambda rows, split: verl_table(rows, split, system_prompt),
        FORMAT,
    )
    return ExportResult(FORMAT, out_dir, {k: len(v) for k, v in splits.items()}, files)
