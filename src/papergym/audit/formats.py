"""Rubric datasets, whatever their format, read into one shape for the leakage audit.

Leakage is compared across datasets (SPEC §1: ours vs HealthBench, RubricHub, ResearchQA,
ResearchPlanGen), so every reader produces the same :class:`AuditItem`: an id, the question the
policy sees, and the criteria with what each format knows about them (dimension, origin, rank,
points). Reference solutions are never read: leakage is about the question alone.

Formats, detected from the first record's keys unless forced:

* ``instances`` — PaperGym's own ``instances.jsonl`` (:class:`~papergym.records.Instance`); only
  the specific rubric is audited (the general rubric is the same for every instance). Each
  criterion's weight becomes its ``points`` (1 for unweighted rubrics, negative for pitfalls).
* ``generic`` — ``{"question", "criteria": [str | {"text", ...}], "id"?}``.
* ``researchplangen`` — ``Goal``, ``Rubric`` (a list of strings, or one string of numbered or
  bulleted items) and a reference solution field that is ignored.
* ``researchqa`` — ``query``, ``rubric: [{"rubric_item", "type"}]``; ``type`` becomes the dimension.
* ``rubrichub`` — ``question`` (or a chat ``prompt``), ``rubrics: [{"criterion", "points"}]``;
  points may be negative (pitfalls). HealthBench rows have the same shape.

Files may be ``.jsonl``, ``.json`` (a list, or JSON lines as ``datasets`` writes them) or
``.parquet``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from papergym.errors import BadInputError
from papergym.records import Instance, LeakageVerdict

Method = Literal["overlap", "judge"]


class AuditFormat(StrEnum):
    """The rubric dataset formats the audit reads (``auto`` detects one per file)."""

    auto = "auto"
    instances = "instances"
    generic = "generic"
    researchplangen = "researchplangen"
    researchqa = "researchqa"
    rubrichub = "rubrichub"


class AuditCriterion(BaseModel):
    """One criterion as the audit sees it; fields a format lacks are ``None``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    dimension: str | None = None
    origin: str | None = None
    rank: int | None = None
    id: str | None = None
    points: float | None = None
    leakage: tuple[LeakageVerdict, ...] = ()

    def verdict(self, method: Method) -> LeakageVerdict | None:
        """This criterion's verdict by ``method``, if it has one."""
        return next((v for v in self.leakage if v.method == method), None)

    def with_verdict(self, verdict: LeakageVerdict) -> AuditCriterion:
        """A copy whose verdict by ``verdict.method`` is replaced (re-audits never stack)."""
        kept = tuple(v for v in self.leakage if v.method != verdict.method)
        return self.model_copy(update={"leakage": (*kept, verdict)})


class AuditItem(BaseModel):
    """One question and its criteria, from any dataset format."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    question: str
    criteria: tuple[AuditCriterion, ...]
    source: str
    format: str = ""

    def with_verdicts(self, verdicts: Sequence[LeakageVerdict]) -> AuditItem:
        """A copy with one new verdict per criterion, in order."""
        if len(verdicts) != len(self.criteria):
            raise ValueError(f"{len(verdicts)} verdicts for {len(self.criteria)} criteria")
        criteria = tuple(c.with_verdict(v) for c, v in zip(self.criteria, verdicts, strict=True))
        return self.model_copy(update={"criteria": criteria})


@dataclass(frozen=True)
class AuditDataset:
    """One input file: its items and, for our own format, the records to write back."""

    path: Path
    format: AuditFormat
    items: list[AuditItem]
    instances: list[Instance] | None = None

    @property
    def name(self) -> str:
        return str(self.path)


# --- reading records --------------------------------------------------------------------------

Located = tuple[str, dict[str, Any]]
"""A record and where it is in its file ("line 3", "record 3"), for error messages."""


def read_records(path: Path) -> list[Located]:
    """The JSON objects of a ``.jsonl``, ``.json`` or ``.parquet`` file, with their positions."""
    if not path.is_file():
        raise BadInputError(path, "no such file")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        records = _read_parquet(path)
    elif suffix in (".jsonl", ".json"):
        records = _read_json(path)
    else:
        raise BadInputError(
            path, f"unsupported file type '{suffix}' (use .jsonl, .json or .parquet)"
        )
    if not records:
        raise BadInputError(path, "no records")
    for where, record in records:
        if not isinstance(record, dict):
            kind = type(record).__name__
            raise BadInputError(f"{path} ({where})", f"expected a JSON object, found {kind}")
    return records


def _read_parquet(path: Path) -> list[Located]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows: list[Any] = pq.read_table(path).to_pylist()
    except (pa.ArrowException, OSError) as error:
        raise BadInputError(path, f"not a readable parquet file: {error}") from None
    return [(f"row {n}", row) for n, row in enumerate(rows, start=1)]


def _read_json(path: Path) -> list[Located]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BadInputError(path, "not UTF-8 text") from None
    if path.suffix.lower() == ".json":
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None  # `datasets` writes JSON lines under a .json name: try that below
        if isinstance(whole, list):
            return [(f"record {n}", r) for n, r in enumerate(whole, start=1)]
        if isinstance(whole, dict):
            raise BadInputError(path, "expected a JSON list of records, found one object")
    records: list[Located] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as error:
            raise BadInputError(f"{path}:{number}", f"not valid JSON: {error.msg}") from None
    return records


# --- detecting the format ---------------------------------------------------------------------


def _key(record: Mapping[str, Any], *names: str) -> str | None:
    """The first of ``names`` present in ``record``, compared case-insensitively."""
    lowered = {k.lower(): k for k in record}
    return next((lowered[n.lower()] for n in names if n.lower() in lowered), None)


def detect_format(record: Mapping[str, Any]) -> AuditFormat | None:
    """The format a record's keys point to, or ``None`` when they match none."""
    rubric = record.get("rubric")
    if isinstance(rubric, dict) and "specific" in rubric and "question" in record:
        return AuditFormat.instances
    if _key(record, "query") and isinstance(rubric, list):
        return AuditFormat.researchqa
    if _key(record, "rubrics"):
        return AuditFormat.rubrichub
    if _key(record, "goal") and _key(record, "rubric"):
        return AuditFormat.researchplangen
    if "question" in record and "criteria" in record:
        return AuditFormat.generic
    return None


def _keys_found(record: Mapping[str, Any]) -> str:
    keys = sorted(record)
    shown = ", ".join(keys[:12]) + (f" (+{len(keys) - 12} more)" if len(keys) > 12 else "")
    return shown or "none"


# --- per-format parsers -----------------------------------------------------------------------


class _Shape(Exception):
    """A record that lacks what its format needs; turned into a BadInputError with its place."""


def _text(value: Any, what: str) -> str:
    """A non-empty string, or chat messages joined (what the policy is shown), else an error."""
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        value = "\n\n".join(str(m.get("content", "")) for m in value)
    if not isinstance(value, str) or not value.strip():
        raise _Shape(f"'{what}' must be a non-empty string")
    return value.strip()


def _required(record: Mapping[str, Any], what: str, *names: str) -> Any:
    key = _key(record, *names)
    if key is None:
        raise _Shape(f"no '{what}' field")
    return record[key]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _optional_str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _parse_instance(record: dict[str, Any]) -> tuple[AuditItem, Instance]:
    try:
        instance = Instance.model_validate(record)
    except ValidationError as error:
        raise _Shape(f"not a valid Instance: {str(error).splitlines()[0]}") from None
    return item_from_instance(instance, source=""), instance


def item_from_instance(instance: Instance, *, source: str) -> AuditItem:
    """An instance's question and specific criteria (with their verdicts so far)."""
    criteria = tuple(
        AuditCriterion(
            text=c.text,
            dimension=c.dimension,
            origin=c.origin,
            rank=c.rank,
            id=c.id,
            points=c.weight,
            leakage=c.leakage,
        )
        for c in instance.rubric.specific
    )
    return AuditItem(
        id=instance.id,
        question=instance.question,
        criteria=criteria,
        source=source,
        format=AuditFormat.instances.value,
    )


def _criterion_from(entry: Any, text_keys: Sequence[str], index: int) -> AuditCriterion:
    """A criterion from a string or an object holding its text under one of ``text_keys``."""
    if isinstance(entry, str):
        return AuditCriterion(text=_text(entry, f"criterion {index}"))
    if not isinstance(entry, dict):
        raise _Shape(f"criterion {index} must be a string or an object")
    key = _key(entry, *text_keys)
    if key is None:
        raise _Shape(f"criterion {index} has none of {', '.join(text_keys)}")
    rank = entry.get("rank")
    return AuditCriterion(
        text=_text(entry[key], f"criterion {index}"),
        dimension=_optional_str(entry.get("dimension") or entry.get("type")),
        origin=_optional_str(entry.get("origin")),
        rank=rank if isinstance(rank, int) and not isinstance(rank, bool) else None,
        id=_optional_str(entry.get("id")),
        points=_number(entry.get("points", entry.get("weight"))),
    )


def _criteria(value: Any, text_keys: Sequence[str]) -> tuple[AuditCriterion, ...]:
    if not isinstance(value, list):
        raise _Shape("the criteria must be a list")
    return tuple(_criterion_from(e, text_keys, i) for i, e in enumerate(value, start=1))


_ITEM_MARKER = re.compile(r"^\s*(?:[-*•‣▪]|\(?\d{1,3}[.):]|\[\d{1,3}\])\s+")


def split_rubric_text(text: str) -> list[str]:
    """Items of a rubric written as one string: numbered or bulleted lines, else one per line.

    A line without a marker continues the item above it, so wrapped items stay whole.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not any(_ITEM_MARKER.match(line) for line in lines):
        return [line.strip() for line in lines]
    items: list[str] = []
    for line in lines:
        if _ITEM_MARKER.match(line) or not items:
            items.append(_ITEM_MARKER.sub("", line, count=1).strip())
        else:
            items[-1] = f"{items[-1]} {line.strip()}"
    return [item for item in items if item]


def _parse_generic(record: dict[str, Any]) -> AuditItem:
    return _item(
        record,
        _text(record.get("question"), "question"),
        _criteria(record.get("criteria"), ("text", "criterion")),
        AuditFormat.generic,
    )


def _parse_researchplangen(record: dict[str, Any]) -> AuditItem:
    goal = _text(_required(record, "Goal", "Goal"), "Goal")
    rubric = _required(record, "Rubric", "Rubric")
    if isinstance(rubric, str):
        rubric = split_rubric_text(rubric)
    elif isinstance(rubric, list):
        rubric = [_ITEM_MARKER.sub("", r, count=1) if isinstance(r, str) else r for r in rubric]
    return _item(
        record, goal, _criteria(rubric, ("text", "criterion")), AuditFormat.researchplangen
    )


def _parse_researchqa(record: dict[str, Any]) -> AuditItem:
    query = _text(_required(record, "query", "query"), "query")
    rubric = _criteria(_required(record, "rubric", "rubric"), ("rubric_item", "text"))
    return _item(record, query, rubric, AuditFormat.researchqa)


def _parse_rubrichub(record: dict[str, Any]) -> AuditItem:
    question = _text(_required(record, "question", "question", "prompt", "query"), "question")
    rubrics = _criteria(
        _required(record, "rubrics", "rubrics"), ("criterion", "description", "text")
    )
    return _item(record, question, rubrics, AuditFormat.rubrichub)


def _item(
    record: Mapping[str, Any],
    question: str,
    criteria: tuple[AuditCriterion, ...],
    fmt: AuditFormat,
) -> AuditItem:
    key = _key(record, "id", "q_id", "prompt_id", "sample_id", "uid")
    ident = _optional_str(record[key]) if key else None
    return AuditItem(
        id=ident or "", question=question, criteria=criteria, source="", format=fmt.value
    )


_PARSERS: dict[AuditFormat, Callable[[dict[str, Any]], AuditItem]] = {
    AuditFormat.generic: _parse_generic,
    AuditFormat.researchplangen: _parse_researchplangen,
    AuditFormat.researchqa: _parse_researchqa,
    AuditFormat.rubrichub: _parse_rubrichub,
}


def read_dataset(path: Path, fmt: AuditFormat = AuditFormat.auto) -> AuditDataset:
    """Every record of ``path`` as audit items (and Instances for our own format).

    Raises :class:`BadInputError` naming the file (and record) for an unreadable file, an
    unknown format (with the keys found) or a record that does not fit its format.
    """
    records = read_records(path)
    first = records[0][1]
    if fmt is AuditFormat.auto:
        detected = detect_format(first)
        if detected is None:
            raise BadInputError(
                path,
                f"unknown rubric format; keys found: {_keys_found(first)} (expected one of "
                f"{', '.join(f.value for f in AuditFormat if f is not AuditFormat.auto)}; "
                "force one with --format)",
            )
        fmt = detected
    items: list[AuditItem] = []
    instances: list[Instance] = []
    for number, (where, record) in enumerate(records, start=1):
        try:
            if fmt is AuditFormat.instances:
                item, instance = _parse_instance(record)
                instances.append(instance)
            else:
                item = _PARSERS[fmt](record)
        except _Shape as problem:
            raise BadInputError(
                f"{path} ({where})",
                f"not a {fmt.value} record: {problem}; keys found: {_keys_found(record)}",
            ) from None
        items.append(
            item.model_copy(update={"id": item.id or f"{path.stem}:{number}", "source": str(path)})
        )
    return AuditDataset(
        path=path,
        format=fmt,
        items=items,
        instances=instances if fmt is AuditFormat.instances else None,
    )
