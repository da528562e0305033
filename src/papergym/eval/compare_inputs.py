"""What compare reads: eval folders (summary and answers, checked whole), the systems they
hold, and the questions they were evaluated on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from papergym.errors import BadInputError
from papergym.eval.data import load_eval_data
from papergym.eval.orderings import MAX_SYSTEMS
from papergym.eval.records import ANSWERS_FILE, EvalAnswer, EvalSummary
from papergym.eval.records import SUMMARY_FILE as EVAL_SUMMARY_FILE
from papergym.jsonl import iter_json_lines
from papergym.records import Instance, content_hash
from papergym.sources.files import refuse_link_out


@dataclass(frozen=True)
class EvalFolder:
    """What compare reads from one eval folder: its summary and the compared answers."""

    path: Path
    summary: EvalSummary
    answers: dict[str, dict[str, str]]
    """system → instance id → the answer (of the compared sample)."""


def _read_summary(folder: Path) -> EvalSummary:
    path = folder / EVAL_SUMMARY_FILE
    if not folder.is_dir():
        raise BadInputError(folder, "no such eval folder (EVAL_DIR is a `papergym eval` -o folder)")
    if not path.is_file():
        raise BadInputError(
            path, "missing: not a finished `papergym eval` folder (run its eval command again)"
        )
    try:
        return EvalSummary.model_validate_json(path.read_bytes())
    except ValidationError as error:
        first = str(error).splitlines()[0]
        raise BadInputError(path, f"not an eval summary: {first}") from None


def _answer_at(path: Path, number: int, row: object) -> EvalAnswer:
    try:
        return EvalAnswer.model_validate(row)
    except ValidationError as error:
        first = " ".join(str(error).splitlines()[:2])
        raise BadInputError(f"{path}:{number}", f"not an eval answer: {first}") from None


def read_eval_folder(folder: Path, sample: int) -> EvalFolder:
    """An eval folder's summary and answers; a file that is not whole (a missing, duplicate or
    unknown instance id, an unknown system, a missing sample) is one-line bad input."""
    summary = _read_summary(folder)
    if sample >= summary.samples:
        raise BadInputError(
            folder,
            f"compare.sample={sample}, but this eval drew {summary.samples} sample(s) per "
            "question (samples are numbered from 0)",
        )
    path = folder / ANSWERS_FILE
    refuse_link_out(path, folder)  # its answers go to the judges' endpoints
    systems = [s.system.name for s in summary.systems]
    known = set(summary.instance_ids)
    answers: dict[str, dict[str, str]] = {name: {} for name in systems}
    lines: dict[tuple[str, str, int], int] = {}
    for number, row in iter_json_lines(path):
        answer = _answer_at(path, number, row)
        where = f"{path}:{number}"
        if answer.system not in answers:
            raise BadInputError(
                where, f"system {answer.system!r} is not in {EVAL_SUMMARY_FILE} ({systems})"
            )
        if answer.instance_id not in known:
            raise BadInputError(
                where, f"instance id {answer.instance_id!r} is not among the evaluated questions"
            )
        key = (answer.system, answer.instance_id, answer.sample)
        if key in lines:
            raise BadInputError(
                where,
                f"duplicate answer of {answer.system!r} to {answer.instance_id!r} (sample "
                f"{answer.sample}; first on line {lines[key]})",
            )
        lines[key] = number
        if answer.sample == sample:
            answers[answer.system][answer.instance_id] = answer.answer
    for name in systems:
        missing = [i for i in summary.instance_ids if i not in answers[name]]
        if missing:
            raise BadInputError(
                path,
                f"system {name!r} has no answer (sample {sample}) to {len(missing)} question(s), "
                f"first {missing[0]!r}: run its eval again to finish it",
            )
    return EvalFolder(folder, summary, answers)


def check_same_data(folders: Sequence[EvalFolder]) -> None:
    """Refuse folders evaluated on different data, naming the first two that differ."""
    first = folders[0]
    for other in folders[1:]:
        if other.summary.data_id != first.summary.data_id:
            a, b = first.summary, other.summary
            raise BadInputError(
                None,
                f"EVAL_DIRs built on different data: {first.path} ({a.data}, split {a.split}, "
                f"{a.questions} questions, data_id {a.data_id}) and {other.path} ({b.data}, "
                f"split {b.split}, {b.questions} questions, data_id {b.data_id})",
            )


def compared_systems(folders: Sequence[EvalFolder]) -> list[str]:
    """Every folder's systems, in command-line order; a name twice is bad input."""
    owner: dict[str, Path] = {}
    for folder in folders:
        for name in folder.answers:
            if name in owner:
                raise BadInputError(
                    None,
                    f"system {name!r} is in both {owner[name]} and {folder.path}; name them "
                    "apart in eval (NAME=SPEC)",
                )
            owner[name] = folder.path
    systems = list(owner)
    if len(systems) < 2:
        raise BadInputError(
            None, f"compare needs at least 2 systems; the EVAL_DIRs hold {len(systems)}"
        )
    if len(systems) > MAX_SYSTEMS:
        raise BadInputError(
            None, f"compare takes at most {MAX_SYSTEMS} systems, not {len(systems)}"
        )
    return systems


def load_questions(summary: EvalSummary, data: Path | None) -> list[Instance]:
    """The evaluated questions, in the eval's order, from the data it was run on (or ``data``);
    data that is not what the eval was run on (another data_id) is bad input."""
    path = data or Path(summary.data)
    if not path.exists():
        raise BadInputError(
            path,
            "the data the EVAL_DIRs were evaluated on is not here; pass its path with --data",
        )
    loaded = load_eval_data(path, "all", None)
    by_id = {i.id: i for i in loaded.instances}
    chosen = [by_id[i] for i in summary.instance_ids if i in by_id]
    found = content_hash([[i.id, i.question, i.rubric.model_dump(mode="json")] for i in chosen])
    if len(chosen) != len(summary.instance_ids) or found != summary.data_id:
        raise BadInputError(
            path,
            f"not the data the EVAL_DIRs were evaluated on (data_id {summary.data_id}); pass "
            "that data with --data",
        )
    return chosen
