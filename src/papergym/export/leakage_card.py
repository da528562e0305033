"""The card's leakage before and after the build's action, and beside other rubric datasets.

Before/after (SPEC §1 reports 3.73% for PaperGym-20k): the rubric before ``build.leakage.action``
is each instance's criteria that replace nothing plus those it took out (``Rubric.leaked_out``);
after is the rubric as published. Both count only the judge's verdicts, over the instances kept:
an instance the action dropped is in neither (the card says how many there were).

The comparison reads ``leakage_report.json`` from ``papergym audit`` output folders (one row per
dataset and method). An overlap-screen rate and a judge rate measure different things, so every
row names its method and its denominator, and the table is ordered by method.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
from papergym.records import Criterion, Drop, Instance

AUDIT_REPORT = "leakage_report.json"
"""What ``papergym audit -o DIR`` writes its rates to (:data:`papergym.audit.run.REPORT_FILE`)."""
ACTION_STEP = "leakage"  # the step a build records a leakage drop under
OURS = "this dataset"


def _judge_counts(criteria: Iterable[Criterion]) -> dict[str, Any]:
    tally: Counter[str] = Counter()
    for criterion in criteria:
        tally["criteria"] += 1
        for verdict in criterion.leakage:
            if verdict.method == "judge":
                tally["verdicts"] += 1
                tally["leaked"] += verdict.leaked is True
                tally["scored"] += verdict.leaked is not None
    scored, leaked = tally["scored"], tally["leaked"]
    return {
        "criteria": tally["criteria"],
        "scored": scored,
        "leaked": leaked,
        "unscored": tally["verdicts"] - scored,
        "rate": round(leaked / scored, 6) if scored else None,
    }


def action_stats(instances: Sequence[Instance], drops: Sequence[Drop]) -> dict[str, Any] | None:
    """Judge leakage before and after the build's action, with what the action did; ``None``
    when no criterion carries a judge verdict (no judge ran: there is nothing to act on).

    Passes over the instances (a build's are read from their file on each), no list of them."""
    if not any(
        v.method == "judge" for i in instances for c in i.rubric.specific for v in c.leakage
    ):
        return None
    before = (
        c for i in instances for c in (*i.rubric.specific, *i.rubric.leaked_out) if not c.replaces
    )
    replaced = sum(1 for i in instances for c in i.rubric.specific if c.replaces)
    taken_out = sum(len(i.rubric.leaked_out) for i in instances)
    return {
        "instances": len(instances),
        "before": _judge_counts(before),
        "after": _judge_counts(c for i in instances for c in i.rubric.specific),
        "replaced": replaced,
        "removed": taken_out - replaced,
        "instances_changed": sum(1 for i in instances if i.rubric.leaked_out),
        "instances_dropped": sum(1 for d in drops if d.step == ACTION_STEP),
    }


def read_comparison(folders: Sequence[Path]) -> list[dict[str, Any]]:
    """One row per dataset and method from each ``papergym audit`` output folder's report.

    A folder without the report, or a report without rate rows, is bad input."""
    rows: list[dict[str, Any]] = []
    for folder in folders:
        path = folder / AUDIT_REPORT
        if not path.is_file():
            raise BadInputError(folder, f"no {AUDIT_REPORT}: not a papergym audit output folder")
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise BadInputError(path, f"unreadable audit report: {error}") from None
        found = _rows_of(report, folder)
        if not found:
            raise BadInputError(path, "the audit report has no per-dataset rates")
        rows += found
    return rows


def _rows_of(report: Any, folder: Path) -> list[dict[str, Any]]:
    if not isinstance(report, dict) or not isinstance(report.get("rates"), list):
        return []
    formats = {
        str(d.get("path")): str(d.get("format"))
        for d in report.get("datasets", [])
        if isinstance(d, dict)
    }
    rows = []
    for row in report["rates"]:
        if not isinstance(row, dict) or row.get("by") != "dataset":
            continue
        for method in ("judge", "overlap"):
            rate = row.get(method)
            if isinstance(rate, dict):
                name = str(row.get("dataset", ""))
                rows.append(
                    {
                        "dataset": name,
                        "format": formats.get(name, ""),
                        "audit": str(folder),
                        "method": method,
                        "criteria": row.get("criteria"),
                        "scored": rate.get("scored"),
                        "leaked": rate.get("leaked"),
                        "unscored": rate.get("unscored"),
                        "rate": rate.get("rate"),
                    }
                )
    return rows


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.2f}%"


def _of(counts: dict[str, Any]) -> str:
    return f"{counts['leaked']} / {counts['scored']}"


def action_lines(stats: dict[str, Any] | None, action: str | None) -> list[str]:
    """The card's before/after table (empty when no judge verdicts were stored)."""
    if not stats:
        return []
    before, after = stats["before"], stats["after"]
    lines = [
        f"Build action on judge-leaked criteria: {action or 'unknown'} "
        f"({stats['replaced']} replaced, {stats['removed']} removed, "
        f"{stats['instances_changed']} instances changed, {stats['instances_dropped']} dropped "
        "for leakage and not counted below).",
        "",
        "| rubric | method | leaked / scored | unscored | rate |",
        "|---|---|---|---|---|",
        f"| before the action | judge | {_of(before)} | {before['unscored']} | "
        f"{_pct(before['rate'])} |",
        f"| as published | judge | {_of(after)} | {after['unscored']} | {_pct(after['rate'])} |",
        "",
    ]
    return lines


def comparison_lines(stats: dict[str, Any] | None, rows: Sequence[dict[str, Any]]) -> list[str]:
    """The card's "ours vs other datasets" table, ordered by method (empty without rows)."""
    if not rows:
        return []
    ours = []
    if stats:
        for label, counts in (("before action", stats["before"]), ("published", stats["after"])):
            ours.append({"dataset": f"{OURS} ({label})", "method": "judge", **counts})
    table = sorted([*ours, *rows], key=lambda r: (r["method"] != "judge", r["method"]))
    lines = [
        "Comparison with other rubric datasets (`papergym audit`). The overlap screen "
        "(lexical/embedding similarity) and the LLM judge measure different things: compare "
        "rates within one method only.",
        "",
        "| dataset | method | leaked / scored | unscored | rate |",
        "|---|---|---|---|---|",
    ]
    for row in table:
        lines.append(
            f"| {row['dataset']} | {row['method']} | {row['leaked']} / {row['scored']} | "
            f"{row['unscored']} | {_pct(row['rate'])} |"
        )
    return [*lines, ""]
