"""``papergym score`` and ``papergym serve-reward``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from papergym.cliutil import (
    DebugOption,
    JsonOption,
    print_summary,
    reports_errors,
    stderr,
    stdout,
)
from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl, write_jsonl, write_text_atomic
from papergym.records import Instance, Score
from papergym.reward.answers import (
    Answer,
    default_scores_path,
    instances_file,
    read_answers,
    read_instances,
    with_samples,
)
from papergym.reward.runtime import make_reward, set_shared_config
from papergym.settings.cli import ConfigOption, OverridesArgument, flags, resolve
from papergym.settings.load import config_yaml
from papergym.settings.models import PaperGymConfig

JudgeOption = Annotated[
    Literal["auto", "offline", "llm"] | None,
    typer.Option(
        "--judge",
        help="Sets reward.judge (default auto). offline: the embedding baseline (no LLM); llm: "
        "the judge role of the config's llm section ($PAPERGYM_LLM_CONFIG, $PAPERGYM_BASE_URL, "
        "...); auto: llm when configured. The LLM judge's criteria per call: "
        "reward.criteria_per_call=all|1|K.",
        show_default=False,
    ),
]
AlphaOption = Annotated[
    float | None,
    typer.Option(
        "--alpha",
        min=0.0,
        max=1.0,
        help="Sets reward.alpha, the weight of the specific criteria (default 0.7).",
        show_default=False,
    ),
]


MaxAnswerCharsOption = Annotated[
    int | None,
    typer.Option(
        "--max-answer-chars",
        min=0,
        help="Sets reward.max_answer_chars (default 16000): longer answers are cut to this many "
        "characters before judging, and their score says answer_truncated (0: no limit).",
        show_default=False,
    ),
]


def reward_config(
    config_file: Path | None,
    overrides: list[str] | None,
    judge: str | None,
    alpha: float | None,
    max_answer_chars: int | None,
) -> PaperGymConfig:
    """The command's configuration; the reward flags are shorthands for reward.* keys."""
    given = flags(
        judge=("reward.judge", "--judge", judge),
        alpha=("reward.alpha", "--alpha", alpha),
        max_answer_chars=("reward.max_answer_chars", "--max-answer-chars", max_answer_chars),
    )
    return resolve(config_file, overrides, given)


def _score_summary(
    scores: list[Score], answers: list[Answer], judge: str, out: Path
) -> dict[str, object]:
    """The numbers ``score`` prints: counts, the mean, and per instance when several answers
    each (how many, and how many instances gave every sample the same score: no signal for a
    GRPO group)."""
    values = [s.value for s in scores if s.value is not None]
    summary: dict[str, object] = {
        "answers": len(scores),
        "scored": len(values),
        "unscored": len(scores) - len(values),
        "truncated": sum(s.answer_truncated for s in scores),
        "mean": sum(values) / len(values) if values else None,
    }
    if any(a.sample is not None for a in answers):
        by_instance: dict[str, list[float | None]] = {}
        for answer, score in zip(answers, scores, strict=True):
            by_instance.setdefault(answer.instance_id, []).append(score.value)
        sizes = [len(v) for v in by_instance.values()]
        groups = [[x for x in v if x is not None] for v in by_instance.values()]
        summary["instances"] = len(by_instance)
        summary["samples_per_instance"] = (
            str(min(sizes)) if min(sizes) == max(sizes) else f"{min(sizes)}-{max(sizes)}"
        )
        summary["instances_all_tied"] = sum(len(g) > 1 and max(g) == min(g) for g in groups)
    summary["judge"] = judge
    summary["written"] = str(out)
    summary["unscored_reasons"] = dict(Counter(s.unscored_reason for s in scores if not s.scored))
    return summary


@reports_errors
def score(
    instances: Annotated[
        Path,
        typer.Argument(
            help="A `papergym build` folder, or its instances.jsonl.", show_default=False
        ),
    ],
    answers: Annotated[
        Path,
        typer.Argument(
            help="JSONL of {instance_id, answer} (and sample, for several answers per instance).",
            show_default=False,
        ),
    ],
    overrides: OverridesArgument = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Where to write the scores (JSONL; default: beside ANSWERS, as "
            "ANSWERS_NAME.scores.jsonl); the resolved configuration goes beside it as "
            "NAME.config.yaml.",
            show_default=False,
        ),
    ] = None,
    samples: Annotated[
        bool,
        typer.Option(
            "--samples",
            help="Several answers per instance (GRPO samples): lines without a sample field "
            "are numbered per instance in file order (0, 1, ...). A file whose lines all have "
            "a sample field needs no flag.",
        ),
    ] = False,
    config: ConfigOption = None,
    judge: JudgeOption = None,
    alpha: AlphaOption = None,
    max_answer_chars: MaxAnswerCharsOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Score answers against their instances' rubrics; unscored answers are reported, never 0.

    Each answers line is {"instance_id": "...", "answer": "..."} (also "id"; "response" or
    "completion"). One answer per instance, or several: give each line a "sample" field (an
    integer or a string, unique per instance), or pass --samples to number them in file order;
    every score then carries its sample, and the summary counts instances, samples per instance
    and instances_all_tied (two or more scored samples, all with the same score: no learning
    signal for a GRPO group). A line that is not such an object (a null, number or
    list answer, no answer field, no id, an id or sample seen before, an unknown id) stops the
    command with one line naming file:line, exit 2, and nothing written.
    """
    out = out if out is not None else default_scores_path(answers)
    if out.is_dir():
        raise BadInputError(out, "is a folder; -o takes the path of the scores file")
    if out.resolve() == answers.resolve():
        raise BadInputError(out, "is the answers file; -o takes another path")
    settings = reward_config(config, overrides, judge, alpha, max_answer_chars)
    by_id = read_instances(instances)
    given = read_answers(answers, samples=samples)
    unknown = [a for a in given if a.instance_id not in by_id]
    if unknown:
        raise BadInputError(
            f"{answers}:{unknown[0].line}",
            f"instance_id {unknown[0].instance_id!r} is not in {instances}"
            + (f" ({len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""),
        )
    reward = make_reward(settings)
    scores = reward.score_many([(by_id[a.instance_id], a.answer) for a in given])
    write_jsonl(out, with_samples(scores, given))
    # beside the scores, not "config.yaml": -o's folder is often the working directory, where
    # the user's own config.yaml may be
    write_text_atomic(out.with_name(out.stem + ".config.yaml"), config_yaml(settings))
    print_summary("Scores", _score_summary(scores, given, reward.judge.name, out), json_output)


_SERVE_REWARD_EPILOG = """Requests (JSON bodies; add -H "Authorization: Bearer $TOKEN" with --token-env):

POST /get_reward (OpenRLHF --remote_rm_url): {"query": [prompt+response, ...], "prompts": [prompt, ...], "labels": [ground_truth, ...]} → {"rewards": [...], "scores": [...], "extra_logs": {"rubric_specific", "rubric_general", "rubric_unscored"}}; an unscored answer gets reward.unscored (default 0.0) and rubric_unscored 1.0, and a part it could not score logs -1.0; rubric_general is left out under the offline judge, which grades no general criteria.

POST /score: {"items": [{"ground_truth": ..., "answer": "...", "extra_info": {...} (optional)}]} → {"scores": [{"instance_id", "value" (null when unscored), "specific", "general", "alpha", "normalisation", "verdicts" (each with its criterion's weight; a pitfall's passed=true means the mistake was made), "unscored_reason", "judge", "answer_truncated"}]}.

A ground_truth (label) is the verl export's reward_model.ground_truth: a JSON string or object {"question", "reference_answer", "rubric"}.

GET /health: 200 {"status": "ok", "judge"} when ready; 503 {"status": "loading"} while the judge loads.

curl -s localhost:8765/health

curl -s localhost:8765/score -H 'Content-Type: application/json' -d '{"items": [{"ground_truth": '"$GT"', "answer": "We will ..."}]}'

curl -s localhost:8765/get_reward -H 'Content-Type: application/json' -d '{"query": ["Q: ...\\nA: We will ..."], "prompts": ["Q: ...\\nA: "], "labels": ['"$GT"']}'

Set GT to one instance's label: GT=$(python -c "import json; i = json.loads(open('env/instances.jsonl').readline()); print(json.dumps({k: i[k] for k in ('question', 'reference_answer', 'rubric')}))")

With --reward review no label is read: POST /get_reward reviews each query's response part → {"rewards", "scores", "extra_logs": {"review_rating", "review_unscored", "review_partial"}}; POST /score: {"items": [{"answer": "..."}]} → {"scores": [{"value" (null when unscored), "rating", "reviews" (scored), "asked", "unscored", "partial", "reason", "answer_truncated"}]}; GET /health: 200 {"status": "ok", "reward": "review", "reviewer"}. A text scored from fewer reviews than asked is flagged partial (review.partial=flag) or unscored (review.partial=unscored); a review whose endpoint failed is never remembered, so the text is reviewed again next time. Answers are cut to review.max_answer_chars (default 100000; --max-answer-chars) before anything else is done with them.

With an LLM judge or reviewer, its endpoint is asked for its model list first: when it does not answer, the server does not start (one line, exit 2).

Logs go to stderr: a start line (address, judge, readiness), one line per request (client, method, path, status, latency, scored/unscored). SIGTERM or Ctrl-C stops the server (exit 0) after at most 5 s of in-flight work."""
SERVE_REWARD_EPILOG = _SERVE_REWARD_EPILOG
"""``--help``'s epilog, shown as written (help is plain text: no rich markup to escape)."""


@reports_errors
def serve_reward(
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            help="Sets serve.host (default 127.0.0.1): the address to listen on (0.0.0.0: every "
            "interface).",
            show_default=False,
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            help="Sets serve.port (default 8765): the port to listen on (0: any free port, shown "
            "in the start line). Not 8000, vLLM's default, which a judge server on the same "
            "machine often holds.",
            show_default=False,
        ),
    ] = None,
    judge: JudgeOption = None,
    alpha: AlphaOption = None,
    max_body_mb: Annotated[
        float | None,
        typer.Option(
            "--max-body-mb",
            min=0.001,
            help="Sets serve.max_body_mb (default 32): the largest request body, in MiB; a larger "
            "one is refused (413) before it is read.",
            show_default=False,
        ),
    ] = None,
    max_answer_chars: Annotated[
        int | None,
        typer.Option(
            "--max-answer-chars",
            min=0,
            help="Sets reward.max_answer_chars (default 16000) and review.max_answer_chars "
            "(default 100000, for --reward review): longer answers are cut to this many "
            "characters before any other work, and their score says answer_truncated (0: no "
            "limit).",
            show_default=False,
        ),
    ] = None,
    token_env: Annotated[
        str | None,
        typer.Option(
            "--token-env",
            help="Sets serve.token_env: the name of an environment variable holding a bearer "
            "token that every request but GET /health must send (Authorization: Bearer ...). "
            "Default: no token.",
            show_default=False,
        ),
    ] = None,
    docs: Annotated[
        bool | None,
        typer.Option(
            "--docs",
            help="Sets serve.docs: serve the API docs at /docs, /redoc, /openapi.json.",
            show_default=False,
        ),
    ] = None,
    reward_kind: Annotated[
        Literal["rubric", "review"] | None,
        typer.Option(
            "--reward",
            help="Sets serve.reward (default rubric). review: the review reward, each answer's "
            "mean simulated review rating on [0, 1] (labels not needed; the reviewer is "
            "review.reviewer: the LLM reviewer when an LLM is configured, else the offline "
            "baseline).",
            show_default=False,
        ),
    ] = None,
    debug: DebugOption = False,
) -> None:
    """Serve the rubric reward (or, with --reward review, the review reward) over HTTP: POST /get_reward (OpenRLHF), POST /score, GET /health."""
    import os
    import sys

    from papergym.netutil import bind
    from papergym.redact import register_secret
    from papergym.reward.runtime import check_reachable, judge_kind, judge_llm_config
    from papergym.reward.server import serve
    from papergym.settings import env

    settings = resolve(
        config,
        overrides,
        flags(
            judge=("reward.judge", "--judge", judge),
            alpha=("reward.alpha", "--alpha", alpha),
            chars=("reward.max_answer_chars", "--max-answer-chars", max_answer_chars),
            review_chars=("review.max_answer_chars", "--max-answer-chars", max_answer_chars),
            host=("serve.host", "--host", host),
            port=("serve.port", "--port", port),
            body=("serve.max_body_mb", "--max-body-mb", max_body_mb),
            token=("serve.token_env", "--token-env", token_env),
            docs=("serve.docs", "--docs", docs),
            reward=("serve.reward", "--reward", reward_kind),
        ),
    )
    serving = settings.serve
    token = None
    if serving.token_env is not None:
        token = env.secret(serving.token_env)
        if not token:
            raise BadInputError(
                None, f"--token-env {serving.token_env}: that variable is not set or empty"
            )
        register_secret(token)
    set_shared_config(settings)  # the fallback for unscored answers on /get_reward
    if serving.reward == "review":
        from papergym.review.runtime import make_review_reward, reviewer_kind
        from papergym.review.server import review_workers, serve_review

        if reviewer_kind(settings) == "llm":  # before anything listens: not ready, exit 2
            check_reachable(settings.llm, "reviewer")
        review_reward = make_review_reward(settings, executor=review_workers())
        sock = bind(serving.host, serving.port)
        code = serve_review(
            review_reward,
            sock,
            max_body_bytes=int(serving.max_body_mb * 1024 * 1024),
            token=token,
            docs=serving.docs,
        )
    else:
        if judge_kind(settings) == "llm":
            check_reachable(judge_llm_config(settings), "judge")
        reward = make_reward(settings)
        sock = bind(
            serving.host, serving.port
        )  # before anything is printed: a taken port is exit 2
        code = serve(
            reward,
            sock,
            max_body_bytes=int(serving.max_body_mb * 1024 * 1024),
            token=token,
            docs=serving.docs,
        )
    # Served and shut down cleanly: skip the interpreter's teardown, which with torch and the
    # embedding model loaded takes seconds (C-level, no Python frame) and delays a SIGTERM stop.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@reports_errors
def check_reward(
    instances: Annotated[
        Path,
        typer.Argument(
            help="A `papergym build` folder, or its instances.jsonl.", show_default=False
        ),
    ],
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    judge: JudgeOption = None,
    alpha: AlphaOption = None,
    margin: Annotated[
        float, typer.Option("--margin", help="How far the reference must beat each gaming probe.")
    ] = 0.2,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Check at most N instances.")
    ] = None,
    max_answer_chars: MaxAnswerCharsOption = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit with code 1 (the check failed) when any instance is flagged, as a test "
            "runner does when a test fails; bad input stays exit 2.",
        ),
    ] = False,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """The reward's self-test: reference vs empty, restated-question, other-paper, padded, criteria-list and judge-injection probes (and committed-pitfalls for weighted rubrics).

    Flags the instances whose reference answer does not beat every gaming probe by --margin,
    and, for rubrics with pitfalls (negative weights), those where an answer committing the
    pitfalls does not score strictly below the reference. Exit 0 whatever is flagged, unless
    --strict.
    """
    import asyncio
    from dataclasses import asdict

    from papergym.reward.check import check_reward as run_check

    settings = reward_config(config, overrides, judge, alpha, max_answer_chars)
    source = instances_file(instances)
    loaded = read_jsonl(source, Instance)[:limit]
    if not loaded:
        raise BadInputError(source, "no instances")
    reward = make_reward(settings)
    progress = Progress(
        TextColumn("check-reward"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=json_output or not stderr.is_terminal,
    )
    with progress:
        task = progress.add_task("answers", total=None)
        report = asyncio.run(
            run_check(
                reward,
                loaded,
                margin,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        )
    failed = strict and bool(report.flagged)
    if json_output:
        print(json.dumps(asdict(report), indent=2))
        if failed:
            raise typer.Exit(1)
        return
    table = Table(
        title=f"Reward self-test ({report.judge}, {report.instances} instances)",
        title_justify="left",
    )
    for column in ("probe", "mean reward", "scored", "unscored"):
        table.add_column(column, justify="left" if column == "probe" else "right")
    for probe in report.probes:
        table.add_row(
            probe.probe,
            "-" if probe.mean is None else f"{probe.mean:.3f}",
            str(probe.scored),
            str(probe.unscored),
        )
    stdout.print(table)
    auc = report.own_vs_other_auc
    stdout.print(f"own vs other reference AUC: {'-' if auc is None else f'{auc:.3f}'}")
    stdout.print(
        f"instances whose reference does not beat the gaming probes by {margin}: {len(report.flagged)}"
    )
    for flag in report.flagged[:FLAGS_SHOWN]:
        stdout.print(f"  {flag['title'] or flag['instance_id']}: {flag['reason']}", highlight=False)
    if len(report.flagged) > FLAGS_SHOWN:
        stdout.print(f"  … {len(report.flagged) - FLAGS_SHOWN} more (--json lists them all)")
    if failed:
        raise typer.Exit(1)


FLAGS_SHOWN = 10
"""Flagged instances listed in the readable summary; --json has every one."""
