"""The instances and rows the training tests share: real records, built in-process."""

from __future__ import annotations

from typing import Any

from papergym.export.trl import trl_rows
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric

TOPICS = ("sparse attention", "long context", "protein folding", "auction design")


def train_instance(paper: str, topic: str) -> Instance:
    """A small instance: three specific criteria on ``topic`` and the general criteria."""
    specific = tuple(
        Criterion(
            id=f"{paper}-c{rank}",
            text=f"The plan {text} {topic}.",
            dimension="method" if rank == 1 else "experiment",
            origin="answer",
            rank=rank,
        )
        for rank, text in enumerate(
            (
                "routes queries to a few key blocks for",
                "evaluates on long documents for",
                "reports five seeds for",
            ),
            start=1,
        )
    )
    return Instance(
        id=Instance.make_id("papergym", "llm", paper),
        recipe="papergym",
        builder="llm",
        paper_id=paper,
        title=f"Paper {paper}",
        question=f"Current methods for {topic} are expensive. Propose a research plan.",
        reference_answer=f"We route queries to a few key blocks for {topic}, evaluate on long "
        "documents and report the mean over five seeds.",
        rubric=Rubric(specific=specific, general=GENERAL_CRITERIA),
    )


def sample_rows(count: int = 4) -> list[dict[str, Any]]:
    """``count`` TRL rows on different topics, as ``papergym.train.data`` makes them."""
    return trl_rows([train_instance(f"p{i}", TOPICS[i % len(TOPICS)]) for i in range(count)])
