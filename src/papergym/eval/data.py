"""The questions ``papergym eval`` asks: a build's instances, or any rubric dataset ``audit``
reads (ResearchPlanGen, ResearchQA, RubricHub, generic ``{question, criteria}``) as Instances."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from papergym.audit.formats import AuditFormat, AuditItem, read_dataset
from papergym.errors import BadInputError
from papergym.export.common import split_instances
from papergym.export.datesplit import DateSplit
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric, content_hash
from papergym.sources.files import refuse_link_out


@dataclass(frozen=True)
class EvalData:
    """The instances evaluated, where they came from, and a content id of them."""

    path: Path
    format: str
    split: str
    instances: list[Instance]

    @property
    def data_id(self) -> str:
        """A hash of the questions and rubrics: equal ids mean the same evaluation data."""
        return content_hash(
            [[i.id, i.question, i.rubric.model_dump(mode="json")] for i in self.instances]
        )


def _dimension(value: str | None) -> str:
    # foreign datasets rarely tag dimensions; an untagged criterion counts as method, and one
    # that names experiments (or evaluation) as experiment
    text = (value or "").lower()
    return "experiment" if "experiment" in text or "evaluat" in text else "method"


def instance_from_item(item: AuditItem, general: bool = True) -> Instance:
    """An audit item as an Instance: its criteria (weights and ranks kept) plus, with
    ``general``, our 7 general criteria, so the same reward scores it (without: the dataset's
    own criteria only, as its benchmark scores them); there is no reference answer."""
    specific = tuple(
        Criterion(
            id=c.id or f"c{index}",
            text=c.text,
            dimension="experiment" if _dimension(c.dimension) == "experiment" else "method",
            origin="answer",
            rank=c.rank if c.rank is not None and c.rank >= 1 else index,
            weight=c.points if c.points is not None and c.points != 0 else 1.0,
        )
        for index, c in enumerate(item.criteria, start=1)
    )
    paper_id = content_hash({"source": item.format, "id": item.id})
    return Instance(
        id=item.id,
        recipe="papergym",
        builder="extractive",
        paper_id=paper_id,
        source_path=item.source,
        question=item.question,
        reference_answer="",
        rubric=Rubric(specific=specific, general=GENERAL_CRITERIA if general else ()),
        source_kind="document",
    )


def _file(data: Path) -> Path:
    if data.is_dir():
        path = data / "instances.jsonl"
        if not path.is_file():
            raise BadInputError(data, "no instances.jsonl here; pass a `papergym build` folder")
        refuse_link_out(path, data)  # its questions go to the systems' endpoints
        return path
    if not data.exists():
        raise BadInputError(data, "no such file or folder")
    return data


def load_eval_data(
    data: Path,
    split: str,
    test_fraction: float | None,
    limit: int | None = None,
    date_split: DateSplit | None = None,
    general: bool = True,
) -> EvalData:
    """The instances of ``split`` ("auto": test when ``test_fraction`` or a date rule,
    ``date_split``, holds papers out, else all). A foreign dataset's items get our general
    criteria unless ``general`` is false (benchmark scoring)."""
    path = _file(data)
    dataset = read_dataset(path)
    if dataset.format is AuditFormat.instances and dataset.instances is not None:
        instances = dataset.instances
    else:
        instances = [instance_from_item(item, general) for item in dataset.items]
    seen: set[str] = set()
    for instance in instances:
        if instance.id in seen:  # ids key every answer and score
            raise BadInputError(path, f"instance id {instance.id!r} appears more than once")
        seen.add(instance.id)
    held_out = test_fraction is not None or date_split is not None
    if split == "auto":
        split = "test" if held_out else "all"
    if split in ("test", "train"):
        if not held_out:
            raise BadInputError(
                None,
                f"--split {split} needs the held-out share training used: set "
                "data.test_fraction=F or data.split_by=date data.test_after=YYYY-MM (or -c the "
                "training config), or use --split all",
            )
        instances = split_instances(instances, test_fraction, date_split)[split]
    elif split != "all":
        raise BadInputError(None, f"unknown split {split!r}; use test, train or all")
    if limit is not None:
        instances = instances[:limit]
    if not instances:
        raise BadInputError(path, f"no questions in the {split} split")
    return EvalData(path=path, format=dataset.format.value, split=split, instances=instances)
