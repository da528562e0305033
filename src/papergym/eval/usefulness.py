"""An eval folder as the input of ``papergym audit --usefulness``.

A group is every answer to one question, all systems and samples together: the answers a
ranking compares, as a GRPO group is for training. The instances (texts, ranks, leakage) come
from the data the eval recorded in ``summary.json``, or ``instances`` when given; without them
the criteria's texts come from ``questions.jsonl`` and their weights from the verdicts, and no
rubric file can be written.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from papergym.audit.usefulness import (
    AnswerGroup,
    RubricCriterion,
    UsefulnessInput,
    find_instances,
    rubric_criteria,
)
from papergym.eval.records import (
    QUESTIONS_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    EvalQuestion,
    EvalScore,
)
from papergym.jsonl import read_jsonl


def is_eval_folder(folder: Path) -> bool:
    """Whether ``folder`` holds an eval's scores (``scores.jsonl``)."""
    return (folder / SCORES_FILE).is_file()


def read_eval_folder(folder: Path, instances: Path | None = None) -> UsefulnessInput:
    """The groups and criteria of the eval folder ``folder``; ``instances`` overrides the data
    recorded in its summary."""
    scores = read_jsonl(folder / SCORES_FILE, EvalScore)
    by_instance: dict[str, list[EvalScore]] = defaultdict(list)
    for score in scores:
        by_instance[score.instance_id].append(score)
    groups = tuple(
        AnswerGroup(
            instance_id=instance_id,
            label="eval",
            answers=tuple(
                {v.criterion_id: v.passed for v in s.verdicts if v.kind == "specific"}
                for s in answers
            ),
        )
        for instance_id, answers in by_instance.items()
    )
    found, path, note = find_instances(instances or _recorded_data(folder))
    criteria = rubric_criteria(found) if found is not None else _observed_criteria(folder, scores)
    return UsefulnessInput(
        source=folder,
        kind="eval",
        groups=groups,
        criteria=tuple(criteria),
        instances=found,
        instances_path=path,
        notes=(note,) if note else (),
    )


def _recorded_data(folder: Path) -> Path | None:
    """The ``--data`` the eval recorded in its summary (None before the summary is written)."""
    try:
        data = json.loads((folder / SUMMARY_FILE).read_text(encoding="utf-8")).get("data")
    except (OSError, ValueError, AttributeError):
        return None
    return Path(data) if isinstance(data, str) and data else None


def _observed_criteria(folder: Path, scores: list[EvalScore]) -> list[RubricCriterion]:
    """The criteria as the verdicts and ``questions.jsonl`` show them (no leakage verdicts)."""
    texts: dict[str, dict[str, str]] = {}
    if (folder / QUESTIONS_FILE).is_file():
        texts = {
            q.instance_id: q.criteria for q in read_jsonl(folder / QUESTIONS_FILE, EvalQuestion)
        }
    seen: dict[str, dict[str, tuple[int, float]]] = defaultdict(dict)
    for score in scores:
        for verdict in score.verdicts:
            if verdict.kind == "specific":
                order = verdict.rank or len(seen[score.instance_id]) + 1
                seen[score.instance_id].setdefault(verdict.criterion_id, (order, verdict.weight))
    return [
        RubricCriterion(
            instance_id=instance_id,
            criterion_id=criterion_id,
            text=texts.get(instance_id, {}).get(criterion_id, ""),
            weight=weight,
            position=position,
        )
        for instance_id, found in seen.items()
        for position, (criterion_id, (_, weight)) in enumerate(
            sorted(found.items(), key=lambda item: item[1][0])
        )
    ]
