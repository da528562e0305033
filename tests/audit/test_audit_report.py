"""Leakage-rate maths: unscored verdicts are counted apart, never in the denominator."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from papergym.audit.formats import AuditCriterion, AuditDataset, AuditFormat, AuditItem
from papergym.audit.report import build_report, method_rate, snippet
from papergym.cli.audit import rates_table, top_table
from papergym.records import LeakageVerdict


def _criterion(
    overlap: tuple[bool, float] | None,
    judge: bool | str | None = "absent",
    *,
    dimension: str | None = None,
    origin: str | None = None,
    text: str = "c",
) -> AuditCriterion:
    verdicts: list[LeakageVerdict] = []
    if overlap is not None:
        leaked, score = overlap
        verdicts.append(LeakageVerdict(method="overlap", leaked=leaked, score=score))
    if judge != "absent":
        assert judge is None or isinstance(judge, bool)
        verdicts.append(LeakageVerdict(method="judge", leaked=judge, reason=f"judge {judge}"))
    return AuditCriterion(text=text, dimension=dimension, origin=origin, leakage=tuple(verdicts))


def _dataset(name: str, *criteria: AuditCriterion, question: str = "Q?") -> AuditDataset:
    item = AuditItem(id=f"{name}-1", question=question, criteria=criteria, source=name)
    return AuditDataset(path=Path(name), format=AuditFormat.generic, items=[item])


def test_audit_method_rate_excludes_unscored_from_the_denominator() -> None:
    criteria = [
        _criterion(None, True),
        _criterion(None, False),
        _criterion(None, None),
        _criterion(None, None),
        _criterion(None, "absent"),  # never judged: not counted at all
    ]
    rate = method_rate(criteria, "judge")
    assert rate is not None
    assert (rate.leaked, rate.scored, rate.unscored, rate.rate) == (1, 2, 2, 0.5)
    assert method_rate(criteria, "overlap") is None
    all_unscored = method_rate([_criterion(None, None)], "judge")
    assert all_unscored is not None and all_unscored.rate is None and all_unscored.unscored == 1


def test_audit_report_rates_per_dataset_dimension_origin_and_overall() -> None:
    ours = _dataset(
        "ours.jsonl",
        _criterion((True, 0.9), True, dimension="method", origin="question"),
        _criterion((False, 0.3), False, dimension="method", origin="answer"),
        _criterion((False, 0.2), None, dimension="experiment", origin="answer"),
        _criterion((False, 0.1), False, dimension="experiment", origin="answer"),
    )
    theirs = _dataset("theirs.jsonl", _criterion((True, 0.95), "absent"), _criterion((True, 0.85)))
    report = build_report([ours, theirs], top=3, thresholds={"lexical": 0.75})
    assert report.methods == ["overlap", "judge"]
    assert report.thresholds == {"lexical": 0.75}
    row = report.row("ours.jsonl")
    assert row.criteria == 4
    assert row.overlap is not None and row.overlap.rate == 0.25
    assert row.judge is not None and (row.judge.leaked, row.judge.scored, row.judge.unscored) == (
        1,
        3,
        1,
    )
    assert row.judge.rate == 1 / 3
    method = report.row("ours.jsonl", "dimension", "method")
    assert method.judge is not None and method.judge.rate == 0.5
    experiment = report.row("ours.jsonl", "dimension", "experiment")
    assert experiment.judge is not None and (
        experiment.judge.scored,
        experiment.judge.unscored,
    ) == (1, 1)
    question = report.row("ours.jsonl", "origin", "question")
    assert question.overlap is not None and question.overlap.rate == 1.0
    # a dataset without dimensions or origins gets no such rows, and no judge rate
    assert [r.by for r in report.rates if r.dataset == "theirs.jsonl"] == ["dataset"]
    assert report.row("theirs.jsonl").judge is None
    overall = report.row("all", "all", "all")
    assert overall.criteria == 6 and overall.overlap is not None and overall.overlap.rate == 0.5
    assert [d.criteria for d in report.datasets] == [4, 2]


def test_audit_report_top_criteria_by_score_with_question_snippet() -> None:
    long_question = "word " * 100
    data = _dataset(
        "d.jsonl",
        _criterion((False, 0.4), text="low"),
        _criterion((True, 0.9), False, text="high, judge says no"),
        _criterion((True, 0.9), True, text="high, judge says yes"),
        _criterion((True, 0.7), text="middle"),
        question=long_question,
    )
    report = build_report([data], top=3)
    assert [t.text for t in report.top] == ["high, judge says yes", "high, judge says no", "middle"]
    first = report.top[0]
    assert (first.dataset, first.item_id, first.criterion, first.score) == (
        "d.jsonl",
        "d.jsonl-1",
        3,
        0.9,
    )
    assert first.judge is True and first.reason == "judge True"
    assert first.question.endswith("…") and len(first.question) <= 161
    assert build_report([data], top=0).top == []


def test_audit_report_tables_render_rates_and_unscored() -> None:
    data = _dataset("d.jsonl", _criterion((True, 0.9), None), _criterion((False, 0.1), True))
    report = build_report([data], top=5)
    console = Console(width=160, record=True)
    console.print(rates_table(report))
    console.print(top_table(report))
    text = console.export_text()
    assert "50.0% (1/2)" in text  # overlap
    assert "100.0% (1/1)" in text  # judge, the unscored one left out
    assert "unscored" in text and "leaked" in text


def test_audit_snippet_keeps_short_text_whole() -> None:
    assert snippet("  a   short\nquestion ") == "a short question"
