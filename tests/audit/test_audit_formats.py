"""Reading rubric datasets of every supported format into audit items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from papergym.audit.formats import (
    AuditFormat,
    detect_format,
    read_dataset,
    split_rubric_text,
)
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, LeakageVerdict, Rubric


def _instance(paper: str, criteria: list[tuple[str, str, str]]) -> Instance:
    specific = tuple(
        Criterion(id=f"c{n}", text=text, dimension=dim, origin=origin, rank=n)
        for n, (text, dim, origin) in enumerate(criteria, start=1)
    )
    return Instance(
        id=Instance.make_id("papergym", "llm", paper),
        recipe="papergym",
        builder="llm",
        paper_id=paper,
        title=f"Paper {paper}",
        question="How can attention be made cheaper on long sequences? Propose a research plan.",
        reference_answer="We route queries to key blocks.",
        rubric=Rubric(specific=specific, general=GENERAL_CRITERIA),
    )


def _write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_audit_reads_our_instances_with_dimension_origin_rank(tmp_path: Path) -> None:
    first = _instance("p1", [("Routes queries to key blocks.", "method", "answer")])
    old = LeakageVerdict(method="judge", leaked=False, reason="earlier run")
    crit = first.rubric.specific[0].model_copy(update={"leakage": (old,)})
    first = first.model_copy(
        update={"rubric": first.rubric.model_copy(update={"specific": (crit,)})}
    )
    second = _instance(
        "p2",
        [
            ("Uses a learned gate.", "method", "question"),
            ("Ablates the gate.", "experiment", "answer"),
        ],
    )
    path = tmp_path / "instances.jsonl"
    write_jsonl(path, [first, second])
    dataset = read_dataset(path)
    assert dataset.format is AuditFormat.instances
    assert dataset.instances == [first, second]
    item = dataset.items[1]
    assert item.id == second.id and item.question == second.question
    assert [(c.dimension, c.origin, c.rank, c.id) for c in item.criteria] == [
        ("method", "question", 1, "c1"),
        ("experiment", "answer", 2, "c2"),
    ]
    assert dataset.items[0].criteria[0].verdict("judge") == old  # earlier verdicts travel along
    assert all(i.source == str(path) and i.format == "instances" for i in dataset.items)


def test_audit_reads_generic_jsonl_with_strings_and_objects(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "generic.jsonl",
        [
            {"id": 7, "question": "Q one?", "criteria": ["A", {"text": "B", "dimension": "x"}]},
            {"question": "Q two?", "criteria": [{"text": "C", "points": -2}]},
        ],
    )
    dataset = read_dataset(path)
    assert dataset.format is AuditFormat.generic and dataset.instances is None
    assert [i.id for i in dataset.items] == ["7", "generic:2"]  # a missing id: file stem + number
    assert [c.text for c in dataset.items[0].criteria] == ["A", "B"]
    assert dataset.items[0].criteria[1].dimension == "x"
    assert dataset.items[1].criteria[0].points == -2.0


def test_audit_reads_researchplangen_list_and_numbered_string(tmp_path: Path) -> None:
    records = [
        {
            "Goal": "Design a study of sparse attention.",
            "Rubric": ["1. Uses block routing.", "Compares with dense attention."],
            "Reference solution": "SECRET reference text",
            "q_id": "rpg-1",
        },
        {
            "Goal": "Plan an evaluation.",
            "Rubric": "1. Reports latency\n   on long inputs.\n2) Uses a retrieval task.\n- Ablates the gate.",
            "Reference solution": "SECRET",
        },
    ]
    path = tmp_path / "rpg.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    dataset = read_dataset(path)
    assert dataset.format is AuditFormat.researchplangen
    first, second = dataset.items
    assert first.id == "rpg-1" and first.question == "Design a study of sparse attention."
    assert [c.text for c in first.criteria] == [
        "Uses block routing.",
        "Compares with dense attention.",
    ]
    assert [c.text for c in second.criteria] == [
        "Reports latency on long inputs.",
        "Uses a retrieval task.",
        "Ablates the gate.",
    ]
    assert "SECRET" not in json.dumps([i.model_dump() for i in dataset.items])


def test_audit_reads_researchqa_types_as_dimensions(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "rqa.jsonl",
        [
            {
                "id": "q1",
                "query": "What limits sparse attention?",
                "rubric": [
                    {"rubric_item": "Mentions fixed patterns.", "type": "general"},
                    {"rubric_item": "Cites retrieval failures.", "type": "citation"},
                ],
            }
        ],
    )
    dataset = read_dataset(path)
    assert dataset.format is AuditFormat.researchqa
    assert [(c.text, c.dimension) for c in dataset.items[0].criteria] == [
        ("Mentions fixed patterns.", "general"),
        ("Cites retrieval failures.", "citation"),
    ]


def test_audit_reads_rubrichub_parquet_with_negative_points_and_chat_prompts(
    tmp_path: Path,
) -> None:
    rows = [
        {
            "question": "How should I treat a mild burn?",
            "rubrics": [
                {"criterion": "Advises cool running water.", "points": 5},
                {"criterion": "Recommends butter.", "points": -3},
            ],
        },
    ]
    path = tmp_path / "hub.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    dataset = read_dataset(path)
    assert dataset.format is AuditFormat.rubrichub
    assert [c.points for c in dataset.items[0].criteria] == [5.0, -3.0]
    assert dataset.items[0].id == "hub:1"

    chat = _write_lines(
        tmp_path / "healthbench.jsonl",
        [
            {
                "prompt_id": "hb1",
                "prompt": [{"role": "user", "content": "My child has a fever."}],
                "rubrics": [{"criterion": "Asks the child's age.", "points": 4}],
            }
        ],
    )
    item = read_dataset(chat).items[0]
    assert item.id == "hb1" and item.question == "My child has a fever."


def test_audit_json_file_may_hold_json_lines(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "lines.json", [{"question": "Q?", "criteria": ["A"]}] * 2)
    assert len(read_dataset(path).items) == 2


def test_audit_forced_format_overrides_detection(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "odd.jsonl", [{"query": "Q?", "rubrics": [{"text": "A"}]}])
    assert read_dataset(path).format is AuditFormat.rubrichub  # detected: has `rubrics`
    forced = read_dataset(path, AuditFormat.rubrichub)
    assert forced.items[0].question == "Q?"


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "unknown.jsonl",
            '{"prompt_text": "x", "answer": "y"}\n',
            "keys found: answer, prompt_text",
        ),
        ("broken.jsonl", '{"question": "Q", "criteria": ["A"]}\n{"question": \n', "broken.jsonl:2"),
        ("empty.jsonl", "\n", "no records"),
        ("notes.txt", "hello", "unsupported file type"),
        ("object.json", '{"question": "Q", "criteria": []}', "found one object"),
        ("bad.parquet", "not parquet at all", "not a readable parquet file"),
        (
            "nocrit.jsonl",
            '{"question": "Q", "criteria": ["A"]}\n{"question": "Q2", "criteria": "A"}\n',
            "line 2",
        ),
    ],
)
def test_audit_bad_files_name_the_file_and_the_problem(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInputError) as raised:
        read_dataset(path)
    message = str(raised.value)
    assert name in message and expected in message
    assert "\n" not in message


def test_audit_forced_format_missing_keys_reports_keys_found(tmp_path: Path) -> None:
    path = _write_lines(tmp_path / "generic.jsonl", [{"question": "Q", "criteria": ["A"]}])
    with pytest.raises(
        BadInputError,
        match=r"not a researchqa record: no 'query' field; keys found: criteria, question",
    ):
        read_dataset(path, AuditFormat.researchqa)
    bad_instance = _write_lines(
        tmp_path / "inst.jsonl", [{"question": "Q", "rubric": {"specific": []}}]
    )
    with pytest.raises(BadInputError, match="not a valid Instance"):
        read_dataset(bad_instance)


def test_audit_detect_format_and_split_rubric_text() -> None:
    assert detect_format({"Goal": "g", "Rubric": "r"}) is AuditFormat.researchplangen
    assert detect_format({"query": "q", "rubric": []}) is AuditFormat.researchqa
    assert detect_format({"something": 1}) is None
    assert split_rubric_text("First item\nSecond item") == ["First item", "Second item"]
    assert split_rubric_text("* a\n  continued\n* b") == ["a continued", "b"]


def test_audit_keeps_our_criterion_weights_as_points(tmp_path: Path) -> None:
    plain = _instance(
        "p1", [("Routes queries.", "method", "answer"), ("Leaks.", "method", "answer")]
    )
    pitfall = plain.rubric.specific[1].model_copy(update={"weight": -2.0})
    weighted = plain.model_copy(
        update={
            "id": "w",
            "rubric": plain.rubric.model_copy(
                update={"specific": (plain.rubric.specific[0], pitfall)}
            ),
        }
    )
    dataset = read_dataset(write_jsonl_path(tmp_path, [plain, weighted]))
    assert [c.points for c in dataset.items[0].criteria] == [1.0, 1.0]
    assert [c.points for c in dataset.items[1].criteria] == [1.0, -2.0]


def write_jsonl_path(tmp_path: Path, instances: list[Instance]) -> Path:
    path = tmp_path / "instances.jsonl"
    write_jsonl(path, instances)
    return path
