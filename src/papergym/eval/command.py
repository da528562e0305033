"""``papergym eval``: answers from each SYSTEM on a build's questions, scored by the rubric
reward, summarised with bootstrap intervals."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from papergym import __version__
from papergym.cliutil import (
    ApiKeyEnvOption,
    CacheDirOption,
    DebugOption,
    JsonOption,
    LLMConfigOption,
    NoCacheOption,
    exit_unfinished,
    reports_errors,
    stdout,
)
from papergym.errors import BadInputError
from papergym.eval.data import EvalData, load_eval_data
from papergym.eval.evaluate import (
    Key,
    eval_question,
    eval_reward,
    generate,
    judge_tracker,
    score_answers,
    system_client,
)
from papergym.eval.log import RecordLog
from papergym.eval.records import (
    ANSWERS_FILE,
    CONFIG_FILE,
    QUESTIONS_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    Estimate,
    EvalAnswer,
    EvalScore,
    EvalSummary,
)
from papergym.eval.summary import Bootstrap, alpha_text, alphas_used, summarise
from papergym.eval.systems import ResolvedSystem, resolve_systems
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.identity import identity_text
from papergym.llm.report import usage_table
from papergym.llm.types import LLMError, SamplingParams
from papergym.llm.usage import UsageTracker
from papergym.redact import redact
from papergym.reward.command import JudgeOption
from papergym.reward.reward import RubricReward, judge_never_answered
from papergym.settings.cli import ConfigOption, flags, llm_flags, resolve
from papergym.settings.load import Override, config_yaml, is_override
from papergym.settings.models import PaperGymConfig

PLAN_FILE = "plan.json"
"""What the answers and scores in a folder depend on; a re-run resumes only when it matches."""

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
  papergym eval vllm=openai:Qwen/Qwen3-8B@http://localhost:8000/v1 --data researchqa.jsonl --split all -o eval-rqa/"""


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


def eval_config(
    config_file: Path | None,
    overrides: list[str],
    split: str | None,
    samples: int | None,
    judge: str | None,
    llm_options: Sequence[Override] = (),
) -> PaperGymConfig:
    given = flags(
        split=("eval.split", "--split", split),
        samples=("eval.samples", "-n", samples),
        judge=("reward.judge", "--judge", judge),
    )
    return resolve(config_file, overrides, [*given, *llm_options])


def eval_plan(
    settings: PaperGymConfig,
    data: EvalData,
    systems: list[ResolvedSystem],
    judge: str,
    *,
    judge_backend: str | None = None,
) -> dict[str, Any]:
    """What a folder's answers and verdicts depend on. A system is recorded by where it is
    served (an endpoint's normalised URL, a local model's weights), not its model name alone:
    one name behind another server, or new weights in the same folder, is another system, and
    resuming would mix its answers with the old ones. ``judge_backend`` is the LLM judge's, in
    the same form (None for the offline judge)."""
    e = settings.eval
    return {
        "data_id": data.data_id,
        "samples": e.samples,
        "temperature": e.temperature,
        "top_p": e.top_p,
        "max_tokens": e.max_tokens,
        "judge": judge,
        "judge_backend": judge_backend,
        "alpha": settings.reward.alpha,
        "normalisation": settings.reward.normalisation,
        "systems": {s.record.name: identity_text(s.backend) for s in systems},
    }


def judge_backend(reward: RubricReward) -> str | None:
    """Where the reward's LLM judge is served (:func:`identity_text`); None without one."""
    llm = getattr(reward.judge, "llm", None)
    role = getattr(reward.judge, "role", None)
    if not isinstance(llm, LLMClient) or role is None:
        return None
    return identity_text(llm.config.for_role(role))


def refuse_foreign_folder(out: Path) -> None:
    """``out`` must be new, empty, or an eval folder (its plan.json, written first, says so):
    eval writes config.yaml and summary.json, and another command's folder has its own."""
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "exists and is not a folder")
    if not out.is_dir() or not any(out.iterdir()):
        return
    plan = out / PLAN_FILE
    try:
        recorded = json.loads(plan.read_text(encoding="utf-8")) if plan.is_file() else None
    except (ValueError, OSError):
        recorded = None
    if not isinstance(recorded, dict) or "data_id" not in recorded:
        shown = ", ".join(sorted(p.name for p in out.iterdir())[:3])
        raise BadInputError(
            out,
            f"holds {shown} but no eval plan.json: not a `papergym eval` folder; use another -o",
        )


def check_plan(out: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """The plan to save: an earlier one merged with this one, or bad input naming what differs."""
    path = out / PLAN_FILE
    if not path.is_file():
        return plan
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise BadInputError(path, "not JSON; remove the folder or use another -o") from None
    changed = [
        f"{key}: {old.get(key)!r} → {plan[key]!r}"
        for key in plan
        if key != "systems" and old.get(key) != plan[key]
    ]
    systems = dict(old.get("systems") or {})
    changed += [
        f"system {name}: {systems[name]!r} → {model!r}"
        for name, model in plan["systems"].items()
        if name in systems and systems[name] != model
    ]
    if changed:
        raise BadInputError(
            out,
            "holds an eval of other settings (" + "; ".join(changed) + "); use another -o",
        )
    return {**plan, "systems": {**systems, **plan["systems"]}}


async def _ping(
    systems: list[ResolvedSystem], clients: list[LLMClient], reward: RubricReward
) -> None:
    """Every system loads and every endpoint answers (the judge's too), before anything is
    written."""
    for system, client in zip(systems, clients, strict=True):
        try:
            await client.ping(["policy"])
            await client.release()  # loading proved it loads; generation loads it again
        except LLMError as error:
            raise BadInputError(
                None, f"system {system.record.name}: {redact(str(error))}"
            ) from None
        except Exception as error:  # a model folder transformers cannot load
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise BadInputError(
                system.record.model, f"system {system.record.name} does not load: {redact(first)}"
            ) from None
    judge_llm = getattr(reward.judge, "llm", None)
    if isinstance(judge_llm, LLMClient):
        try:
            await judge_llm.ping(["judge"])
        except LLMError as error:
            raise BadInputError(None, f"judge: {redact(str(error))}") from None


def _latest(records: list[Any]) -> dict[Key, Any]:
    return {(r.system, r.instance_id, r.sample): r for r in records}


async def run_eval(
    settings: PaperGymConfig,
    data: EvalData,
    systems: list[ResolvedSystem],
    reward: RubricReward,
    out: Path,
    tracker: UsageTracker,
) -> tuple[list[EvalScore], list[str]]:
    clients = [system_client(s, settings.llm, tracker) for s in systems]
    try:
        await _ping(systems, clients, reward)
        plan = check_plan(
            out,
            eval_plan(
                settings, data, systems, reward.judge.name, judge_backend=judge_backend(reward)
            ),
        )
        # every check passed: only now does the folder appear
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / PLAN_FILE, json.dumps(plan, indent=1, ensure_ascii=False))
        write_text_atomic(out / CONFIG_FILE, config_yaml(settings))
        write_jsonl(out / QUESTIONS_FILE, [eval_question(i) for i in data.instances])
        answers_log = RecordLog(out / ANSWERS_FILE, EvalAnswer)
        scores_log = RecordLog(out / SCORES_FILE, EvalScore)
        e = settings.eval
        params = SamplingParams(
            temperature=e.temperature, top_p=e.top_p, max_tokens=e.max_tokens, seed=e.seed
        )
        done = set(_latest(answers_log.read()))
        failures: list[str] = []
        for system, client in zip(systems, clients, strict=True):
            failures += await generate(
                system, client, data.instances, params, e.samples, answers_log, done
            )
            await client.release()  # one local model in memory at a time, not every system's
        wanted = {s.record.name for s in systems}
        ids = {i.id for i in data.instances}
        answers = [
            a
            for a in _latest(answers_log.read()).values()
            if a.system in wanted and a.instance_id in ids and a.sample < e.samples
        ]
        # a score whose judge never answered (its endpoint failed) is judged again
        scored = {
            k for k, s in _latest(scores_log.read()).items() if not judge_never_answered(s.verdicts)
        }
        by_id = {i.id: i for i in data.instances}
        todo = [a for a in answers if (a.system, a.instance_id, a.sample) not in scored]
        await score_answers(reward, todo, by_id, scores_log)
        scores = [
            s
            for s in _latest(scores_log.read()).values()
            if s.system in wanted and s.instance_id in ids and s.sample < e.samples
        ]
        return scores, failures
    finally:
        for client in clients:
            await client.aclose()


def _fmt(estimate: Estimate) -> str:
    if estimate.value is None:
        return "-"
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def print_eval_summary(summary: EvalSummary, tracker: UsageTracker) -> None:
    table = Table(
        title=f"Eval: {summary.questions} questions ({summary.split}) × {summary.samples} "
        f"sample(s), judge {summary.judge}, {alpha_text(summary)}, "
        f"{int(summary.level * 100)}% intervals",
        title_justify="left",
    )
    for column in (
        "system",
        "reward",
        "method",
        "experiment",
        "words",
        "len~reward r",
        "scored",
        "unscored",
    ):
        table.add_column(column, justify="left" if column == "system" else "right")
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
        )
    stdout.print(table)
    if summary.pairs:
        pairs = Table(
            title="Paired differences (a − b, questions both scored)", title_justify="left"
        )
        for column in ("a", "b", "difference", "questions", "wins/ties/losses"):
            pairs.add_column(column)
        for p in summary.pairs:
            pairs.add_row(
                p.a, p.b, _fmt(p.reward), str(p.reward.n), f"{p.wins}/{p.ties}/{p.losses}"
            )
        stdout.print(pairs)
    if tracker.rows:
        stdout.print(usage_table(tracker))


def eval_summary(
    settings: PaperGymConfig,
    loaded: EvalData,
    data: str,
    judge: str,
    systems: list[ResolvedSystem],
    scores: list[EvalScore],
) -> EvalSummary:
    """``summary.json`` of ``scores``: per-system statistics and paired differences (also used
    by ``papergym train``'s evaluation of a run's stages)."""
    e = settings.eval
    boot = Bootstrap(resamples=e.resamples, level=e.level, seed=e.seed)
    per_system, pairs = summarise([s.record for s in systems], scores, boot)
    return EvalSummary(
        version=__version__,
        data=data,
        data_format=loaded.format,
        data_id=loaded.data_id,
        split=loaded.split,
        questions=len(loaded.instances),
        instance_ids=tuple(i.id for i in loaded.instances),
        samples=e.samples,
        temperature=e.temperature,
        max_tokens=e.max_tokens,
        judge=judge,
        alpha=settings.reward.alpha,
        alphas=alphas_used(scores),
        seed=e.seed,
        resamples=e.resamples,
        level=e.level,
        systems=per_system,
        pairs=pairs,
    )


@reports_errors
def eval_command(
    arguments: Annotated[
        list[str],
        typer.Argument(
            metavar="SYSTEM... [KEY=VALUE]...",
            help="SYSTEM... (NAME=SPEC or SPEC: a run folder, a model folder, or "
            "openai:MODEL@URL), then optional key=value config overrides.",
            show_default=False,
        ),
    ],
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="The questions: a `papergym build` folder, an instances.jsonl, or a rubric "
            "dataset `papergym audit` reads (ResearchPlanGen, ResearchQA, RubricHub, generic "
            "{question, criteria}; weights kept).",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="The eval folder (created once the checks pass): new, empty, or an earlier "
            "eval's to resume it; another command's folder is refused.",
            show_default=False,
        ),
    ],
    split: Annotated[
        str | None,
        typer.Option(
            "--split",
            help="Sets eval.split: test (held out by data.test_fraction, as training did), "
            "train, all, or auto (default: test when data.test_fraction is set, else all).",
            show_default=False,
        ),
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(
            "-n",
            "--samples",
            min=1,
            help="Sets eval.samples: answers per question (default 1).",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    judge: JudgeOption = None,
    llm_config: LLMConfigOption = None,
    base_url: JudgeBaseUrlOption = None,
    model: JudgeModelOption = None,
    api_key_env: ApiKeyEnvOption = None,
    no_cache: NoCacheOption = False,
    cache_dir: CacheDirOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
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
    llm_options = llm_flags(llm_config, base_url, model, api_key_env, no_cache, cache_dir)
    settings = eval_config(config, overrides, split, samples, judge, llm_options)
    refuse_foreign_folder(out)
    loaded = load_eval_data(
        data, settings.eval.split, settings.data.test_fraction, settings.eval.limit
    )
    api_key_env = settings.llm.default.api_key_env if settings.llm.default else None
    systems = resolve_systems(
        specs,
        api_key_env=api_key_env,
        concurrency=settings.eval.max_concurrency,
        default_prompt=settings.data.system_prompt,
    )
    reward = eval_reward(settings)
    tracker = UsageTracker(prices=dict(settings.llm.prices))
    scores, failures = asyncio.run(run_eval(settings, loaded, systems, reward, out, tracker))
    if failures:
        exit_unfinished(
            failures,
            "answer(s) could not be generated; finished answers and verdicts are kept: run the "
            "same command again",
        )
    summary = eval_summary(settings, loaded, str(data), reward.judge.name, systems, scores)
    write_text_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=1))
    if json_output:
        print(summary.model_dump_json(indent=2))
    else:
        judged = judge_tracker(reward)  # the judge's calls beside the systems'
        print_eval_summary(summary, UsageTracker.merged(tracker, *([judged] if judged else [])))
        stdout.print(
            f"wrote {out}/{{{ANSWERS_FILE}, {SCORES_FILE}, {SUMMARY_FILE}, {CONFIG_FILE}}}"
        )
