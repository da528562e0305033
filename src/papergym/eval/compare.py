"""``papergym compare``: multi-way comparisons of eval folders' answers by LLM judges.

For each question a judge sees the systems' answers labelled A, B, C… and picks the best
overall, on method and on experiments (or a tie). Judges prefer some positions whatever they
read, so every question is shown in a set of orderings in which each system holds each
position equally often: every permutation up to 3 systems, a Williams design (a balanced Latin
square) beyond. Position bias then cancels out of the win rates and can be measured on its own:
the share of decisive verdicts that went to position A, against the 1/n an unbiased judge gives.

What is reported: per system and criterion, win / tie / loss rates over the parsed verdicts,
with 95% intervals from a bootstrap over questions (a question's verdicts resampled together);
the position-bias rate; with several judges, Fleiss' κ over items (question × ordering) ×
judges, categories the systems and the tie. A verdict the judge's answer could not be parsed
for (after the LLM layer's repairs) is counted apart, never as a loss, and every rate says its
denominator.

The reference answer is not shown by default (``compare.reference``): eval's rubric reward
already measures closeness to the paper's own plan, and a judge given the paper's plan tends to
prefer the answer that resembles it; compare asks the complementary question, which plan is
better on its merits. With ``compare.reference=true`` the reference is shown as one possible
approach, not the bar.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from papergym.cliutil import (
    ApiKeyEnvOption,
    BaseUrlOption,
    CacheDirOption,
    DebugOption,
    JsonOption,
    LLMConfigOption,
    ModelOption,
    NoCacheOption,
    reports_errors,
    stderr,
    stdout,
)
from papergym.errors import BadInputError
from papergym.eval.compare_inputs import (
    check_same_data,
    compared_systems,
    load_questions,
    read_eval_folder,
)
from papergym.eval.compare_judge import (
    Judge,
    RunOutcome,
    Task,
    check_resumable,
    plan_tasks,
    resolve_judges,
    run_tasks,
)
from papergym.eval.compare_prompt import setup_id
from papergym.eval.compare_records import (
    CONFIG_FILE,
    SUMMARY_FILE,
    VERDICTS_FILE,
    CompareSummary,
    CompareVerdict,
)
from papergym.eval.compare_summary import summarise
from papergym.eval.log import RecordLog
from papergym.eval.orderings import orderings_of
from papergym.jsonl import write_text_atomic
from papergym.llm.cache import ResponseCache, default_cache_dir
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.report import usage_table
from papergym.llm.types import LLMError
from papergym.llm.usage import UsageTracker
from papergym.redact import redact
from papergym.settings.cli import ConfigOption, flags, llm_flags, paths_and_overrides, resolve
from papergym.settings.load import config_yaml
from papergym.settings.models import CompareSection, PaperGymConfig


def _clients(judges: Sequence[Judge], llm: LLMConfig) -> dict[str, LLMClient]:
    """A client per judge, sharing one cache and one usage tracker (and so one budget)."""
    cache = None
    if llm.cache:
        cache = ResponseCache((llm.cache_dir or default_cache_dir()) / "responses.sqlite")
    tracker = UsageTracker(
        prices=dict(llm.prices), budget_usd=llm.budget_usd, budget_tokens=llm.budget_tokens
    )
    return {j.name: LLMClient(j.config, cache=cache, tracker=tracker) for j in judges}


async def _judge_all(
    judges: Sequence[Judge],
    llm: LLMConfig,
    tasks: Sequence[Task],
    answers: dict[str, dict[str, str]],
    section: CompareSection,
    setup: str,
    log: RecordLog[CompareVerdict],
    on_start: Callable[[], None],
) -> tuple[RunOutcome, UsageTracker]:
    clients = _clients(judges, llm)
    tracker = next(iter(clients.values())).tracker
    progress = Progress(
        TextColumn("compare"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )
    try:
        for judge in judges:  # a dead endpoint is bad input before any question is asked
            try:
                await clients[judge.name].ping([judge.role])
            except LLMError as error:
                raise BadInputError(None, redact(f"judge {judge.name}: {error}")) from None
        on_start()
        with progress:
            bar = progress.add_task("", total=len(tasks))

            def done(verdict: CompareVerdict) -> None:
                log.append([verdict])
                progress.update(bar, advance=1)

            outcome = await run_tasks(clients, tasks, answers, section, setup, done)
    finally:
        for client in clients.values():
            await client.aclose()
    return outcome, tracker


def compare_config(
    config_file: Path | None,
    overrides: Sequence[str],
    judge: str | None,
    judges: str | None,
    llm_options: Sequence[Any],
) -> PaperGymConfig:
    """The command's configuration; --judge and --judges set compare.judges."""
    if judge is not None and judges is not None:
        raise BadInputError(None, "give --judge or --judges, not both")
    listed = [j.strip() for j in judges.split(",") if j.strip()] if judges is not None else None
    if listed is not None and not listed:
        raise BadInputError(None, "--judges is empty; give J1,J2,...")
    given = flags(
        judge=("compare.judges", "--judge", [judge] if judge is not None else None),
        judges=("compare.judges", "--judges", listed),
    )
    return resolve(config_file, overrides, [*given, *llm_options])


def _cell(estimate: Any) -> str:
    if estimate.value is None:
        return "–"
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def print_summary(summary: CompareSummary, json_output: bool) -> None:
    """A table per criterion, then position bias, unparsed counts and agreement."""
    if json_output:
        print(json.dumps(summary.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    for result in summary.criteria:
        table = Table(
            title=f"{result.criterion}: {result.parsed} parsed of {result.verdicts} verdicts "
            f"({result.unparsed} unparsed, counted apart)",
            title_justify="left",
        )
        for column in ("system", "win [95% CI]", "tie", "loss", "wins", "ties", "losses"):
            table.add_column(column, no_wrap=column != "system")
        for rates in result.systems:
            table.add_row(
                rates.system,
                _cell(rates.win),
                _cell(rates.tie),
                _cell(rates.loss),
                str(rates.wins),
                str(rates.ties),
                str(rates.losses),
            )
        stdout.print(table)
        bias = result.position_bias
        stdout.print(
            f"  position bias: answer shown first won {_cell(bias.first)} of "
            f"{bias.decisive} decisive verdicts (unbiased: {bias.expected:.3f})"
        )
    for kappa in summary.agreement:
        value = "–" if kappa.kappa is None else f"{kappa.kappa:.3f}"
        stdout.print(
            f"agreement ({kappa.criterion}): Fleiss' κ {value} over {kappa.items} items × "
            f"{kappa.judges} judges ({kappa.excluded} items excluded: a judge's verdict unparsed)"
        )
    stdout.print(
        f"{summary.questions} questions × {len(summary.orderings)} orderings ({summary.design}) "
        f"× {len(summary.judges)} judge(s) = {summary.verdicts} verdicts; {summary.unparsed} "
        "unparsed"
    )


def _exit_unfinished(failed: Sequence[str], planned: int, kept: int, log: Path) -> NoReturn:
    """Say how many verdicts failed at the endpoint and where the finished ones are; exit 1."""
    stderr.print(
        f"error: {len(failed)} of {planned} verdicts failed at the endpoint "
        f"(first: {failed[0]}); run the same command again to finish them "
        f"({kept} are kept in {log})",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(1)


def refuse_foreign_folder(out: Path) -> None:
    """``out`` must be new, empty, or a compare folder (its verdicts.jsonl, created first,
    says so): compare writes config.yaml and summary.json, and another command's folder (an
    eval folder among them) has its own."""
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "is a file; -o takes an output folder")
    if not out.is_dir() or not any(out.iterdir()) or (out / VERDICTS_FILE).is_file():
        return
    shown = ", ".join(sorted(p.name for p in out.iterdir())[:3])
    raise BadInputError(
        out,
        f"holds {shown} but no {VERDICTS_FILE}: not a `papergym compare` folder; use another -o",
    )


def _in_plan_order(
    tasks: Sequence[Task], setup: str, verdicts: Sequence[CompareVerdict]
) -> list[CompareVerdict]:
    """One verdict per task, in the plan's order; of a key recorded twice, the first."""
    keys = {t.key(setup) for t in tasks}
    unique = {v.key: v for v in reversed(verdicts) if v.key in keys}
    return [unique[t.key(setup)] for t in tasks]


EVAL_DIRS_HELP = (
    "Folders written by `papergym eval -o` (their systems are compared together; all must be "
    "evaluated on the same data), and config overrides (compare.reference=true)."
)


@reports_errors
def compare(
    arguments: Annotated[
        list[str],
        typer.Argument(
            help=EVAL_DIRS_HELP, metavar="EVAL_DIR... [KEY=VALUE]...", show_default=False
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Output folder: verdicts.jsonl, summary.json, config.yaml. Running the same "
            "command again skips the verdicts already there; another command's folder is "
            "refused.",
            show_default=False,
        ),
    ],
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="The judge: a role of the llm config (default: judge) or openai:MODEL@URL. "
            "Sets compare.judges.",
            show_default=False,
        ),
    ] = None,
    judges: Annotated[
        str | None,
        typer.Option(
            "--judges",
            help="Several judges, comma-separated (J1,J2): each asked every question in every "
            "order; their agreement is reported as Fleiss' κ. Sets compare.judges.",
            show_default=False,
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="The data the EVAL_DIRs were evaluated on, when it is no longer at the path "
            "their summary.json names (checked against their data_id).",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    llm_config: LLMConfigOption = None,
    base_url: BaseUrlOption = None,
    model: ModelOption = None,
    api_key_env: ApiKeyEnvOption = None,
    no_cache: NoCacheOption = False,
    cache_dir: CacheDirOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Compare the answers of several systems with an LLM judge: win, tie and loss rates with intervals.

    For each question the judge sees every system's answer, labelled A, B, C..., and picks the best overall, on method and on experiments (or a tie). Each question is shown in every order of the answers up to 3 systems, and in a balanced Latin square (Williams design) beyond, so each system holds each position equally often. Reported per system and criterion: win / tie / loss rates over the parsed verdicts with 95% intervals (bootstrap over questions); the position-bias rate (how often the answer shown first wins, against 1/n); with several judges, Fleiss' κ. A verdict the judge's answer could not be parsed for is counted apart, never as a loss. The reference answer is not shown unless compare.reference=true.

    Writes OUT/verdicts.jsonl (one per question × order × judge: the labels picked, the systems they map to, the reason), summary.json and config.yaml. Exit code 0 when done; 1 when some verdicts failed at the endpoint (run the same command again: finished verdicts are kept); 2 on bad input (EVAL_DIRs on different data, a broken answers file, no judge configured, an endpoint down), with nothing written.
    """
    paths, overrides = paths_and_overrides(arguments, "EVAL_DIR")
    refuse_foreign_folder(out)
    resolved = compare_config(
        config,
        overrides,
        judge,
        judges,
        llm_flags(llm_config, base_url, model, api_key_env, no_cache, cache_dir),
    )
    section = resolved.compare
    judge_list = resolve_judges(section.judges, resolved.llm)
    folders = [read_eval_folder(path, section.sample) for path in paths]
    check_same_data(folders)
    systems = compared_systems(folders)
    questions = load_questions(folders[0].summary, data)
    answers = {name: texts for f in folders for name, texts in f.answers.items()}
    kind, orderings = orderings_of(systems)
    setup = setup_id(section)
    tasks = plan_tasks(questions, orderings, judge_list)
    log: RecordLog[CompareVerdict] = RecordLog(out / VERDICTS_FILE, CompareVerdict)
    done = log.read()
    check_resumable(done, {t.key(setup) for t in tasks}, log.path)
    finished = {v.key for v in done}
    todo = [t for t in tasks if t.key(setup) not in finished]

    def start() -> None:  # once every check passed: bad input leaves nothing behind
        out.mkdir(parents=True, exist_ok=True)
        log.path.touch()  # first: it marks the folder as compare's (refuse_foreign_folder)
        write_text_atomic(out / CONFIG_FILE, config_yaml(resolved))

    outcome, tracker = asyncio.run(
        _judge_all(judge_list, resolved.llm, todo, answers, section, setup, log, start)
    )
    if outcome.failed:
        _exit_unfinished(outcome.failed, len(tasks), len(done) + len(outcome.verdicts), log.path)
    summary = summarise(
        _in_plan_order(tasks, setup, [*done, *outcome.verdicts]),
        folders=paths,
        data_id=folders[0].summary.data_id,
        systems=systems,
        judges=[j.name for j in judge_list],
        judge_models={j.name: j.model for j in judge_list},
        questions=[q.id for q in questions],
        kind=kind,
        orderings=orderings,
        section=section,
        usage=tracker.as_dict(),
    )
    write_text_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    print_summary(summary, json_output)
    if not json_output and tracker.rows:
        stdout.print(usage_table(tracker))
