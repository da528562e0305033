"""Full instance records as a Hugging Face dataset on disk, nested fields kept.

``rubric.specific`` stays a list of structs (every criterion field and its leakage verdicts), so
``load_from_disk(path)["train"][0]["rubric"]["specific"][0]["leakage"]`` is a list of dicts.
Features are spelled with list literals (``[{...}]``) rather than inferred from arrow: that
form means "list of structs" in every ``datasets`` version, where inference does not.
``datasets`` is imported inside the functions that need it, because it is slow to import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from papergym.errors import BadInputError
from papergym.export.common import ExportResult, replace_dir, split_instances
from papergym.export.datesplit import DateSplit
from papergym.export.parquet import instance_rows, instance_schema, instances_from_rows
from papergym.records import Instance

FORMAT = "hf"
DATASET_DIR = "dataset"

_VALUES: dict[pa.DataType, str] = {
    pa.string(): "string",
    pa.int64(): "int64",
    pa.float64(): "float64",
    pa.bool_(): "bool",
}


def feature_for(arrow: pa.DataType) -> Any:
    """The ``datasets`` feature of one arrow type: ``Value``, ``[feature]`` or ``{name: ...}``."""
    from datasets import Value

    if pa.types.is_list(arrow):
        return [feature_for(arrow.value_type)]
    if pa.types.is_struct(arrow):
        return {
            arrow.field(i).name: feature_for(arrow.field(i).type) for i in range(arrow.num_fields)
        }
    if arrow in _VALUES:
        return Value(_VALUES[arrow])
    raise TypeError(f"no datasets feature for arrow type {arrow}")


def features_for(schema: pa.Schema) -> Any:
    """``datasets.Features`` matching an arrow schema column for column."""
    from datasets import Features

    return Features({name: feature_for(schema.field(name).type) for name in schema.names})


def dataset_from_rows(rows: list[dict[str, Any]], schema: pa.Schema) -> Any:
    """A ``datasets.Dataset`` of ``rows`` whose features follow ``schema`` exactly."""
    from datasets import Dataset

    return Dataset.from_list(rows, features=features_for(schema))


def save_splits(target: Path, splits: dict[str, list[dict[str, Any]]], schema: pa.Schema) -> Path:
    """``save_to_disk`` a ``DatasetDict`` of the splits, replacing ``target`` atomically."""
    from datasets import DatasetDict
    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()  # the export prints its own summary; per-shard bars are noise

    # An empty split is left out: `datasets` saves it as a folder it cannot load back (a one-paper
    # build split 50/50 has one). The split's parquet file is still written, with its columns.
    dataset = DatasetDict(
        {name: dataset_from_rows(rows, schema) for name, rows in splits.items() if rows}
    )
    return replace_dir(target, lambda tmp: dataset.save_to_disk(str(tmp)))


def instances_dataset(instances: list[Instance]) -> Any:
    """The full records as one in-memory ``datasets.Dataset``."""
    return dataset_from_rows(instance_rows(instances), instance_schema())


def write_hf(
    instances: list[Instance],
    out_dir: Path,
    *,
    test_fraction: float | None = None,
    date_split: DateSplit | None = None,
) -> ExportResult:
    """Save the full records to ``out_dir/dataset`` (a ``DatasetDict``: train, maybe test)."""
    splits = split_instances(instances, test_fraction, date_split)
    rows = {name: instance_rows(items) for name, items in splits.items()}
    target = save_splits(out_dir / DATASET_DIR, rows, instance_schema())
    return ExportResult(FORMAT, out_dir, {k: len(v) for k, v in splits.items()}, [target])


def read_hf_instances(path: str | Path, split: str = "train") -> list[Instance]:
    """Read one split of a dataset saved by :func:`write_hf` back into instances."""
    from datasets import DatasetDict, load_from_disk

    path = Path(path)
    if not path.is_dir():
        raise BadInputError(path, "no such folder")
    try:
        loaded = load_from_disk(str(path))
    except FileNotFoundError as error:
        raise BadInputError(path, f"not a saved Hugging Face dataset: {error}") from error
    if isinstance(loaded, DatasetDict):
        if split not in loaded:
            raise BadInputError(path, f"no {split!r} split (has {', '.join(loaded)})")
        loaded = loaded[split]
    return instances_from_rows(loaded.to_list(), str(path))
