"""``papergym serve-reward``: the rubric reward as an HTTP service (the generic server of
:mod:`papergym.adapters.server`, with the judge's name in ``/health`` and the judge warmed up
before the first request)."""

from __future__ import annotations

import functools
import socket
from typing import Any

from papergym.adapters.server import DEFAULT_SERVE_OPTIONS, ServeOptions, run_server
from papergym.adapters.server import RewardServer as RewardServer
from papergym.adapters.server import create_app as create_reward_app
from papergym.redact import redact
from papergym.reward import runtime
from papergym.reward.rating import AnswerJudge
from papergym.reward.reward import Judge, RubricReward


def create_app(reward: RubricReward, **options: Any) -> Any:
    """A FastAPI app serving ``reward`` (all scoring happens on the server's own event loop):
    :func:`papergym.adapters.server.create_app` with the judge's name in ``/health``, and
    ``reward.unscored`` for unscored answers on ``/get_reward``. ``options``: that function's
    ``max_body_bytes``, ``token``, ``docs``, ``load`` (e.g. :func:`warm_up` of the judge) and
    ``on_load_error``."""
    return create_reward_app(
        reward,
        title="PaperGym rubric reward",
        health=lambda: {"judge": reward.judge.name},
        fallback=runtime.unscored_fallback,
        **options,
    )


def warm_up(judge: Judge | AnswerJudge) -> None:
    """Load what ``judge`` needs before its first answer (the offline judge's and the
    reference-similarity reward's embedding model).

    An LLM judge has nothing local to load: its endpoint is checked by the first request.
    """
    from papergym.reward.offline import OfflineJudge
    from papergym.reward.similarity import ReferenceSimilarity

    if isinstance(judge, OfflineJudge):
        judge.scores(["The plan trains a model."], "We train a model and evaluate it.")
    if isinstance(judge, ReferenceSimilarity):
        judge.warm_up()


def serve(
    reward: RubricReward, sock: socket.socket, options: ServeOptions = DEFAULT_SERVE_OPTIONS
) -> int:
    """Serve on ``sock`` until SIGTERM/SIGINT; the exit code (1 when the judge failed to load)."""
    return run_server(
        functools.partial(create_app, reward),
        sock,
        options,
        load=lambda: warm_up(reward.judge),
        serving=f"judge {redact(reward.judge.name)}",
        loading="loading the judge (GET /health answers 503 until it is ready)",
    )
