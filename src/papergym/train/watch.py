"""The training watch: a second judge of the held-out evaluation, and the divergence alarm.

As ``train cycle`` has a second reviewer (``cycle.watch``) score the papers its reward scores,
OPSD, GRPO and SFT runs take a second rubric judge (the ``watch`` section: the ``reward``
section with its judge, calibration, LLM file or α replaced) that scores the same greedy
held-out answers at every ``eval.steps``. ``metrics.jsonl`` gets both means at each evaluation
(``eval/reward``, ``eval/watch_reward``). :class:`WatchTracker` then, at each evaluation:

* appends an :class:`~papergym.train.divergence.EvalPoint` (both means and both judges'
  per-criterion pass rates) to the stage's ``watch.jsonl``;
* saves the policy in memory to the stage's ``best/`` when the watch's score is a new peak
  (``best/best.json``, written last, says which step and scores; under LoRA ``best/`` holds the
  adapter, whose config names the stage's starting model);
* warns when :func:`~papergym.train.divergence.divergence` finds the training reward rising for
  ``watch.patience`` evaluations while the watch falls: a log line, an ``alarm`` record in
  ``metrics.jsonl`` naming the criteria that drive the gap, and the stage summary's ``watch``.

A resumed stage evaluates again from its checkpoint: the tracker drops the points (and a
``best/``) from evaluations at or after the first one it sees again, so each appears once.
"""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.records import Instance
from papergym.reward.factory import judge_kind, make_reward
from papergym.reward.reward import RubricReward
from papergym.reward.settings import RewardSection
from papergym.train.config import TrainConfig, WatchSettings
from papergym.train.divergence import (
    Divergence,
    EvalPoint,
    criterion_key,
    divergence,
    is_watch_peak,
    pass_rates,
)
from papergym.train.evaluation import Evaluation, StepEvaluator
from papergym.train.run import MetricsLog

log = logging.getLogger("papergym.train")

WATCH_FILE = "watch.jsonl"
"""A stage folder's evaluations as both judges saw them, one :class:`EvalPoint` a line."""
BEST_DIR = "best"
"""A stage folder's sub-folder holding the weights at the watch's peak."""
BEST_FILE = "best.json"
"""Inside ``best/``, written last: the step and scores of those weights."""
ALARM = "divergence"
"""The ``alarm`` value of a divergence record in ``metrics.jsonl``."""


def watch_section(reward: RewardSection, watch: WatchSettings) -> RewardSection:
    """The reward section the watch judges with: ``reward`` with the watch's keys replaced."""
    changes: dict[str, Any] = {"judge": watch.judge}
    for key in ("alpha", "calibration", "llm_config"):
        if getattr(watch, key) is not None:
            changes[key] = getattr(watch, key)
    return reward.model_copy(update=changes)


def build_watch(config: TrainConfig) -> RubricReward | None:
    """The watch judge's reward (None: ``watch.judge`` is none); refused when it would judge
    exactly as the training reward does, since it could then never disagree."""
    if config.watch.judge == "none":
        return None
    section = watch_section(config.reward, config.watch)
    resolved = section.model_copy(update={"judge": judge_kind(section, config.llm)})
    trained = config.reward.model_copy(update={"judge": judge_kind(config.reward, config.llm)})
    if resolved == trained:
        raise BadInputError(
            None,
            f"watch.judge={config.watch.judge} judges exactly as the training reward does; "
            "give the watch another judge, calibration, llm_config or alpha (or watch.judge=none)",
        )
    return make_reward(section, config.llm)


@dataclass
class WatchTracker:
    """Keeps a stage's evaluations, ``best/`` and alarms (see the module docstring)."""

    settings: WatchSettings
    stage_dir: Path
    metrics: MetricsLog
    tokenizer: Any
    criteria: dict[str, str] = field(default_factory=dict)
    """Criterion key → its text, to name the criteria in a warning."""
    _points: list[EvalPoint] | None = None

    @property
    def points_path(self) -> Path:
        return self.stage_dir / WATCH_FILE

    @property
    def best_dir(self) -> Path:
        return self.stage_dir / BEST_DIR

    def observe(self, step: int, evaluation: Evaluation, model: Any) -> Divergence | None:
        """Record the evaluation at ``step``; save ``best/`` at a new watch peak; warn (and
        return the divergence) when the run diverges."""
        if evaluation.watch_scores is None:
            return None
        history = self._history(step)
        values = evaluation.values
        point = EvalPoint(
            step=step,
            train=values.get("eval/reward"),
            watch=values.get("eval/watch_reward"),
            train_rates=pass_rates(evaluation.scores),
            watch_rates=pass_rates(evaluation.watch_scores),
        )
        if is_watch_peak(history, point):
            self._save_best(model, point)
        history.append(point)
        with self.points_path.open("a", encoding="utf-8") as handle:
            handle.write(point.model_dump_json() + "\n")
        s = self.settings
        found = divergence(history, s.patience, s.min_change, s.criteria_shown)
        if found is not None:
            self._warn(step, found)
        return found

    def _history(self, step: int) -> list[EvalPoint]:
        """The points before ``step``; on the first call, those of an earlier session, minus
        any from evaluations this session is about to repeat (after a resume)."""
        if self._points is None:
            kept = [p for p in read_points(self.points_path) if p.step < step]
            write_text_atomic(self.points_path, "".join(p.model_dump_json() + "\n" for p in kept))
            best = read_best(self.stage_dir)
            if best is not None and best["step"] >= step:
                shutil.rmtree(self.best_dir)  # from a timeline the resume discarded
            self._points = kept
        return self._points

    def _save_best(self, model: Any, point: EvalPoint) -> None:
        """The weights in memory into ``best/``, replacing the last ones only once complete."""
        staging = self.stage_dir / f"{BEST_DIR}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        model.save_pretrained(staging)
        self.tokenizer.save_pretrained(staging)
        record = {"step": point.step, "watch": point.watch, "train": point.train}
        write_text_atomic(staging / BEST_FILE, json.dumps(record))
        shutil.rmtree(self.best_dir, ignore_errors=True)
        staging.rename(self.best_dir)

    def _warn(self, step: int, found: Divergence) -> None:
        named = [
            {**gap.model_dump(), "text": self.criteria.get(gap.criterion, "")}
            for gap in found.criteria
        ]
        self.metrics.write(
            step, alarm=ALARM, **found.model_dump(exclude={"criteria"}), criteria=named
        )
        drivers = "; ".join(
            f"{g['criterion']} ({g['gap']:+.2f}{': ' + g['text'][:60] if g['text'] else ''})"
            for g in named
        )
        log.warning(
            "%s: the training reward rose %+.3f over %d evaluations (steps %d-%d) while the "
            "watch fell %+.3f: reward hacking? criteria driving the gap: %s",
            self.stage_dir.name,
            found.train_change,
            found.evaluations,
            found.first_step,
            found.last_step,
            found.watch_change,
            drivers or "none rated by both judges",
        )


def criterion_texts(instances: list[Instance]) -> dict[str, str]:
    """Criterion key → text for the held-out instances' criteria (general ones once)."""
    texts = {}
    for instance in instances:
        for c in instance.rubric.specific:
            texts[criterion_key(instance.id, c.id, "specific")] = c.text
        for g in instance.rubric.general:
            texts[criterion_key(instance.id, g.id, "general")] = g.text
    return texts


def watch_tracker(
    evaluator: StepEvaluator | None, settings: WatchSettings, stage_dir: Path, metrics: MetricsLog
) -> WatchTracker | None:
    """The tracker of a stage whose evaluator has a watch (None otherwise)."""
    if evaluator is None or evaluator.watch is None:
        return None
    texts = criterion_texts(evaluator.instances)
    return WatchTracker(settings, stage_dir, metrics, evaluator.tokenizer, texts)


def record_evaluation(
    evaluator: StepEvaluator,
    tracker: WatchTracker | None,
    metrics: MetricsLog | None,
    step: int,
    model: Any,
) -> dict[str, Any]:
    """Evaluate ``model`` at ``step``: the ``eval/*`` record, then the watch's bookkeeping."""
    evaluation = evaluator.run(model)
    if metrics is not None:
        metrics.write(step, **evaluation.values)
    if tracker is not None:
        tracker.observe(step, evaluation, model)
    return evaluation.values


def read_points(path: Path) -> list[EvalPoint]:
    """The evaluations of a ``watch.jsonl`` (none when it is missing)."""
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [EvalPoint.model_validate_json(line) for line in lines if line.strip()]


def read_best(stage_dir: Path) -> dict[str, Any] | None:
    """``best/best.json`` of a stage (None: no complete ``best/``)."""
    path = stage_dir / BEST_DIR / BEST_FILE
    if not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


def watch_summary(stage_dir: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The stage summary's ``watch``: evaluations watched, the alarms, and ``best/``
    (empty when the stage had no watch)."""
    points = read_points(stage_dir / WATCH_FILE)
    if not points:
        return {}
    alarms = [r for r in records if r.get("alarm") == ALARM]
    best = read_best(stage_dir)
    return {
        "watch": {
            "evaluations": len(points),
            "alarms": [
                {k: v for k, v in r.items() if k not in ("stage", "time", "alarm")} for r in alarms
            ],
            "best": {**best, "path": str(stage_dir / BEST_DIR)} if best else None,
        }
    }
