"""The report's section on one ``papergym compare`` folder: facts, win / tie / loss rates
with intervals, position bias, judges' agreement, and some verdicts with their reasons."""

from __future__ import annotations

from collections import defaultdict

from markupsafe import Markup

from papergym.eval.compare import records as cr
from papergym.report import plots
from papergym.report.browser import compare_browser
from papergym.report.parts import (
    CompareDir,
    Section,
    Table,
    fmt_counts,
    fmt_estimate,
    fmt_value,
    point,
)


def _judge_label(summary: cr.CompareSummary, judge: str) -> str:
    model = summary.judge_models.get(judge)
    return f"{judge} ({model})" if model and model != judge else judge


def _compare_facts(summary: cr.CompareSummary) -> list[tuple[str, str]]:
    return [
        ("judges", ", ".join(_judge_label(summary, judge) for judge in summary.judges)),
        ("systems", ", ".join(summary.systems)),
        ("eval folders", ", ".join(summary.eval_dirs)),
        ("data id", summary.data_id),
        ("questions", str(summary.questions)),
        ("orderings", f"{len(summary.orderings)} ({summary.design})"),
        ("reference shown to the judge", "yes" if summary.reference_shown else "no"),
        (
            "verdicts",
            f"{summary.verdicts} asked, {summary.parsed} parsed, {summary.unparsed} unparsed"
            + (f" ({fmt_counts(summary.unparsed_reasons)})" if summary.unparsed else ""),
        ),
        (
            "intervals",
            f"{summary.level:.0%} bootstrap, {summary.resamples} resamples, seed {summary.seed}",
        ),
        ("written by", f"papergym {summary.version}"),
    ]


def _rates_table(result: cr.CriterionResult) -> Table:
    return Table(
        f"Win / tie / loss: {result.criterion}",
        ["system", "win", "tie", "loss", "wins", "ties", "losses"],
        [
            [
                r.system,
                fmt_estimate(r.win),
                fmt_estimate(r.tie),
                fmt_estimate(r.loss),
                str(r.wins),
                str(r.ties),
                str(r.losses),
            ]
            for r in result.systems
        ],
        note=f"{result.parsed} parsed of {result.verdicts} verdicts; {result.unparsed} "
        "unparsed, counted apart (never as a loss). n is the number of questions.",
    )


def _rates_plot(result: cr.CriterionResult) -> Markup:
    rows = [
        (
            r.system,
            [
                plots.Segment("win", r.win.value or 0.0, r.win.low, r.win.high),
                plots.Segment("tie", r.tie.value or 0.0, r.tie.low, r.tie.high),
                plots.Segment("loss", r.loss.value or 0.0, r.loss.low, r.loss.high),
            ],
        )
        for r in result.systems
    ]
    return Markup(plots.stacked_bars(f"Win / tie / loss: {result.criterion}", rows))


def _add_position_bias(section: Section, summary: cr.CompareSummary) -> None:
    """A row per criterion and judge (all judges together first), and the same as a forest
    plot against the unbiased share."""
    bias_rows: list[list[str]] = []
    bias_points: list[tuple[str, plots.Point]] = []
    expected = None
    for result in summary.criteria:
        groups = {"all judges": result.position_bias, **result.position_bias_by_judge}
        for judge, bias in groups.items():
            if len(groups) == 2 and judge != "all judges":
                continue  # one judge: its row would repeat the total
            expected = bias.expected
            by_position = ", ".join(
                f"{label}: {fmt_value(share, 2)}" for label, share in bias.by_position.items()
            )
            bias_rows.append(
                [
                    result.criterion,
                    judge,
                    fmt_estimate(bias.first),
                    f"{bias.expected:.3f}",
                    by_position,
                    str(bias.decisive),
                ]
            )
            bias_points.append((f"{result.criterion} · {judge}", point(bias.first)))
    section.tables.append(
        Table(
            "Position bias: how often the answer shown first wins",
            ["criterion", "judge", "first wins", "unbiased", "by position", "decisive verdicts"],
            bias_rows,
            note="Among decisive (non-tie) parsed verdicts; every system is shown in every "
            "position equally often, so an unbiased judge picks position A 1/n of the time.",
        )
    )
    if bias_points:
        section.plots.append(
            Markup(
                plots.forest_plot(
                    "Position bias: share of decisive verdicts picking the first answer",
                    bias_points,
                    reference=expected if expected is not None else 0.5,
                    x_range=(0.0, 1.0),
                    x_label="share (dashed: unbiased)",
                )
            )
        )


def _agreement_table(summary: cr.CompareSummary) -> Table:
    return Table(
        "Agreement between judges (Fleiss' κ)",
        ["criterion", "κ", "observed", "expected", "items", "excluded", "judges"],
        [
            [
                a.criterion,
                fmt_value(a.kappa),
                fmt_value(a.observed),
                fmt_value(a.expected),
                str(a.items),
                str(a.excluded),
                str(a.judges),
            ]
            for a in summary.agreement
        ],
        note="Items are question × ordering; items with an unparsed verdict are excluded.",
    )


def compare_section(directory: CompareDir, browser_key: str = "0") -> Section:
    """The section on one compare folder; ``browser_key`` tells its sample browser's data
    apart from the other sections' on the page."""
    summary = directory.summary
    section = Section(
        kind="compare", title=f"Comparison: {directory.path}", facts=_compare_facts(summary)
    )
    for result in summary.criteria:
        section.tables.append(_rates_table(result))
        section.plots.append(_rates_plot(result))
    _add_position_bias(section, summary)
    if summary.agreement:
        section.tables.append(_agreement_table(summary))
    if summary.unparsed:
        section.notes.append(
            f"{summary.unparsed} verdict(s) could not be parsed; they are counted apart and left "
            "out of every rate."
        )
    section.detail_tables.append(_verdict_examples(directory))
    section.browser = compare_browser(directory, browser_key)
    return section


def _verdict_examples(directory: CompareDir, per_question: int = 2, questions: int = 3) -> Table:
    rows: list[list[str]] = []
    seen: dict[str, int] = defaultdict(int)
    for verdict in directory.verdicts:
        if len(seen) >= questions and verdict.instance_id not in seen:
            continue
        if seen[verdict.instance_id] >= per_question:
            continue
        seen[verdict.instance_id] += 1
        picks = (
            "; ".join(f"{k}: {p.label} → {p.system}" for k, p in verdict.picks.items())
            if verdict.picks is not None
            else f"unparsed: {verdict.unparsed_reason or ''}"
        )
        rows.append(
            [
                verdict.instance_id,
                verdict.judge,
                " / ".join(verdict.ordering),
                picks,
                verdict.reason,
            ]
        )
    return Table(
        "Some verdicts, with the judge's reasons",
        ["question", "judge", "order shown (A, B, …)", "picks", "reason"],
        rows,
    )
