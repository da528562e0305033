"""The full instance records as plain parquet, read back to :class:`Instance` exactly.

Nested fields are kept as parquet structs and lists (``rubric.specific`` is a list of structs,
each with its ``leakage`` list of structs), not JSON strings, so query engines (DuckDB, polars,
pandas) can reach into them. The arrow schema is derived from the pydantic records rather than
written by hand: a field added to a record appears in the export without touching this module,
and a field of a type we cannot map fails loudly instead of being dropped.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError

from papergym.errors import BadInputError
from papergym.export.common import (
    FORMAT_METADATA_KEY,
    ExportResult,
    split_instances,
    write_split_tables,
)
from papergym.export.datesplit import DateSplit
from papergym.records import Instance

FORMAT = "instances"

_SCALARS: dict[type, pa.DataType] = {
    str: pa.string(),
    int: pa.int64(),
    float: pa.float64(),
    bool: pa.bool_(),
}


def arrow_type(annotation: Any, where: str) -> pa.DataType:
    """The arrow type of one pydantic field annotation (``where`` names it in errors)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        # Arrow columns are nullable already; ``X | None`` is just X.
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            raise TypeError(f"{where}: unions of several types cannot be exported: {annotation}")
        return arrow_type(members[0], where)
    if origin is Literal:
        kinds = {type(value) for value in get_args(annotation)}
        if len(kinds) != 1:
            raise TypeError(f"{where}: mixed-type literal cannot be exported: {annotation}")
        return arrow_type(kinds.pop(), where)
    if origin in (tuple, list):
        args = [a for a in get_args(annotation) if a is not Ellipsis]
        if origin is tuple and len(get_args(annotation)) != 2:
            raise TypeError(f"{where}: only variable-length tuples can be exported: {annotation}")
        return pa.list_(arrow_type(args[0], f"{where}[]"))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return pa.struct(model_fields(annotation, where))
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    raise TypeError(f"{where}: no parquet type for {annotation!r}")


def model_fields(model: type[BaseModel], where: str = "") -> list[pa.Field]:
    """Arrow fields of a record's stored fields, in declaration order (computed ones skipped)."""
    prefix = f"{where}." if where else ""
    return [
        pa.field(name, arrow_type(info.annotation, prefix + name))
        for name, info in model.model_fields.items()
    ]


def instance_schema() -> pa.Schema:
    """The parquet schema of a full :class:`Instance`."""
    return pa.schema(model_fields(Instance))


def instance_rows(instances: list[Instance]) -> list[dict[str, Any]]:
    """Instances as plain JSON data, one dict per row."""
    return [i.model_dump(mode="json") for i in instances]


def instances_table(instances: list[Instance], split: str = "train") -> pa.Table:
    """An arrow table of full instances (``split`` is unused: kept for the writer signature)."""
    del split
    return pa.Table.from_pylist(instance_rows(instances), schema=instance_schema())


def write_parquet(
    instances: list[Instance],
    out_dir: Path,
    *,
    test_fraction: float | None = None,
    date_split: DateSplit | None = None,
) -> ExportResult:
    """Write ``train.parquet`` (and ``test.parquet``) of full instances into ``out_dir``."""
    splits = split_instances(instances, test_fraction, date_split)
    files = write_split_tables(out_dir, splits, instances_table, FORMAT)
    return ExportResult("parquet", out_dir, {k: len(v) for k, v in splits.items()}, files)


def instances_from_rows(rows: list[dict[str, Any]], source: str) -> list[Instance]:
    """Validate rows back into instances; a bad row raises an error naming ``source`` and row."""
    instances = []
    for number, row in enumerate(rows):
        try:
            instances.append(Instance.model_validate(row))
        except ValidationError as error:
            first = str(error).splitlines()[0]
            raise BadInputError(
                f"{source} row {number}", f"not a valid Instance: {first}"
            ) from error
    return instances


def read_parquet_instances(path: str | Path) -> list[Instance]:
    """Read a parquet file written by :func:`write_parquet` back into equal instances."""
    path = Path(path)
    if not path.is_file():
        raise BadInputError(path, "no such file")
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise BadInputError(path, f"not a parquet file: {error}") from error
    tag = (table.schema.metadata or {}).get(FORMAT_METADATA_KEY)
    if tag is not None and tag.decode() != FORMAT:
        raise BadInputError(path, f"holds the {tag.decode()} export, not full instances")
    return instances_from_rows(table.to_pylist(), str(path))
