"""Rows and a tiny model for the training tests: real objects, built in-process, offline."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from papergym.build.general import GENERAL_CRITERIA
from papergym.export.trl import trl_rows
from papergym.records import Criterion, Instance, Rubric
from papergym.train.tiny import save_tiny_model

TOPICS = ("sparse attention", "protein folding", "galaxy surveys", "auction design")


def sample_instance(topic: str, *, criteria: int = 10) -> Instance:
    return Instance(
        id=Instance.make_id("papergym", "llm", topic),
        recipe="papergym",
        builder="llm",
        paper_id=topic.replace(" ", "-"),
        title=f"A study of {topic}",
        question=f"Current work on {topic} misses a key gap. Propose a research plan.",
        reference_answer=f"We would study {topic} with a careful method and ablations.",
        rubric=Rubric(
            specific=tuple(
                Criterion(
                    id=f"{topic}-c{n}",
                    text=f"The plan for {topic} includes step {n}.",
                    dimension="method" if n <= 6 else "experiment",
                    origin="answer",
                    rank=n,
                )
                for n in range(1, criteria + 1)
            ),
            general=GENERAL_CRITERIA,
        ),
    )


def sample_rows(count: int = 4) -> list[dict[str, Any]]:
    return trl_rows([sample_instance(TOPICS[i % len(TOPICS)] + f" {i}") for i in range(count)])


@cache
def _tiny_model_dir(root: str) -> Path:
    return save_tiny_model(Path(root) / "tiny")


def tiny_model_dir(tmp_root: Path) -> Path:
    """A saved tiny model + tokenizer (built once per root folder)."""
    return _tiny_model_dir(str(tmp_root))
