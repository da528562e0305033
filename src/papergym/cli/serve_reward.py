"""``papergym serve-reward``: the rubric reward (or the review reward) over HTTP."""

from __future__ import annotations

import os
import socket
import sys
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from papergym import environment as env
from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    OverridesArgument,
    flags,
    reports_errors,
    resolve,
)
from papergym.cli.groups import single_app
from papergym.cli.reward_options import AlphaOption, JudgeOption
from papergym.errors import BadInputError
from papergym.netutil import bind
from papergym.redact import register_secret
from papergym.review.settings import ReviewSection
from papergym.reward.runtime import (
    check_reachable,
    judge_kind,
    judge_llm_config,
    make_reward,
    set_shared_config,
)
from papergym.reward.settings import DEFAULT_MAX_ANSWER_CHARS, ServeSection
from papergym.settings.models import PaperGymConfig

if TYPE_CHECKING:
    from papergym.adapters.server import ServeOptions

app = single_app()

REVIEW_MAX_ANSWER_CHARS = ReviewSection.model_fields["max_answer_chars"].default

SERVE_REWARD_EPILOG = """Requests (JSON bodies; add -H "Authorization: Bearer $TOKEN" with --token-env):

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
"""``--help``'s epilog, shown as written (help is plain text: no rich markup to escape)."""


HostOption = Annotated[
    str | None,
    typer.Option(
        "--host",
        help="Sets serve.host (default 127.0.0.1): the address to listen on (0.0.0.0: every "
        "interface).",
        show_default=False,
    ),
]

PortOption = Annotated[
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
]

MaxBodyOption = Annotated[
    float | None,
    typer.Option(
        "--max-body-mb",
        min=0.001,
        help="Sets serve.max_body_mb (default 32): the largest request body, in MiB; a larger "
        "one is refused (413) before it is read.",
        show_default=False,
    ),
]

ServeMaxAnswerCharsOption = Annotated[
    int | None,
    typer.Option(
        "--max-answer-chars",
        min=0,
        help=f"Sets reward.max_answer_chars (default {DEFAULT_MAX_ANSWER_CHARS}) and "
        f"review.max_answer_chars (default {REVIEW_MAX_ANSWER_CHARS}, for --reward review): "
        "longer answers are cut to this many "
        "characters before any other work, and their score says answer_truncated (0: no "
        "limit).",
        show_default=False,
    ),
]

TokenEnvOption = Annotated[
    str | None,
    typer.Option(
        "--token-env",
        help="Sets serve.token_env: the name of an environment variable holding a bearer "
        "token that every request but GET /health must send (Authorization: Bearer ...). "
        "Default: no token.",
        show_default=False,
    ),
]

DocsOption = Annotated[
    bool | None,
    typer.Option(
        "--docs",
        help="Sets serve.docs: serve the API docs at /docs, /redoc, /openapi.json.",
        show_default=False,
    ),
]

RewardKindOption = Annotated[
    Literal["rubric", "review"] | None,
    typer.Option(
        "--reward",
        help="Sets serve.reward (default rubric). review: the review reward, each answer's "
        "mean simulated review rating on [0, 1] (labels not needed; the reviewer is "
        "review.reviewer: the LLM reviewer when an LLM is configured, else the offline "
        "baseline).",
        show_default=False,
    ),
]


@app.command("serve-reward", epilog=SERVE_REWARD_EPILOG)
@reports_errors
def serve_reward(
    overrides: OverridesArgument = None,
    config: ConfigOption = None,
    host: HostOption = None,
    port: PortOption = None,
    judge: JudgeOption = None,
    alpha: AlphaOption = None,
    max_body_mb: MaxBodyOption = None,
    max_answer_chars: ServeMaxAnswerCharsOption = None,
    token_env: TokenEnvOption = None,
    docs: DocsOption = None,
    reward_kind: RewardKindOption = None,
    debug: DebugOption = False,
) -> None:
    """Serve the rubric reward (or, with --reward review, the review reward) over HTTP: POST /get_reward (OpenRLHF), POST /score, GET /health."""
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
    token = _token(settings.serve)
    set_shared_config(settings)  # the fallback for unscored answers on /get_reward
    if settings.serve.reward == "review":
        code = _serve_review(settings, token)
    else:
        code = _serve_rubric(settings, token)
    # Served and shut down cleanly: skip the interpreter's teardown, which with torch and the
    # embedding model loaded takes seconds (C-level, no Python frame) and delays a SIGTERM stop.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _token(serving: ServeSection) -> str | None:
    """The bearer token ``serve.token_env`` names (registered as a secret), or None; a name
    whose variable is unset or empty is refused in one line."""
    if serving.token_env is None:
        return None
    token = env.secret(serving.token_env)
    if not token:
        raise BadInputError(
            None, f"--token-env {serving.token_env}: that variable is not set or empty"
        )
    register_secret(token)
    return token


def _serve_rubric(settings: PaperGymConfig, token: str | None) -> int:
    """Serve the rubric reward until stopped; the exit code."""
    from papergym.reward.server import serve

    if judge_kind(settings) == "llm":
        check_reachable(judge_llm_config(settings), "judge")
    reward = make_reward(settings)
    sock, options = _listening(settings.serve, token)  # before anything is printed: exit 2
    return serve(reward, sock, options)


def _serve_review(settings: PaperGymConfig, token: str | None) -> int:
    """Serve the review reward until stopped; the exit code."""
    from papergym.review.runtime import make_review_reward, reviewer_kind
    from papergym.review.server import review_workers, serve_review

    if reviewer_kind(settings.review, settings.llm) == "llm":  # before anything listens: exit 2
        check_reachable(settings.llm, "reviewer")
    review_reward = make_review_reward(settings.review, settings.llm, executor=review_workers())
    sock, options = _listening(settings.serve, token)
    return serve_review(review_reward, sock, options)


def _listening(serving: ServeSection, token: str | None) -> tuple[socket.socket, ServeOptions]:
    """The bound socket (a taken port is exit 2), and the options a server takes: its body
    limit in bytes, token and docs switch."""
    from papergym.adapters.server import ServeOptions  # the web stack, only when serving

    sock = bind(serving.host, serving.port)
    options = ServeOptions(
        max_body_bytes=int(serving.max_body_mb * 1024 * 1024), token=token, docs=serving.docs
    )
    return sock, options
