"""Training data: the instances of a ``papergym build``, or of any rubric dataset ``eval`` and
``audit`` read, as the rows every trainer reads.

A folder is a build (its ``instances.jsonl``); a file is read by ``audit``'s reader
(:func:`papergym.audit.formats.read_dataset`: our instances, generic ``{question, criteria}``,
ResearchPlanGen, ResearchQA, RubricHub) and each foreign row becomes an Instance as ``eval``
makes it (:func:`papergym.eval.data.instance_from_item`): its criteria plus our general ones,
and no reference answer. Such a row is its own "paper", so ``data.test_fraction`` holds out
single questions by the same stable hash ``eval --split test`` uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from papergym.audit.formats import AuditFormat, read_dataset
from papergym.errors import BadInputError
from papergym.eval.data import instance_from_item
from papergym.export.common import split_instances
from papergym.export.datesplit import date_rule
from papergym.export.trl import trl_rows
from papergym.jsonl import read_jsonl
from papergym.records import Instance
from papergym.train.config import DataSettings


def instances_path(build_dir: Path) -> Path:
    """``BUILD/instances.jsonl``, or the file itself when given one."""
    path = build_dir / "instances.jsonl" if build_dir.is_dir() else build_dir
    if not path.is_file():
        raise BadInputError(
            build_dir,
            "no instances.jsonl here; pass a `papergym build` folder or a rubric dataset file",
        )
    return path


def read_training_instances(data: Path) -> tuple[Path, list[Instance]]:
    """The file read and its instances: a build folder's ``instances.jsonl``, or a rubric
    dataset file of any format ``audit`` reads (foreign rows without a reference answer)."""
    path = instances_path(data)
    if data.is_dir():
        try:
            return path, read_jsonl(path, Instance)
        except ValueError as error:
            raise BadInputError(
                path, f"not a PaperGym instances file ({_first_line(error)})"
            ) from None
    dataset = read_dataset(path)
    if dataset.format is AuditFormat.instances and dataset.instances is not None:
        return path, dataset.instances
    instances = [instance_from_item(item) for item in dataset.items]
    seen: set[str] = set()
    for instance in instances:
        if instance.id in seen:  # ids key every answer, score and held-out evaluation
            raise BadInputError(path, f"instance id {instance.id!r} appears more than once")
        seen.add(instance.id)
    return path, instances


def refuse_missing_references(
    path: Path, instances: Sequence[Instance], needed_by: Sequence[str]
) -> None:
    """Refuse data whose instances lack a reference answer when something needs one
    (``needed_by``: what, in words); one line naming the file and the missing field."""
    if not needed_by:
        return
    missing = sum(1 for instance in instances if not instance.reference_answer.strip())
    if missing:
        raise BadInputError(
            path,
            f"{missing} of {len(instances)} training instances have no reference_answer, which "
            f"{' and '.join(needed_by)}; train opsd (rubric as teacher context) or grpo on "
            "such data",
        )


def load_instances(settings: DataSettings) -> dict[str, list[Instance]]:
    """``{"train": [...]}`` (+ ``"test"`` when ``test_fraction`` or a date split is set), split
    by paper."""
    if settings.build_dir is None:
        raise BadInputError(None, "no training data: pass --data BUILD_DIR or set data.build_dir")
    path, instances = read_training_instances(settings.build_dir)
    if settings.max_instances is not None:
        instances = instances[: settings.max_instances]
    date_split = date_rule(settings.split_by, settings.test_after, settings.undated)
    splits = split_instances(instances, settings.test_fraction, date_split)
    if not splits["train"]:
        raise BadInputError(path, "no training instances (the file is empty or all held out)")
    return splits


def training_rows(
    settings: DataSettings, reference_needed_by: Sequence[str] = ()
) -> dict[str, list[dict[str, Any]]]:
    """The TRL rows (prompt, question, reference, rubric, privileged_context...) per split;
    refused when a training instance lacks the reference answer ``reference_needed_by`` need."""
    splits = load_instances(settings)
    assert settings.build_dir is not None  # load_instances checked it
    refuse_missing_references(
        instances_path(settings.build_dir), splits["train"], reference_needed_by
    )
    return {name: trl_rows(items, settings.system_prompt) for name, items in splits.items()}


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
