"""``papergym eval``: answers from each SYSTEM on a build's questions, scored by the rubric
reward, summarised with bootstrap intervals (the work is :func:`papergym.eval.run.run_eval`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    exit_unfinished,
    numbers_table,
    reports_errors,
    resolve,
    stdout,
)
from papergym.cli.flags import Given, config_flags, llm_options
from papergym.cli.groups import single_app
from papergym.eval.data import load_eval_data
from papergym.eval.records import (
    ANSWERS_FILE,
    CONFIG_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    Estimate,
    EvalSummary,
)
from papergym.eval.run import refuse_foreign_folder, run_eval
from papergym.eval.summary import alpha_text, unbacked_text
from papergym.eval.systems import ResolvedSystem, resolve_systems
from papergym.export.datesplit import date_rule
from papergym.llm.report import usage_table
from papergym.llm.usage import UsageTracker
from papergym.settings.load import config_yaml, is_override
from papergym.settings.models import PaperGymConfig

app = single_app()

SystemsArgument = Annotated[
    list[str],
    typer.Argument(
        metavar="SYSTEM... [KEY=VALUE]...",
        help="SYSTEM... (NAME=SPEC or SPEC: a run folder, a model folder, or "
        "openai:MODEL@URL), then optional key=value config overrides.",
        show_default=False,
    ),
]
DataOption = Annotated[
    Path,
    typer.Option(
        "--data",
        help="The questions: a `papergym build` folder, an instances.jsonl, or a rubric "
        "dataset `papergym audit` reads (ResearchPlanGen, ResearchQA, RubricHub, generic "
        "{question, criteria}; weights kept).",
        show_default=False,
    ),
]
OutOption = Annotated[
    Path,
    typer.Option(
        "-o",
        "--out",
        help="The eval folder (created once the checks pass): new, empty, or an earlier "
        "eval's to resume it; another command's folder is refused.",
        show_default=False,
    ),
]
JudgeBaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        help="The LLM judge's OpenAI-compatible endpoint (sets llm.default.base_url; the "
        "systems keep their own). Credentials in it are sent as HTTP Basic auth and masked.",
        show_default=False,
    ),
]
JudgeModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="The LLM judge's model (sets llm.default.model).",
        show_default=False,
    ),
]

EVAL_EPILOG = """SYSTEM: NAME=SPEC or SPEC (a NAME with a dot, or one that is a top-level config key such as seed, is read as a config override). SPEC is a training run folder (its final/ model, or its last stage's), a local model folder (run in-process by the hf backend), or an OpenAI-compatible endpoint openai:MODEL@http://HOST:PORT/v1 (API key: llm.default.api_key_env).

Writes EVAL_DIR/answers.jsonl (one per system, question, sample), scores.jsonl (per-criterion verdicts and the judge's reasons), summary.json (per system: mean reward with a bootstrap interval over questions, specific score by dimension, pass rate of each general criterion and by criterion rank, answer length and its correlation with the reward, unscored counts; paired differences between systems) and config.yaml. Interrupted? Run the same command again: finished answers and verdicts are kept (an answer whose judge never answered, its endpoint down, is judged again).

Examples:
  papergym eval base=Qwen/Qwen3-8B-local runs/8b --data env -o eval/ data.test_fraction=0.2
  papergym eval vllm=openai:Qwen/Qwen3-8B@http://localhost:8000/v1 --data researchqa.jsonl --split all -o eval-rqa/
  papergym eval vllm=openai:Qwen/Qwen3-8B@http://localhost:8000/v1 --data researchqa.jsonl --scoring benchmark -o eval-rqa-native/

--scoring benchmark scores a foreign dataset its own way (ResearchQA: rubric coverage; RubricHub/HealthBench: points over positive points, clipped to [0, 1]; ResearchPlanGen: share of criteria met), without our general criteria or the α mix; summary.json and the table state the rule and what differs from the published protocol."""


def split_systems(arguments: list[str]) -> tuple[list[str], list[str]]:
    """(systems, overrides): ``NAME=SPEC`` is a system unless NAME is dotted (``eval.samples=4``)
    or a top-level config key (``seed=1``)."""
    systems: list[str] = []
    overrides: list[str] = []
    for argument in arguments:
        key = argument.partition("=")[0]
        override = is_override(argument) and ("." in key or key in PaperGymConfig.model_fields)
        (overrides if override else systems).append(argument)
    return systems, overrides


@app.command("eval", epilog=EVAL_EPILOG)
@reports_errors
@config_flags(
    split="eval.split",
    samples=("eval.samples", "-n", "--samples"),
    judge="reward.judge",
    scoring="eval.scoring",
)
@llm_options(base_url=JudgeBaseUrlOption, model=JudgeModelOption)
def eval_command(
    arguments: SystemsArgument,
    data: DataOption,
    out: OutOption,
    config: ConfigOption = None,
    llm: Given = (),
    json_output: JsonOption = False,
    debug: DebugOption = False,
    given: Given = (),
) -> None:
    """Evaluate systems on a build's questions: answers, rubric scores, intervals, differences.

    Each SYSTEM answers every question (eval.samples times, eval.temperature) with the prompt
    training used (data.system_prompt, then the question); the rubric reward scores every
    answer (the LLM judge when one is configured, else the offline judge). A SYSTEM that does
    not load, an endpoint that is down, an unknown split or unreadable data is one line and
    exit 2, with nothing written. Endpoint failures during the run leave those answers to the
    next run (exit 1).
    """
    specs, overrides = split_systems(arguments)
    settings = resolve(config, overrides, [*given, *llm])
    refuse_foreign_folder(out)  # before the data is read: a foreign folder is named first
    loaded = load_eval_data(
        data,
        settings.eval.split,
        settings.data.test_fraction,
        settings.eval.limit,
        date_rule(settings.data.split_by, settings.data.test_after, settings.data.undated),
        general=settings.eval.scoring == "papergym",
    )
    result = run_eval(
        loaded,
        _systems(specs, settings),
        out,
        section=settings.eval,
        reward=settings.reward,
        llm=settings.llm,
        config_yaml=config_yaml(settings),
        data_label=str(data),
    )
    if result.summary is None:
        exit_unfinished(
            result.failures,
            "answer(s) could not be generated; finished answers and verdicts are kept: run the "
            "same command again",
        )
    judged = [result.judge_usage] if result.judge_usage else []  # beside the systems' calls
    usage = UsageTracker.merged(result.usage, *judged)
    if json_output:  # the summary.json written, and the calls and tokens spent
        print(
            json.dumps(
                {**result.summary.model_dump(mode="json"), "usage": usage.as_dict()}, indent=2
            )
        )
        return
    print_eval_summary(result.summary, usage)
    stdout.print(f"wrote {out}/{{{ANSWERS_FILE}, {SCORES_FILE}, {SUMMARY_FILE}, {CONFIG_FILE}}}")


def _systems(specs: list[str], settings: PaperGymConfig) -> list[ResolvedSystem]:
    """The SYSTEMs given, with the eval's concurrency, the default endpoint's key variable and
    the training prompt (data.system_prompt) where a run folder does not name its own."""
    default = settings.llm.default
    return resolve_systems(
        specs,
        api_key_env=default.api_key_env if default else None,
        concurrency=settings.eval.max_concurrency,
        default_prompt=settings.data.system_prompt,
    )


def _fmt(estimate: Estimate) -> str:
    if estimate.value is None:
        return "-"
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


_COLUMNS = (
    "system",
    "reward",
    "method",
    "experiment",
    "words",
    "len~reward r",
    "scored",
    "unscored",
    "unbacked",
)


def _rule_text(summary: EvalSummary) -> str:
    """The α for the rubric reward; the benchmark's rule when it scored the answers."""
    return alpha_text(summary) if summary.scoring == "papergym" else f"scoring {summary.scoring}"


def _systems_table(summary: EvalSummary) -> Table:
    table = numbers_table(
        f"Eval: {summary.questions} questions ({summary.split}) × {summary.samples} "
        f"sample(s), judge {summary.judge}, {_rule_text(summary)}, "
        f"{int(summary.level * 100)}% intervals",
        _COLUMNS,
    )
    for s in summary.systems:
        r = s.length_reward[0]
        table.add_row(
            s.system.name,
            _fmt(s.reward),
            _fmt(s.by_dimension["method"]),
            _fmt(s.by_dimension["experiment"]),
            "-" if s.words.value is None else f"{s.words.value:.0f}",
            "-" if r.r is None else f"{r.r:+.2f}",
            str(s.scored),
            str(s.unscored),
            unbacked_text(s),
        )
    return table


def _pairs_table(summary: EvalSummary) -> Table:
    pairs = Table(title="Paired differences (a − b, questions both scored)", title_justify="left")
    for column in ("a", "b", "difference", "questions", "wins/ties/losses"):
        pairs.add_column(column)
    for p in summary.pairs:
        pairs.add_row(p.a, p.b, _fmt(p.reward), str(p.reward.n), f"{p.wins}/{p.ties}/{p.losses}")
    return pairs


def print_eval_summary(summary: EvalSummary, tracker: UsageTracker) -> None:
    """The systems' table, the paired differences and the LLM calls (also ``papergym train``'s
    final eval)."""
    stdout.print(_systems_table(summary))
    if summary.scoring_definition is not None:
        stdout.print(f"reward column: {summary.scoring_definition}", highlight=False)
        for difference in summary.protocol_differences:
            stdout.print(f"  differs from the published protocol: {difference}", highlight=False)
    if summary.pairs:
        stdout.print(_pairs_table(summary))
    if tracker.rows:
        stdout.print(usage_table(tracker))
