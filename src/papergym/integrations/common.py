"""What the verifiers and inspect_ai integrations share: the configured reward, rows → instances,
a score's metrics, and the exception an unscored answer raises.

No third-party framework is imported here, so this module (and its tests) run in every venv.

**Configuration.** Both frameworks build an environment from keyword arguments
(``load_environment(judge="llm", alpha=0.5)``, ``inspect eval ... -T judge=llm``), so
:func:`integration_config` turns those into a :class:`~papergym.settings.PaperGymConfig`: the
config file given (or the one an exported environment ships), then ``key=value`` overrides, then
the shorthands (``judge``, ``judge_base_url``, ``judge_model``, ``judge_api_key_env``,
``alpha``), strongest last. The reward is then built exactly as ``papergym score`` builds it
(:func:`papergym.reward.runtime.make_reward`), so both score an answer the same way.

**Event loops.** The frameworks call the reward from their own event loops; the reward's LLM
client belongs to one loop. So judgements run on PaperGym's reward loop
(:func:`papergym.reward.runtime.arun`), one reward per configuration per process.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from papergym.records import Instance, Rubric, Score, source_kind_of
from papergym.reward import runtime
from papergym.reward.reward import RubricReward
from papergym.settings.load import Override, flag, load_config
from papergym.settings.models import PaperGymConfig


class UnscoredAnswer(Exception):
    """The judge could not score an answer (after the LLM layer's retries): not a 0.

    Raised from a framework's reward hook so the framework records a failed reward (verifiers:
    a ``TaskError`` on the trace, left out of its reward means) instead of a silent 0.
    """

    def __init__(self, instance_id: str, reason: str | None) -> None:
        self.instance_id = instance_id
        self.reason = reason or "unscored"
        super().__init__(f"instance {instance_id}: answer unscored: {self.reason}")


def judge_backend_override(
    config: PaperGymConfig,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
) -> Override | None:
    """``llm.roles.judge`` with the given endpoint fields over the judge's current backend."""
    if base_url is None and model is None and api_key_env is None:
        return None
    current: dict[str, Any] = {}
    if config.llm.configured:
        try:
            current = config.llm.for_role("judge").model_dump(mode="json")
        except Exception:  # no backend for the judge yet: the fields given must make one
            current = {}
    if base_url is not None:
        current["base_url"] = [base_url]
    if model is not None:
        current["model"] = model
    if api_key_env is not None:
        current["api_key_env"] = api_key_env
    return flag("llm.roles.judge", current, "judge_base_url/judge_model")


def integration_config(
    config: str | Path | None = None,
    overrides: Sequence[str] = (),
    *,
    judge: str | None = None,
    judge_base_url: str | None = None,
    judge_model: str | None = None,
    judge_api_key_env: str | None = None,
    alpha: float | None = None,
) -> PaperGymConfig:
    """The configuration a framework's keyword arguments describe (see the module docstring)."""
    path = Path(config) if config is not None else None
    shorthands = [
        flag(key, value, name)
        for key, name, value in (
            ("reward.judge", "judge", judge),
            ("reward.alpha", "alpha", alpha),
        )
        if value is not None
    ]
    resolved = load_config(path, [*overrides, *shorthands])
    backend = judge_backend_override(resolved, judge_base_url, judge_model, judge_api_key_env)
    if backend is None:
        return resolved
    return load_config(path, [*overrides, *shorthands, backend])


_rewards: dict[str, RubricReward] = {}
_rewards_lock = threading.Lock()


def reward_for(config: PaperGymConfig) -> RubricReward:
    """One reward per configuration per process (its score cache is shared by every task)."""
    key = config.model_dump_json()
    with _rewards_lock:
        if key not in _rewards:
            _rewards[key] = runtime.make_reward(config)
        return _rewards[key]


async def ascore(reward: RubricReward, instance: Instance, answer: str) -> Score:
    """Score on PaperGym's reward loop, awaited from the framework's own loop."""
    return await runtime.arun(reward.ascore(instance, answer))


def row_instance(row: Mapping[str, Any]) -> Instance:
    """An Instance from an exported row: ``question``, ``reference``, ``rubric`` (JSON text or
    an object), ``instance_id`` (and optionally ``paper_id``, ``recipe``)."""
    rubric = row["rubric"]
    parsed = (
        Rubric.model_validate_json(rubric)
        if isinstance(rubric, str)
        else Rubric.model_validate(rubric)
    )
    return Instance(
        id=str(row["instance_id"]),
        recipe=str(row.get("recipe") or "papergym"),
        builder="llm",
        # exported rows carry only their recipe: ARES rows are judged as documents, not plans
        source_kind=source_kind_of(row.get("recipe")),
        paper_id=str(row.get("paper_id") or ""),
        title="",
        question=str(row["question"]),
        reference_answer=str(row.get("reference") or ""),
        rubric=parsed,
    )


def score_metrics(score: Score, answer: str) -> dict[str, float]:
    """A score as per-sample metrics: the parts that were scored, the unscored flag, length.

    A part that could not be scored is left out (a metric of 0 would read as a failed plan).
    """
    metrics: dict[str, float] = {
        "rubric_unscored": float(not score.scored),
        "answer_chars": float(len(answer)),
    }
    if score.specific is not None:
        metrics["rubric_specific"] = score.specific
    if score.general is not None:
        metrics["rubric_general"] = score.general
    return metrics


def verdict_rows(score: Score) -> list[dict[str, Any]]:
    """Each criterion's verdict and reason, for a framework's per-sample metadata."""
    return [
        {
            "criterion_id": v.criterion_id,
            "kind": v.kind,
            "passed": v.passed,
            "weight": v.weight,
            "reason": v.reason,
        }
        for v in score.verdicts
    ]
