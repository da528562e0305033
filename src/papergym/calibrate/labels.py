"""Human verdicts on rubric criteria: the labels ``papergym judge calibrate`` measures a rubric
judge against, one JSON object a line (see docs/judge.md)::

    {"instance_id": "...", "answer": "...", "criterion_id": "c3", "met": 1, "note": "..."}

Several labels of one answer (same instance, same answer text) share one judgement.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from papergym.errors import BadInputError
from papergym.jsonl import iter_json_lines
from papergym.records import Instance, Record


class CriterionLabel(Record):
    """A human's verdict on whether ``answer`` meets criterion ``criterion_id`` of an instance."""

    instance_id: str = Field(min_length=1)
    answer: str
    criterion_id: str = Field(min_length=1)
    met: Literal[0, 1] = Field(description="1: the answer meets the criterion; 0: it does not.")
    note: str = Field(default="", description="Free text: who labelled it, or how it was made.")


def read_labels(path: Path, instances: Mapping[str, Instance]) -> list[CriterionLabel]:
    """The labels of ``path``, each checked against ``instances``: an unknown instance or
    criterion, a repeated (instance, answer, criterion) or a malformed line is refused in one
    line naming file:line."""
    labels: list[CriterionLabel] = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, data in iter_json_lines(path):
        where = f"{path}:{number}"
        try:
            label = CriterionLabel.model_validate(data)
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "line"
            raise BadInputError(where, f"not a label ({field}: {first['msg']})") from None
        instance = instances.get(label.instance_id)
        if instance is None:
            raise BadInputError(where, f"instance_id {label.instance_id!r} is not an instance")
        if label.criterion_id not in {c.id for c in instance.rubric.specific}:
            raise BadInputError(
                where,
                f"criterion_id {label.criterion_id!r} is not a specific criterion of "
                f"{label.instance_id!r}",
            )
        key = (label.instance_id, label.answer, label.criterion_id)
        if key in seen:
            raise BadInputError(where, f"the same label as line {seen[key]}")
        seen[key] = number
        labels.append(label)
    if not labels:
        raise BadInputError(path, "no labels")
    return labels
