"""Training data: the instances of a ``papergym build`` as the rows every trainer reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
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
        raise BadInputError(build_dir, "no instances.jsonl here; pass a `papergym build` folder")
    return path


def load_instances(settings: DataSettings) -> dict[str, list[Instance]]:
    """``{"train": [...]}`` (+ ``"test"`` when ``test_fraction`` or a date split is set), split
    by paper."""
    if settings.build_dir is None:
        raise BadInputError(None, "no training data: pass --data BUILD_DIR or set data.build_dir")
    path = instances_path(settings.build_dir)
    try:
        instances = read_jsonl(path, Instance)
    except ValueError as error:
        raise BadInputError(path, f"not a PaperGym instances file ({_first_line(error)})") from None
    if settings.max_instances is not None:
        instances = instances[: settings.max_instances]
    date_split = date_rule(settings.split_by, settings.test_after, settings.undated)
    splits = split_instances(instances, settings.test_fraction, date_split)
    if not splits["train"]:
        raise BadInputError(path, "no training instances (the file is empty or all held out)")
    return splits


def training_rows(settings: DataSettings) -> dict[str, list[dict[str, Any]]]:
    """The TRL rows (prompt, question, reference, rubric, privileged_context...) per split."""
    return {
        name: trl_rows(items, settings.system_prompt)
        for name, items in load_instances(settings).items()
    }


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
