"""What ``papergym score`` and ``papergym check-reward`` read: a build's instances (the folder or
its ``instances.jsonl``) and an answers file, with one answer per instance or several (GRPO
samples).

An answers line is ``{"instance_id": ..., "answer": ...}`` (the id may be called ``id``; the
answer ``response`` or ``completion``). Several answers to one instance are told apart by a
``sample`` field (an integer or a string, unique per instance), or, when the caller asks for
it (``--samples``), by their order in the file: the first answer to an instance is sample 0,
the next sample 1, and so on. Without either, a second answer to an instance is an error, as
it most often means two answer files were concatenated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, ValidationError

from papergym.errors import BadInputError
from papergym.jsonl import iter_json_lines
from papergym.records import Instance, Score

INSTANCES_FILE = "instances.jsonl"
ID_FIELDS = ("instance_id", "id")
ANSWER_FIELDS = ("answer", "response", "completion")
SAMPLE_FIELD = "sample"

SampleId = int | str


class SampleScore(Score):
    """A score of one of several answers to an instance: the :class:`Score` and which sample."""

    sample: SampleId = Field(description="The answer's sample field, or its rank in the file.")


@dataclass(frozen=True)
class Answer:
    """One answers line: the instance it answers, which sample it is (None: the only one)."""

    line: int
    instance_id: str
    answer: str
    sample: SampleId | None = None


def instances_file(path: Path) -> Path:
    """``path`` itself, or, for a build folder, its ``instances.jsonl`` (as ``export`` takes)."""
    if not path.is_dir():
        return path
    found = path / INSTANCES_FILE
    if found.is_file():
        return found
    held = sorted(p.name for p in path.iterdir() if p.suffix == ".jsonl")[:3]
    what = f"it holds {', '.join(held)}" if held else "it holds no .jsonl file"
    raise BadInputError(
        path,
        f"no {INSTANCES_FILE} in this folder ({what}); pass a `papergym build` folder or its "
        f"{INSTANCES_FILE}",
    )


def read_instances(path: Path) -> dict[str, Instance]:
    """Instances by id, from a build folder or an instances file; a duplicate id is an error
    naming both lines."""
    path = instances_file(path)
    by_id: dict[str, tuple[int, Instance]] = {}
    for number, data in iter_json_lines(path):
        try:
            instance = Instance.model_validate(data)
        except ValidationError as error:
            first = str(error).splitlines()[0]
            raise BadInputError(f"{path}:{number}", f"not a valid Instance: {first}") from None
        if instance.id in by_id:
            raise BadInputError(
                f"{path}:{number}",
                f"duplicate instance id {instance.id!r} (first on line {by_id[instance.id][0]})",
            )
        by_id[instance.id] = (number, instance)
    return {key: instance for key, (_, instance) in by_id.items()}


def _json_kind(value: object) -> str:
    """How JSON calls ``value``'s type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return "a string"


def _text_field(row: dict[str, object], names: tuple[str, ...], where: str) -> str:
    """The first of ``names`` present in ``row``, which must hold a string.

    Never ``str()`` of whatever is there: a null, a number or a list would be scored as the
    text "None", "3.14" or "['...']".
    """
    name = next((n for n in names if n in row), None)
    if name is None:
        raise BadInputError(where, f"no {names[0]} field (expected one of {', '.join(names)})")
    value = row[name]
    if not isinstance(value, str):
        raise BadInputError(where, f"{name} must be a string, not {_json_kind(value)}")
    return value


def _sample(row: dict[str, object], where: str) -> SampleId | None:
    if SAMPLE_FIELD not in row:
        return None
    value = row[SAMPLE_FIELD]
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise BadInputError(
            where, f"sample must be an integer or a string, not {_json_kind(value)}"
        )
    if isinstance(value, str) and not value.strip():
        raise BadInputError(where, "sample is empty")
    return value


def _row(row: object, where: str) -> tuple[str, str, SampleId | None]:
    if not isinstance(row, dict):
        raise BadInputError(
            where, f"expected a JSON object with instance_id and answer, not {_json_kind(row)}"
        )
    key = _text_field(row, ID_FIELDS, where)
    if not key.strip():
        raise BadInputError(where, "instance_id is empty")
    return key, _text_field(row, ANSWER_FIELDS, where), _sample(row, where)


def read_answers(path: Path, *, samples: bool = False) -> list[Answer]:
    """The answers in ``path``, in file order, each with its sample (see the module doc).

    ``samples``: several answers per instance are expected, numbered by their order where
    they have no ``sample`` field. Any ``sample`` field makes the file a samples file. Every
    line is checked before anything is scored: one line naming file:line for the first bad
    one (not an object, a missing or non-string id or answer, a bad sample, an answer whose
    instance and sample came before, ``sample`` on some lines but not others).
    """
    answers: list[Answer] = []
    first_line: dict[tuple[str, SampleId | None], int] = {}
    counts: dict[str, int] = {}
    with_sample = without_sample = 0
    for number, row in iter_json_lines(path):
        where = f"{path}:{number}"
        key, text, sample = _row(row, where)
        with_sample += sample is not None
        without_sample += sample is None
        if with_sample and without_sample:
            raise BadInputError(
                where, "a sample field on some lines but not on others: give every line one"
            )
        if sample is None and samples:
            sample = counts.get(key, 0)
        counts[key] = counts.get(key, 0) + 1
        if (key, sample) in first_line:
            first = first_line[(key, sample)]
            if sample is None:
                raise BadInputError(
                    where,
                    f"duplicate instance_id {key!r} (first on line {first}); for several answers "
                    "per instance give each a sample field, or pass --samples",
                )
            raise BadInputError(
                where, f"duplicate sample {sample!r} of instance_id {key!r} (first on line {first})"
            )
        first_line[(key, sample)] = number
        answers.append(Answer(number, key, text, sample))
    if not answers:
        raise BadInputError(path, "no answers")
    return answers


def with_samples(scores: Sequence[Score], answers: Sequence[Answer]) -> list[Score]:
    """The scores to write: as they are for one answer per instance, else each with its
    answer's sample (:func:`read_answers` gives every answer a sample, or none)."""
    if all(a.sample is None for a in answers):
        return list(scores)
    written: list[Score] = []
    for score, answer in zip(scores, answers, strict=True):
        if answer.sample is None:
            raise ValueError(f"line {answer.line}: no sample among answers with samples")
        written.append(SampleScore(**score.model_dump(), sample=answer.sample))
    return written


def default_scores_path(answers: Path) -> Path:
    """Where scores go without ``-o``: beside the answers, named after them
    (``run/answers.jsonl`` → ``run/answers.scores.jsonl``), so that neither the answers file
    nor an eval folder's own ``scores.jsonl`` is ever written over."""
    return answers.with_name(f"{answers.stem}.scores.jsonl")
