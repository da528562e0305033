"""The instance of an answer, rebuilt from what a trainer hands over: verl's ``ground_truth``
and ``extra_info`` (also OpenRLHF's label and a server request's item), or TRL's dataset
columns (``papergym export --format trl``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from papergym.records import Instance, Rubric, SourceKind, content_hash, source_kind_of


def instance_from_ground_truth(
    ground_truth: str | Mapping[str, Any], extra_info: Mapping[str, Any] | None
) -> Instance:
    """Rebuild the instance the reward needs from verl's ``ground_truth`` and ``extra_info``."""
    data = json.loads(ground_truth) if isinstance(ground_truth, str) else dict(ground_truth)
    info = dict(extra_info or {})
    rubric = data.get("rubric", info.get("rubric"))
    rubric = (
        Rubric.model_validate_json(rubric)
        if isinstance(rubric, str)
        else Rubric.model_validate(rubric)
    )
    question = str(data.get("question") or info.get("question") or "")
    reference = str(data.get("reference_answer") or info.get("reference_answer") or "")
    given = info.get("instance_id") or data.get("instance_id")
    kind = data.get("source_kind", info.get("source_kind"))
    return Instance(
        id=str(given) if given else anonymous_id(question, reference, rubric),
        recipe=info.get("recipe", "papergym"),
        builder=info.get("builder", "llm"),
        paper_id=str(info.get("paper_id", "")),
        title=str(info.get("title", "")),
        question=question,
        reference_answer=reference,
        rubric=rubric,
        source_kind="document" if kind == "document" else "paper",
    )


def anonymous_id(question: str, reference: str, rubric: Rubric) -> str:
    """An id for an instance that arrives without one: ``rubric-`` and a digest of its content.

    Only a label for the returned Score (the reward's cache is keyed by content, never by id),
    but a stable one: the same question, reference and rubric always get the same id.
    """
    payload = {
        "question": question,
        "reference": reference,
        "rubric": rubric.model_dump(mode="json"),
    }
    return "rubric-" + content_hash(payload)


def instances_from_columns(columns: Mapping[str, Any], count: int) -> list[Instance]:
    """The instances of TRL's ``question``, ``reference`` and ``rubric`` columns (``rubric`` a
    JSON string per row), with ``instance_id`` and ``recipe`` when the dataset has them."""
    question: Sequence[str] = columns["question"]
    reference: Sequence[str] = columns["reference"]
    rubrics = [Rubric.model_validate_json(b) for b in columns["rubric"]]
    instance_id: Sequence[str] | None = columns.get("instance_id")
    # The TRL export has no source-kind column (a paper's rows stay as they were); ARES, the
    # recipe that builds from documents, tells the judge to grade an answer, not a plan.
    recipes: Sequence[str | None] = columns.get("recipe") or [None] * len(rubrics)
    kinds: list[SourceKind] = [source_kind_of(r) for r in recipes]
    ids = (
        [str(i) for i in instance_id]
        if instance_id is not None
        else [anonymous_id(q, r, b) for q, r, b in zip(question, reference, rubrics, strict=True)]
    )
    return [
        Instance(
            id=i,
            recipe="papergym",
            builder="llm",
            paper_id="",
            title="",
            question=q,
            reference_answer=r,
            rubric=b,
            source_kind=k,
        )
        for i, q, r, b, k in zip(ids, question, reference, rubrics, kinds, strict=True)
    ]
