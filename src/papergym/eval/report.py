"""``papergym report``: one self-contained HTML page (and the same tables in Markdown) from
``papergym eval`` and ``papergym compare`` folders.

The page opens with no network: plots are inline SVG from :mod:`papergym.eval.plots`, the style
is inline, and there is no script at all. Answers, reasons and names are untrusted text: the
template escapes everything (Jinja2 autoescape), and a Content-Security-Policy forbids scripts
and every external load, so a ``<script>`` inside an answer is shown as text and could not run
even if an escape were missed.

Every input folder is read and checked before anything is written, so bad input leaves no file.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Annotated, TypeVar

import jinja2
import typer
from markupsafe import Markup
from pydantic import BaseModel, ValidationError

from papergym import __version__
from papergym.cliutil import DebugOption, JsonOption, reports_errors, stdout
from papergym.errors import BadInputError
from papergym.eval import compare_records as cr
from papergym.eval import plots
from papergym.eval import records as er
from papergym.jsonl import read_jsonl, write_text_atomic

M = TypeVar("M", bound=BaseModel)

DEFAULT_EXAMPLES = 3
ANSWER_CHARS = 6000  # an example answer longer than this is cut in the page (marked so)


@dataclass(frozen=True)
class EvalDir:
    path: Path
    summary: er.EvalSummary
    answers: list[er.EvalAnswer]
    scores: list[er.EvalScore]
    questions: dict[str, er.EvalQuestion] = field(default_factory=dict)


@dataclass(frozen=True)
class CompareDir:
    path: Path
    summary: cr.CompareSummary
    verdicts: list[cr.CompareVerdict]


ReportInput = EvalDir | CompareDir


@dataclass
class Table:
    """A table shown the same way in the page and in the Markdown: cells are plain text."""

    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Example:
    """One question with each system's answer and the judge's verdicts."""

    instance_id: str
    systems: list[ExampleAnswer]
    question: str = ""


@dataclass
class ExampleAnswer:
    system: str
    answer: str
    cut: bool
    words: int
    score: str
    verdicts: Table | None


@dataclass
class Section:
    """One input folder's part of the report."""

    kind: str  # "eval" or "compare"
    title: str
    facts: list[tuple[str, str]]
    tables: list[Table] = field(default_factory=list)
    plots: list[Markup] = field(default_factory=list)
    detail_tables: list[Table] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------- input


def _read_summary(path: Path, model: type[M]) -> M:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise BadInputError(path, "not UTF-8 text") from None
    except OSError as error:
        raise BadInputError(path, f"cannot be read: {error.strerror or error}") from None
    try:
        return model.model_validate_json(text)
    except ValidationError as error:
        first = str(error).splitlines()[0]
        raise BadInputError(path, f"not a valid {model.__name__}: {first}") from None


def load_input(path: Path) -> ReportInput:
    """Read an EVAL_DIR or a CMP_DIR; anything else is a one-line :class:`BadInputError`."""
    if not path.exists():
        raise BadInputError(path, "no such folder")
    if not path.is_dir():
        raise BadInputError(
            path, "not a folder: give a `papergym eval` or `papergym compare` folder"
        )
    has_summary = (path / er.SUMMARY_FILE).is_file()
    if has_summary and (path / cr.VERDICTS_FILE).is_file():
        return CompareDir(
            path=path,
            summary=_read_summary(path / cr.SUMMARY_FILE, cr.CompareSummary),
            verdicts=read_jsonl(path / cr.VERDICTS_FILE, cr.CompareVerdict),
        )
    if has_summary and (path / er.SCORES_FILE).is_file():
        answers_path = path / er.ANSWERS_FILE
        questions_path = path / er.QUESTIONS_FILE  # absent in folders from before it existed
        questions = (
            {q.instance_id: q for q in read_jsonl(questions_path, er.EvalQuestion)}
            if questions_path.is_file()
            else {}
        )
        return EvalDir(
            path=path,
            summary=_read_summary(path / er.SUMMARY_FILE, er.EvalSummary),
            answers=read_jsonl(answers_path, er.EvalAnswer) if answers_path.is_file() else [],
            scores=read_jsonl(path / er.SCORES_FILE, er.EvalScore),
            questions=questions,
        )
    raise BadInputError(
        path,
        f"neither an eval folder ({er.SUMMARY_FILE} and {er.SCORES_FILE} from `papergym eval`) "
        f"nor a compare folder ({cr.SUMMARY_FILE} and {cr.VERDICTS_FILE} from `papergym compare`)",
    )


# ------------------------------------------------------------------------------------ formatting


def fmt_value(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def fmt_estimate(estimate: er.Estimate, digits: int = 3) -> str:
    """``0.612 [0.550, 0.671] n=40``: the value, its interval and its denominator."""
    if estimate.value is None:
        return f"n/a (n={estimate.n})"
    text = fmt_value(estimate.value, digits)
    if estimate.low is not None and estimate.high is not None:
        text += f" [{fmt_value(estimate.low, digits)}, {fmt_value(estimate.high, digits)}]"
    return f"{text} n={estimate.n}"


def fmt_correlation(correlation: er.Correlation) -> str:
    text = fmt_value(correlation.r, 2)
    if correlation.low is not None and correlation.high is not None:
        text += f" [{fmt_value(correlation.low, 2)}, {fmt_value(correlation.high, 2)}]"
    return f"{text} n={correlation.n}"


def fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason}: {count}" for reason, count in sorted(counts.items()))


def _point(estimate: er.Estimate) -> plots.Point:
    return plots.Point(estimate.value, estimate.low, estimate.high)


def _pearson(summary: er.SystemSummary) -> er.Correlation | None:
    return next((c for c in summary.length_reward if c.method == "pearson"), None)


# ----------------------------------------------------------------------------------------- eval


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
        ],
        rows,
        note=f"Values are means over questions with their {summary.level:.0%} bootstrap interval "
        f"({summary.resamples} resamples) and n, the questions behind them. Unscored answers "
        "are left out of the means, never counted as 0.",
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

    chosen = sorted(ids, key=lambda i: (-spread(i), i))[:count]
    examples = []
    for instance_id in chosen:
        asked = directory.questions.get(instance_id)
        texts = asked.criteria if asked else {}
        shown = []
        for name in systems:
            answer = answers.get((name, instance_id))
            score = scores.get((name, instance_id))
            text = answer.answer if answer else "(answer not recorded)"
            verdicts = None
            if score is not None and score.verdicts:
                verdicts = Table(
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
            score_text = "not scored"
            if score is not None:
                score_text = (
                    f"reward {fmt_value(score.value)} (specific {fmt_value(score.specific)}, "
                    f"general {fmt_value(score.general)})"
                    if score.value is not None
                    else f"unscored: {score.unscored_reason or 'no reason recorded'}"
                )
            shown.append(
                ExampleAnswer(
                    system=name,
                    answer=text[:ANSWER_CHARS],
                    cut=len(text) > ANSWER_CHARS,
                    words=answer.words if answer else 0,
                    score=score_text,
                    verdicts=verdicts,
                )
            )
        examples.append(Example(instance_id, shown, asked.question if asked else ""))
    return examples


def eval_section(directory: EvalDir, examples: int) -> Section:
    summary = directory.summary
    systems = summary.systems
    names = [s.system.name for s in systems]
    section = Section(
        kind="eval",
        title=f"Evaluation: {directory.path}",
        facts=[
            ("judge", summary.judge),
            ("data", f"{summary.data} ({summary.data_format}, split {summary.split})"),
            ("data id", summary.data_id),
            ("questions", str(summary.questions)),
            ("samples per question", str(summary.samples)),
            ("generation", f"temperature {summary.temperature:g}, max tokens {summary.max_tokens}"),
            ("reward", f"α = {summary.alpha:g}"),
            (
                "intervals",
                f"{summary.level:.0%} bootstrap, {summary.resamples} resamples, seed {summary.seed}",
            ),
            ("written by", f"papergym {summary.version}"),
        ],
    )
    section.tables.append(_system_table(summary))
    if summary.pairs:
        section.tables.append(_pairs_table(summary))
    categories = ["reward", "specific", "general", "method", "experiment"]
    series = [
        plots.Series(
            s.system.name,
            [
                _point(s.reward),
                _point(s.specific),
                _point(s.general),
                _point(s.by_dimension.get("method", er.Estimate(value=None, n=0))),
                _point(s.by_dimension.get("experiment", er.Estimate(value=None, n=0))),
            ],
        )
        for s in systems
    ]
    section.plots.append(
        Markup(plots.bar_chart("Scores by system (95% intervals)", categories, series))
    )
    if summary.pairs:
        rows = [(f"{p.a} − {p.b}", _point(p.reward)) for p in summary.pairs]
        section.plots.append(
            Markup(plots.forest_plot("Paired reward differences", rows, x_label="difference"))
        )
    general = _general_keys(systems)
    if general:
        section.plots.append(
            _heatmap("Pass rate of each general criterion", systems, general, "general_criteria")
        )
        section.detail_tables.append(
            _by_system_table(
                "General criteria: pass rate", systems, general, "general_criteria", "criterion"
            )
        )
    ranks = _rank_keys(systems)
    if ranks:
        section.plots.append(
            _heatmap("Pass rate of specific criteria by rank", systems, ranks, "by_rank")
        )
        section.detail_tables.append(
            _by_system_table(
                "Specific criteria by rank: pass rate", systems, ranks, "by_rank", "rank"
            )
        )
    words: dict[str, list[float]] = defaultdict(list)
    points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for score in directory.scores:
        words[score.system].append(float(score.words))
        if score.value is not None:
            points[score.system].append((float(score.words), score.value))
    section.plots.append(
        Markup(
            plots.box_plot("Answer length", [(n, words.get(n, [])) for n in names], x_label="words")
        )
    )
    legend = []
    for s in systems:
        pearson = _pearson(s)
        legend.append(f"{s.system.name}: r = {fmt_correlation(pearson) if pearson else 'n/a'}")
    section.plots.append(
        Markup(
            plots.scatter(
                "Reward against answer length",
                [(n, points.get(n, [])) for n in names],
                x_label="words",
                y_label="reward",
                legend=legend,
            )
        )
    )
    unscored = sum(s.unscored for s in systems)
    if unscored:
        section.notes.append(
            f"{unscored} answer(s) could not be scored by the judge; they are counted in the "
            "'unscored' column and left out of every mean."
        )
    section.examples = _examples(directory, examples)
    return section


# -------------------------------------------------------------------------------------- compare


def _judge_label(summary: cr.CompareSummary, judge: str) -> str:
    model = summary.judge_models.get(judge)
    return f"{judge} ({model})" if model and model != judge else judge


def compare_section(directory: CompareDir) -> Section:
    summary = directory.summary
    section = Section(
        kind="compare",
        title=f"Comparison: {directory.path}",
        facts=[
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
        ],
    )
    for result in summary.criteria:
        section.tables.append(
            Table(
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
        )
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
        section.plots.append(
            Markup(plots.stacked_bars(f"Win / tie / loss: {result.criterion}", rows))
        )
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
            bias_points.append((f"{result.criterion} · {judge}", _point(bias.first)))
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
    if summary.agreement:
        section.tables.append(
            Table(
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
        )
    if summary.unparsed:
        section.notes.append(
            f"{summary.unparsed} verdict(s) could not be parsed; they are counted apart and left "
            "out of every rate."
        )
    section.detail_tables.append(_verdict_examples(directory))
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


# ------------------------------------------------------------------------------------- rendering


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )


def render_html(sections: Sequence[Section], inputs: Sequence[Path]) -> str:
    template_text = (
        resources.files("papergym.eval")
        .joinpath("templates/report.html")
        .read_text(encoding="utf-8")
    )
    template = _environment().from_string(template_text)
    return template.render(
        sections=sections,
        inputs=[str(p) for p in inputs],
        version=__version__,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def md_cell(text: str) -> str:
    """A Markdown table cell: HTML escaped (renderers pass raw HTML through), pipes escaped,
    one line."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(text.replace("|", "\\|").split())


def md_table(table: Table) -> str:
    lines = []
    if table.title:
        lines.append(f"### {md_cell(table.title)}\n")
    lines.append("| " + " | ".join(md_cell(h) for h in table.headers) + " |")
    lines.append("|" + "---|" * len(table.headers))
    lines.extend("| " + " | ".join(md_cell(c) for c in row) + " |" for row in table.rows)
    if table.note:
        lines.append(f"\n{md_cell(table.note)}")
    return "\n".join(lines) + "\n"


def render_markdown(sections: Sequence[Section]) -> str:
    parts = [
        "# PaperGym evaluation report\n",
        f"Written by papergym {__version__}; the plots are in the HTML page.\n",
    ]
    for section in sections:
        parts.append(f"## {md_cell(section.title)}\n")
        parts.append(md_table(Table("", ["", ""], [[k, v] for k, v in section.facts])))
        parts.extend(f"{md_cell(note)}\n" for note in section.notes)
        parts.extend(md_table(t) for t in [*section.tables, *section.detail_tables])
    return "\n".join(parts)


@dataclass(frozen=True)
class ReportResult:
    html: Path
    markdown: Path
    sections: int


def write_report(
    inputs: Sequence[Path], out: Path, examples: int = DEFAULT_EXAMPLES
) -> ReportResult:
    """Read every input, then write ``out`` (HTML) and ``out`` with suffix ``.md``."""
    if not inputs:
        raise BadInputError(None, "give at least one eval or compare folder")
    if out.suffix.lower() not in (".html", ".htm"):
        raise BadInputError(
            out, "the report's name must end in .html (report.md is written beside it)"
        )
    if out.is_dir():
        raise BadInputError(out, "is a folder; give the report's file name, e.g. report.html")
    loaded = [load_input(path) for path in inputs]
    sections = [
        eval_section(item, examples) if isinstance(item, EvalDir) else compare_section(item)
        for item in loaded
    ]
    html = render_html(sections, inputs)
    markdown = render_markdown(sections)
    markdown_path = out.with_suffix(".md")
    write_text_atomic(out, html)
    write_text_atomic(markdown_path, markdown)
    return ReportResult(out, markdown_path, len(sections))


# ------------------------------------------------------------------------------------- command


@reports_errors
def report(
    inputs: Annotated[
        list[Path],
        typer.Argument(
            help="Folders written by `papergym eval` (EVAL_DIR) or `papergym compare` "
            "(CMP_DIR), in the order the report shows them.",
            metavar="DIR...",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="The HTML page to write; the same tables in Markdown go beside it (report.md).",
        ),
    ] = Path("report.html"),
    examples: Annotated[
        int,
        typer.Option(
            "--examples",
            min=0,
            help="Questions shown with each system's answer and the judge's verdicts and "
            "reasons, per eval folder (those the systems disagree on most).",
        ),
    ] = DEFAULT_EXAMPLES,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Write a self-contained HTML report (plots, tables with intervals, example answers) and report.md.

    The page opens with no network (inline SVG plots and style, no script). Each folder must be an eval or a compare folder; anything else is one line naming it, exit code 2, and nothing is written.
    """
    result = write_report(inputs, out, examples)
    if json_output:
        payload = {
            "html": str(result.html),
            "markdown": str(result.markdown),
            "sections": result.sections,
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        stdout.print(f"wrote {result.html} and {result.markdown} ({result.sections} section(s))")
