"""``papergym score`` and ``papergym serve-reward``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.table import Table

from papergym.cliutil import DebugOption, JsonOption, reports_errors, stdout
from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl, write_jsonl
from papergym.records import Instance
from papergym.reward.reward import RubricReward
from papergym.reward.runtime import make_judge

JudgeOption = Annotated[
    Literal["auto", "offline", "llm"],
    typer.Option(
        "--judge",
        help="offline: the embedding baseline (no LLM); llm: the judge role of the "
        "LLM configuration ($PAPERGYM_LLM_CONFIG, $PAPERGYM_BASE_URL, ...); auto: llm when configured.",
    ),
]
AlphaOption = Annotated[
    float, typer.Option("--alpha", min=0.0, max=1.0, help="Weight of the specific criteria.")
]


def _reward(judge: str, alpha: float) -> RubricReward:
    return RubricReward(make_judge(None if judge == "auto" else judge), alpha=alpha)


def _answers(path: Path) -> dict[str, str]:
    """Answers as JSONL ``{"instance_id": ..., "answer": ...}`` (also ``id``/``response``)."""
    if not path.is_file():
        raise BadInputError(path, "no such file")
    answers: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = str(row.get("instance_id", row.get("id")))
            answers[key] = str(row.get("answer", row.get("response", row.get("completion"))))
        except (json.JSONDecodeError, AttributeError):
            raise BadInputError(
                f"{path}:{number}", "not a JSON object with instance_id and answer"
            ) from None
    return answers


@reports_errors
def score(
    instances: Annotated[
        Path, typer.Argument(help="instances.jsonl from `papergym build`.", show_default=False)
    ],
    answers: Annotated[
        Path, typer.Argument(help="JSONL of {instance_id, answer}.", show_default=False)
    ],
    out: Annotated[
        Path, typer.Option("-o", "--out", help="Where to write the scores (JSONL).")
    ] = Path("scores.jsonl"),
    judge: JudgeOption = "auto",
    alpha: AlphaOption = 0.7,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Score answers against their instances' rubrics; unscored answers are reported, never 0."""
    by_id = {i.id: i for i in read_jsonl(instances, Instance)}
    given = _answers(answers)
    unknown = sorted(set(given) - set(by_id))
    if unknown:
        raise BadInputError(
            answers, f"{len(unknown)} answer(s) name unknown instances, e.g. {unknown[0]}"
        )
    reward = _reward(judge, alpha)
    scores = reward.score_many([(by_id[k], a) for k, a in given.items()])
    write_jsonl(out, scores)
    values = [s.value for s in scores if s.value is not None]
    summary = {
        "answers": len(scores),
        "scored": len(values),
        "unscored": len(scores) - len(values),
        "mean": sum(values) / len(values) if values else None,
        "judge": reward.judge.name,
        "written": str(out),
        "unscored_reasons": dict(Counter(s.unscored_reason for s in scores if not s.scored)),
    }
    if json_output:
        print(json.dumps(summary, indent=2))
        return
    table = Table(title="Scores", title_justify="left", show_header=False)
    for key, value in summary.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    stdout.print(table)


@reports_errors
def serve_reward(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    judge: JudgeOption = "auto",
    alpha: AlphaOption = 0.7,
    debug: DebugOption = False,
) -> None:
    """Serve the rubric reward over HTTP: POST /get_reward (OpenRLHF), POST /score, GET /health."""
    import uvicorn

    from papergym.reward.server import create_app

    uvicorn.run(create_app(_reward(judge, alpha)), host=host, port=port, log_level="warning")


@reports_errors
def check_reward(
    instances: Annotated[
        Path, typer.Argument(help="instances.jsonl from `papergym build`.", show_default=False)
    ],
    judge: JudgeOption = "auto",
    alpha: AlphaOption = 0.7,
    margin: Annotated[
        float, typer.Option("--margin", help="How far the reference must beat each gaming probe.")
    ] = 0.2,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Check at most N instances.")
    ] = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """The reward's self-test: reference vs empty, restated-question, other-paper, padded, criteria-list and judge-injection probes."""
    import asyncio
    from dataclasses import asdict

    from papergym.reward.check import check_reward as run_check

    loaded = read_jsonl(instances, Instance)[:limit]
    if not loaded:
        raise BadInputError(instances, "no instances")
    report = asyncio.run(run_check(_reward(judge, alpha), loaded, margin))
    if json_output:
        print(json.dumps(asdict(report), indent=2))
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
    for flag in report.flagged[:10]:
        stdout.print(f"  {flag['title']}: {flag['reason']}", highlight=False)
