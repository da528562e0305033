"""The report's section on one ``papergym eval`` folder: facts, score tables with intervals,
plots, per-criterion pass rates, and the questions the systems disagree on most."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from markupsafe import Markup

from papergym.eval import records as er
from papergym.eval.summary import alpha_text, unbacked_text
from papergym.report import plots
from papergym.report.browser import eval_browser
from papergym.report.costs import cost_table
from papergym.report.parts import (
    EvalDir,
    Example,
    ExampleAnswer,
    Section,
    Table,
    fmt_correlation,
    fmt_counts,
    fmt_estimate,
    fmt_value,
    point,
)

ANSWER_CHARS = 6000  # an example answer longer than this is cut in the page (marked so)


def _pearson(summary: er.SystemSummary) -> er.Correlation | None:
    return next((c for c in summary.length_reward if c.method == "pearson"), None)


def _rank_keys(systems: Sequence[er.SystemSummary]) -> list[str]:
    keys = {key for s in systems for key in s.by_rank}
    return sorted(keys, key=lambda k: (0, int(k)) if k.isdigit() else (1, k))


def _general_keys(systems: Sequence[er.SystemSummary]) -> list[str]:
    keys: list[str] = []
    for system in systems:
        keys.extend(k for k in system.general_criteria if k not in keys)
    return keys


def _by_system_table(
    title: str, systems: Sequence[er.SystemSummary], keys: list[str], pick: str, header: str
) -> Table:
    rows = []
    for key in keys:
        row = [key]
        for system in systems:
            estimates: dict[str, er.Estimate] = getattr(system, pick)
            row.append(fmt_estimate(estimates[key]) if key in estimates else "—")
        rows.append(row)
    return Table(title, [header, *(s.system.name for s in systems)], rows)


def _heatmap(title: str, systems: Sequence[er.SystemSummary], keys: list[str], pick: str) -> Markup:
    values: list[list[float | None]] = []
    tips: list[list[str]] = []
    for system in systems:
        estimates: dict[str, er.Estimate] = getattr(system, pick)
        values.append([estimates[k].value if k in estimates else None for k in keys])
        tips.append(
            [
                f"{system.system.name} · {k}: "
                + (fmt_estimate(estimates[k]) if k in estimates else "not measured")
                for k in keys
            ]
        )
    return Markup(
        plots.heatmap(title, [s.system.name for s in systems], keys, values, tooltips=tips)
    )


def _system_table(summary: er.EvalSummary) -> Table:
    rows = []
    for s in summary.systems:
        pearson = _pearson(s)
        rows.append(
            [
                s.system.name,
                f"{s.system.kind}: {s.system.model}",
                str(s.answers),
                str(s.scored),
                str(s.unscored) + (f" ({fmt_counts(s.unscored_reasons)})" if s.unscored else ""),
                fmt_estimate(s.reward),
                fmt_estimate(s.specific),
                fmt_estimate(s.general),
                fmt_estimate(s.by_dimension["method"]) if "method" in s.by_dimension else "—",
                fmt_estimate(s.by_dimension["experiment"])
                if "experiment" in s.by_dimension
                else "—",
                fmt_estimate(s.words, 0),
                fmt_correlation(pearson) if pearson else "—",
                unbacked_text(s),
            ]
        )
    return Table(
        "Systems",
        [
            "system",
            "model",
            "answers",
            "scored",
            "unscored",
            "reward",
            "specific",
            "general",
            "method",
            "experiment",
            "words",
            "r(length, reward)",
            "unbacked",
        ],
        rows,
        note=f"Values are means over questions with their {summary.level:.0%} bootstrap interval "
        f"({summary.resamples} resamples) and n, the questions behind them. Unscored answers "
        "are left out of the means, never counted as 0. Unbacked: the LLM judge's 'met' "
        "verdicts whose quote is not in the answer (turned to not met), of all its 'met' "
        "verdicts; '—' for a judge that quotes nothing.",
    )


def _pairs_table(summary: er.EvalSummary) -> Table:
    rows = [
        [f"{p.a} − {p.b}", fmt_estimate(p.reward), str(p.wins), str(p.ties), str(p.losses)]
        for p in summary.pairs
    ]
    return Table(
        "Paired differences in reward",
        ["pair", "mean difference", "wins", "ties", "losses"],
        rows,
        note="Over the questions both systems scored; the interval resamples questions.",
    )


def _verdict_table(score: er.EvalScore, texts: dict[str, str]) -> Table | None:
    """The judge's verdict on each criterion of one scored answer (None when there are none)."""
    if not score.verdicts:
        return None
    return Table(
        "",
        ["criterion", "text", "kind", "dimension", "rank", "verdict", "reason"],
        [
            [
                v.criterion_id,
                texts.get(v.criterion_id, ""),
                v.kind,
                v.dimension or "",
                "" if v.rank is None else str(v.rank),
                "unscored" if v.passed is None else ("pass" if v.passed else "fail"),
                v.reason,
            ]
            for v in score.verdicts
        ],
    )


def _score_text(score: er.EvalScore | None) -> str:
    if score is None:
        return "not scored"
    if score.value is None:
        return f"unscored: {score.unscored_reason or 'no reason recorded'}"
    return (
        f"reward {fmt_value(score.value)} (specific {fmt_value(score.specific)}, "
        f"general {fmt_value(score.general)})"
    )


def _example_answer(
    name: str, answer: er.EvalAnswer | None, score: er.EvalScore | None, texts: dict[str, str]
) -> ExampleAnswer:
    text = answer.answer if answer else "(answer not recorded)"
    return ExampleAnswer(
        system=name,
        answer=text[:ANSWER_CHARS],
        cut=len(text) > ANSWER_CHARS,
        words=answer.words if answer else 0,
        score=_score_text(score),
        verdicts=_verdict_table(score, texts) if score is not None else None,
    )


def _examples(directory: EvalDir, count: int) -> list[Example]:
    """The questions the systems disagree on most (largest spread of reward), sample 0."""
    systems = [s.system.name for s in directory.summary.systems]
    answers = {(a.system, a.instance_id): a for a in directory.answers if a.sample == 0}
    scores = {(s.system, s.instance_id): s for s in directory.scores if s.sample == 0}
    ids = sorted({s.instance_id for s in directory.scores if s.sample == 0})

    def spread(instance_id: str) -> float:
        values = [
            score.value
            for name in systems
            if (score := scores.get((name, instance_id))) is not None and score.value is not None
        ]
        return max(values) - min(values) if values else -1.0

    examples = []
    for instance_id in sorted(ids, key=lambda i: (-spread(i), i))[:count]:
        asked = directory.questions.get(instance_id)
        texts = asked.criteria if asked else {}
        shown = [
            _example_answer(
                name, answers.get((name, instance_id)), scores.get((name, instance_id)), texts
            )
            for name in systems
        ]
        examples.append(Example(instance_id, shown, asked.question if asked else ""))
    return examples


def _eval_facts(summary: er.EvalSummary) -> list[tuple[str, str]]:
    return [
        ("judge", summary.judge),
        ("data", f"{summary.data} ({summary.data_format}, split {summary.split})"),
        ("data id", summary.data_id),
        ("questions", str(summary.questions)),
        ("samples per question", str(summary.samples)),
        ("generation", f"temperature {summary.temperature:g}, max tokens {summary.max_tokens}"),
        ("reward", alpha_text(summary)),
        (
            "intervals",
            f"{summary.level:.0%} bootstrap, {summary.resamples} resamples, seed {summary.seed}",
        ),
        ("written by", f"papergym {summary.version}"),
    ]


def _score_plots(summary: er.EvalSummary) -> list[Markup]:
    """Scores by system, and the paired differences when there are pairs."""
    categories = ["reward", "specific", "general", "method", "experiment"]
    series = [
        plots.Series(
            s.system.name,
            [
                point(s.reward),
                point(s.specific),
                point(s.general),
                point(s.by_dimension.get("method", er.Estimate(value=None, n=0))),
                point(s.by_dimension.get("experiment", er.Estimate(value=None, n=0))),
            ],
        )
        for s in summary.systems
    ]
    shown = [Markup(plots.bar_chart("Scores by system (95% intervals)", categories, series))]
    if summary.pairs:
        rows = [(f"{p.a} − {p.b}", point(p.reward)) for p in summary.pairs]
        shown.append(
            Markup(plots.forest_plot("Paired reward differences", rows, x_label="difference"))
        )
    return shown


def _add_criteria(section: Section, systems: Sequence[er.SystemSummary]) -> None:
    """Pass rates of the general criteria and of the specific ones by rank: a heatmap each,
    with its table among the details."""
    shown = (
        (
            "Pass rate of each general criterion",
            "General criteria: pass rate",
            _general_keys(systems),
            "general_criteria",
            "criterion",
        ),
        (
            "Pass rate of specific criteria by rank",
            "Specific criteria by rank: pass rate",
            _rank_keys(systems),
            "by_rank",
            "rank",
        ),
    )
    for plot_title, table_title, keys, pick, header in shown:
        if keys:
            section.plots.append(_heatmap(plot_title, systems, keys, pick))
            section.detail_tables.append(_by_system_table(table_title, systems, keys, pick, header))


def _length_plots(directory: EvalDir) -> list[Markup]:
    """Answer length by system, and reward against length with each system's Pearson r."""
    systems = directory.summary.systems
    names = [s.system.name for s in systems]
    words: dict[str, list[float]] = defaultdict(list)
    points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for score in directory.scores:
        words[score.system].append(float(score.words))
        if score.value is not None:
            points[score.system].append((float(score.words), score.value))
    legend = []
    for s in systems:
        pearson = _pearson(s)
        legend.append(f"{s.system.name}: r = {fmt_correlation(pearson) if pearson else 'n/a'}")
    return [
        Markup(
            plots.box_plot("Answer length", [(n, words.get(n, [])) for n in names], x_label="words")
        ),
        Markup(
            plots.scatter(
                "Reward against answer length",
                [(n, points.get(n, [])) for n in names],
                x_label="words",
                y_label="reward",
                legend=legend,
            )
        ),
    ]


def eval_section(directory: EvalDir, examples: int, browser_key: str = "0") -> Section:
    """The section on one eval folder; ``browser_key`` tells its sample browser's data apart
    from the other sections' on the page."""
    summary = directory.summary
    section = Section(
        kind="eval", title=f"Evaluation: {directory.path}", facts=_eval_facts(summary)
    )
    section.tables.append(_system_table(summary))
    if summary.pairs:
        section.tables.append(_pairs_table(summary))
    section.tables.append(cost_table(directory))
    section.plots.extend(_score_plots(summary))
    _add_criteria(section, summary.systems)
    section.plots.extend(_length_plots(directory))
    unscored = sum(s.unscored for s in summary.systems)
    if unscored:
        section.notes.append(
            f"{unscored} answer(s) could not be scored by the judge; they are counted in the "
            "'unscored' column and left out of every mean."
        )
    section.examples = _examples(directory, examples)
    section.browser = eval_browser(directory, browser_key)
    return section
