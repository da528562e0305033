"""The terminal view of ``papergym audit --usefulness`` (the work is
:func:`papergym.audit.usefulness_report.run_usefulness`)."""

from __future__ import annotations

from rich.table import Table

from papergym.audit.usefulness import CriterionUsefulness
from papergym.audit.usefulness_report import UsefulnessReport


def usefulness_lines(report: UsefulnessReport) -> list[str]:
    """What was read, what was not measured, and the recommendations' counts."""
    counts = ", ".join(f"{report.counts.get(k, 0)} {k}" for k in ("keep", "reweight", "drop"))
    lines = [
        f"{report.kind} folder {report.source}: {report.groups} groups, {report.answers} answers, "
        f"{len(report.criteria)} criteria judged: {counts}",
        f"instances: {report.instances or 'not found (no rubric file can be written)'}",
        f"near-duplicates by {report.similarity}",
    ]
    if not report.leakage_measured:
        lines.append("leakage: not measured (pass --instances AUDIT_OUT/instances.jsonl)")
    lines += [f"note: {note}" for note in report.notes]
    lines += [f"warning: {warning}" for warning in report.warnings]
    return lines


def _number(value: float | None, form: str) -> str:
    return "—" if value is None else format(value, form)


def _row(c: CriterionUsefulness) -> list[str]:
    spread = f"{c.varied_groups}/{c.groups}" if c.groups else "—"
    duplicate = f"{c.duplicate_of} {c.similarity:.2f}" if c.duplicate_of and c.similarity else "—"
    leak = {True: "leaked", False: "no", None: "not measured"}[c.leaked]
    decision: str = c.recommendation
    if c.recommendation == "reweight":
        decision = f"reweight {c.weight:g}→{c.new_weight:g}"
    return [
        c.instance_id[:8],
        c.criterion_id,
        f"{c.weight:g}",
        f"{c.scored}" + (f" (+{c.unscored} unscored)" if c.unscored else ""),
        _number(c.pass_rate, ".0%") + (f" {c.constant}" if c.constant else ""),
        spread,
        _number(c.correlation, "+.2f"),
        duplicate,
        leak,
        decision,
        "; ".join(c.reasons),
    ]


def usefulness_table(report: UsefulnessReport) -> Table:
    """One row per criterion: its statistics and the recommendation with its reason."""
    table = Table(title="Criterion usefulness", title_justify="left")
    for name in ("instance", "criterion", "weight", "scored", "pass", "varied in", "r rest"):
        table.add_column(name, no_wrap=True, justify="left" if name[0] in "ic" else "right")
    table.add_column("near-dup", no_wrap=True)
    table.add_column("leakage", no_wrap=True)
    table.add_column("→", no_wrap=True)
    table.add_column("why", overflow="fold", ratio=1)
    for criterion in report.criteria:
        table.add_row(*_row(criterion))
    return table
