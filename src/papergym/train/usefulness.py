"""A training run folder (or an eval folder) as the input of ``papergym audit --usefulness``.

A run's GRPO stages record each group's verdicts in ``STAGE/rollouts.jsonl``
(:mod:`papergym.train.rollouts`); each line is a group. The instances come from the run's
``config.yaml`` (``data.build_dir``) or ``instances`` when given. A run without rollouts (no
GRPO stage, or one from before they were recorded) falls back to its final evaluation,
``RUN/eval``, and says so.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from papergym.audit.usefulness import (
    AnswerGroup,
    RubricCriterion,
    UsefulnessInput,
    find_instances,
    rubric_criteria,
)
from papergym.configbase import CONFIG_FILE
from papergym.errors import BadInputError
from papergym.eval.usefulness import is_eval_folder, read_eval_folder
from papergym.jsonl import read_jsonl
from papergym.train.rollouts import ROLLOUTS_FILE, RolloutGroup, char_verdict

EVAL_SUBFOLDER = "eval"
"""Where a run keeps its final evaluation (an eval folder)."""


def read_usefulness_folder(folder: Path, instances: Path | None = None) -> UsefulnessInput:
    """The judged answers of ``folder``: an eval folder, or a training run (its GRPO rollouts,
    else its final evaluation). Anything else is a :class:`~papergym.errors.BadInputError`."""
    if not folder.is_dir():
        raise BadInputError(folder, "not a folder; pass an eval folder or a training run folder")
    if is_eval_folder(folder):
        return read_eval_folder(folder, instances)
    rollouts = sorted(folder.rglob(ROLLOUTS_FILE))
    if (folder / CONFIG_FILE).is_file() and rollouts:
        return read_run_folder(folder, rollouts, instances)
    if (folder / CONFIG_FILE).is_file() and is_eval_folder(folder / EVAL_SUBFOLDER):
        data = read_eval_folder(folder / EVAL_SUBFOLDER, instances or _run_data(folder))
        note = f"no GRPO {ROLLOUTS_FILE} in the run: read its final evaluation instead"
        return replace(data, notes=(note, *data.notes))
    raise BadInputError(
        folder,
        f"neither an eval folder (no scores.jsonl) nor a training run (no {CONFIG_FILE} with "
        f"GRPO {ROLLOUTS_FILE} or an eval/ folder)",
    )


def read_run_folder(
    folder: Path, rollouts: list[Path], instances: Path | None = None
) -> UsefulnessInput:
    """The GRPO groups of the run ``folder`` (its ``rollouts`` files) and their criteria."""
    groups: list[AnswerGroup] = []
    records: list[RolloutGroup] = []
    for file in rollouts:
        stage = file.parent.relative_to(folder)
        for record in read_jsonl(file, RolloutGroup):
            records.append(record)
            groups.append(_answer_group(record, f"{stage} step {record.step}"))
    found, path, note = find_instances(instances or _run_data(folder))
    criteria = rubric_criteria(found) if found is not None else _observed_criteria(records)
    return UsefulnessInput(
        source=folder,
        kind="run",
        groups=tuple(groups),
        criteria=tuple(criteria),
        instances=found,
        instances_path=path,
        notes=(note,) if note else (),
    )


def _answer_group(record: RolloutGroup, label: str) -> AnswerGroup:
    return AnswerGroup(
        instance_id=record.instance_id,
        label=label,
        answers=tuple(
            {c: char_verdict(ch) for c, ch in zip(record.criteria, row, strict=True)}
            for row in record.verdicts
        ),
    )


def _run_data(folder: Path) -> Path | None:
    """The build folder the run trained on, from its resolved ``config.yaml``."""
    try:
        config = yaml.safe_load((folder / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    data = config.get("data") if isinstance(config, dict) else None
    build = data.get("build_dir") if isinstance(data, dict) else None
    return Path(build) if isinstance(build, str) and build else None


def _observed_criteria(records: list[RolloutGroup]) -> list[RubricCriterion]:
    """The criteria as the rollouts show them: ids and weights, no texts, no leakage."""
    seen: dict[tuple[str, str], RubricCriterion] = {}
    for record in records:
        for position, (criterion, weight) in enumerate(
            zip(record.criteria, record.weights, strict=True)
        ):
            key = (record.instance_id, criterion)
            seen.setdefault(
                key, RubricCriterion(record.instance_id, criterion, "", weight, position)
            )
    return list(seen.values())
