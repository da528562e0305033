"""What every export format shares: splits, the rubric as JSON, prompts, atomic writes.

Splits are decided per paper by a hash (or, with a date rule, by the paper's date: see
:mod:`papergym.export.datesplit`), so every format (and every re-run, and a dataset that
later grows) puts the same instances in the same split, and instances built from one paper by
different recipes never straddle train and test.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papergym.errors import BadInputError
from papergym.export.datesplit import DateSplit, split_by_date
from papergym.jsonl import create_temp_dir, create_temp_file
from papergym.records import Instance, Rubric

if TYPE_CHECKING:  # pyarrow is slow to import; the CLI imports this module at start-up
    import pyarrow as pa

SPLITS: tuple[str, str] = ("train", "test")

# verl groups validation metrics by ``data_source``; one per recipe keeps benchmarks apart.
DATA_SOURCES: dict[str, str] = {
    "papergym": "papergym/plan",
    "innov": "papergym/innov",
    "design": "papergym/design",
}

# Written into every parquet file's schema metadata, so a reader can tell the formats apart.
FORMAT_METADATA_KEY = b"papergym.format"


@dataclass(frozen=True)
class ExportResult:
    """What one format wrote: where, how many rows per split, and which files."""

    format: str
    path: Path
    rows: dict[str, int]
    files: list[Path] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "path": str(self.path),
            "rows": dict(self.rows),
            "files": [str(f) for f in self.files],
        }


def check_split(test_fraction: float | None) -> None:
    """Refuse a test fraction outside (0, 1): 0 or 1 would leave one split empty on purpose."""
    if test_fraction is not None and not 0.0 < test_fraction < 1.0:
        raise BadInputError(
            None, f"--split must be between 0 and 1 (exclusive), got {test_fraction}"
        )


def split_key(instance: Instance) -> str:
    """The key a split is decided by: the paper, so one paper never lands in both splits."""
    return instance.paper_id


def in_test_split(key: str, test_fraction: float) -> bool:
    """Whether ``key`` falls in the test split: a stable hash mapped to [0, 1)."""
    digest = hashlib.sha256(f"papergym-split:{key}".encode()).hexdigest()
    return int(digest[:15], 16) / float(16**15) < test_fraction


def split_instances(
    instances: Sequence[Instance],
    test_fraction: float | None,
    date_split: DateSplit | None = None,
) -> dict[str, list[Instance]]:
    """``{"train": [...]}``, plus ``"test"`` when a fraction or a date rule is given; input
    order is kept. A date rule (``date_split``) replaces the hash split."""
    if date_split is not None:
        return split_by_date(instances, date_split)
    check_split(test_fraction)
    if test_fraction is None:
        return {"train": list(instances)}
    test = [i for i in instances if in_test_split(split_key(i), test_fraction)]
    test_ids = {i.id for i in test}
    return {"train": [i for i in instances if i.id not in test_ids], "test": test}


def rubric_dict(rubric: Rubric) -> dict[str, Any]:
    """The whole rubric as plain JSON data; ``Rubric.model_validate`` reads it back exactly.

    The leakage action's records (``leaked_out``, a criterion's ``replaces``) appear only when
    set, so a rubric the action did not touch exports as it did before they existed."""
    data = rubric.model_dump(mode="json")
    if not rubric.leaked_out:
        del data["leaked_out"]
    for criterion in data["specific"]:
        if criterion.get("replaces") is None:
            criterion.pop("replaces", None)
    return data


def to_json(data: Any) -> str:
    """Compact, non-ASCII-preserving JSON: the form every JSON blob of an export takes."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def rubric_json(rubric: Rubric) -> str:
    """The whole rubric as a JSON string (a string column keeps the parquet schema stable)."""
    return to_json(rubric_dict(rubric))


def chat_prompt(question: str, system_prompt: str | None = None) -> list[dict[str, str]]:
    """The question as chat messages, with an optional system message first."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*messages, {"role": "user", "content": question}]


def ranked(rubric: Rubric) -> list[Any]:
    """Specific criteria by rank (1 = most important), ties kept in stored order."""
    return sorted(rubric.specific, key=lambda c: c.rank)


def write_table(path: Path, table: pa.Table, format_name: str) -> Path:
    """Write ``table`` to ``path`` atomically, tagging the schema with the export format."""
    import pyarrow.parquet as pq

    metadata = dict(table.schema.metadata or {})
    metadata[FORMAT_METADATA_KEY] = format_name.encode()
    table = table.replace_schema_metadata(metadata)
    fd, tmp = create_temp_file(path)  # an ordinary file's modes, not mkstemp's 0600
    try:
        with os.fdopen(fd, "wb") as handle:
            pq.write_table(table, handle)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_split_tables(
    out_dir: Path,
    splits: dict[str, list[Instance]],
    build: Callable[[list[Instance], str], pa.Table],
    format_name: str,
) -> list[Path]:
    """``train.parquet`` (and ``test.parquet``) from ``build(instances, split)``.

    A ``test.parquet`` left by an earlier export with a split is removed when this one has
    none, so the folder never pairs a fresh train file with a stale test file.
    """
    written = [
        write_table(out_dir / f"{name}.parquet", build(rows, name), format_name)
        for name, rows in splits.items()
    ]
    for name in SPLITS:
        if name not in splits:
            (out_dir / f"{name}.parquet").unlink(missing_ok=True)
    return written


def replace_dir(target: Path, fill: Callable[[Path], None]) -> Path:
    """Fill a fresh temporary folder next to ``target``, then swap it in.

    An interrupted export leaves the previous dataset in place rather than half a new one.
    """
    tmp = create_temp_dir(target)  # an ordinary folder's modes, not mkdtemp's 0700
    try:
        fill(tmp)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def counts(values: Iterable[str]) -> dict[str, int]:
    """Occurrences per value, most frequent first (ties alphabetical), for stable output."""
    tally: dict[str, int] = {}
    for value in values:
        tally[value] = tally.get(value, 0) + 1
    return dict(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
