"""Criterion labels: read and checked against the instances, bad lines refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papergym.calibrate.labels import read_labels
from papergym.errors import BadInputError
from support.instances import rubric_instance

INSTANCE = rubric_instance(
    "i1",
    ["The plan uses a lasso.", "The plan tests on 2020 data."],
    question="Q?",
    reference_answer="We use a lasso. We test on 2020 data.",
    title="T",
)


def write(path: Path, *rows: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def label() -> dict[str, object]:
    return {"instance_id": "i1", "answer": "We use a lasso.", "criterion_id": "i1-c1", "met": 1}


def test_reads_labels(tmp_path: Path) -> None:
    other = {**label(), "criterion_id": "i1-c2", "met": 0, "note": "by hand"}
    labels = read_labels(write(tmp_path / "l.jsonl", label(), other), {"i1": INSTANCE})
    assert [(x.criterion_id, x.met, x.note) for x in labels] == [
        ("i1-c1", 1, ""),
        ("i1-c2", 0, "by hand"),
    ]


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ({**label(), "met": 2}, "met"),
        ({**label(), "instance_id": "nope"}, "is not an instance"),
        ({**label(), "criterion_id": "g1"}, "is not a specific criterion"),
        ({**label(), "extra": 1}, "extra"),
    ],
)
def test_bad_lines_name_the_file_and_line(tmp_path: Path, row: object, says: str) -> None:
    path = write(tmp_path / "l.jsonl", label(), row)
    with pytest.raises(BadInputError, match=rf"l\.jsonl:2: .*{says}"):
        read_labels(path, {"i1": INSTANCE})


def test_a_repeated_label_and_an_empty_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="same label as line 1"):
        read_labels(write(tmp_path / "l.jsonl", label(), label()), {"i1": INSTANCE})
    with pytest.raises(BadInputError, match="no labels"):
        read_labels(write(tmp_path / "e.jsonl"), {"i1": INSTANCE})
