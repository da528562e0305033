"""Small built instances for tests: a few specific criteria (ranked 1, 2, ...) and one general."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from papergym.records import BuilderName, Criterion, GeneralCriterion, Instance, Rubric


def rubric_instance(
    ident: str,
    criteria: Sequence[str],
    *,
    question: str,
    reference_answer: str,
    title: str,
    dimension: Literal["method", "experiment"] = "method",
    builder: BuilderName = "extractive",
    paper_id: str | None = None,
    criterion_prefix: str | None = None,
    general: str = "clear",
) -> Instance:
    """An instance whose specific criteria are ``criteria`` (ids ``{criterion_prefix}{rank}``,
    by default ``{ident}-c{rank}``) and whose one general criterion is ``general`` (id g1)."""
    prefix = f"{ident}-c" if criterion_prefix is None else criterion_prefix
    specific = tuple(
        Criterion(id=f"{prefix}{n}", text=text, dimension=dimension, origin="answer", rank=n)
        for n, text in enumerate(criteria, start=1)
    )
    return Instance(
        id=ident,
        recipe="papergym",
        builder=builder,
        paper_id=ident if paper_id is None else paper_id,
        title=title,
        question=question,
        reference_answer=reference_answer,
        rubric=Rubric(specific=specific, general=(GeneralCriterion(id="g1", text=general),)),
    )
