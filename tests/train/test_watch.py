"""The training watch's wiring with scripted scores: the watch judge built from the config,
``watch.jsonl``, ``best/`` at the watch's peak, the alarm (log line, metrics record, summary),
and what a resume keeps. No model trains here (see test_watch_run.py for a real run)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from train_samples import train_instance

from papergym.errors import BadInputError
from papergym.eval.records import EvalScore, EvalVerdict
from papergym.reward.offline import OfflineJudge
from papergym.reward.settings import RewardSection
from papergym.settings.train import TrainConfig
from papergym.train.evaluation import Evaluation
from papergym.train.run import MetricsLog
from papergym.train.settings import WatchSettings
from papergym.train.watch import (
    BEST_DIR,
    WATCH_FILE,
    WatchTracker,
    build_watch,
    criterion_texts,
    read_best,
    record_evaluation,
    watch_section,
    watch_summary,
)

INSTANCE = train_instance("p0", "sparse attention")
"""Three specific criteria: p0-c1, p0-c2, p0-c3."""


class SavingModel:
    """Stands in for the policy: ``save_pretrained`` writes which step's weights these are."""

    def __init__(self) -> None:
        self.step = 0

    def save_pretrained(self, path: Path) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)
        (Path(path) / "weights.txt").write_text(str(self.step), encoding="utf-8")


class NoTokenizer:
    def save_pretrained(self, path: Path) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)


def scores(passed: dict[str, bool]) -> list[EvalScore]:
    verdicts = tuple(
        EvalVerdict(criterion_id=c, kind="specific", passed=p) for c, p in passed.items()
    )
    value = sum(passed.values()) / len(passed)
    return [
        EvalScore(
            system="grpo",
            instance_id=INSTANCE.id,
            sample=0,
            value=value,
            words=4,
            verdicts=verdicts,
        )
    ]


def evaluation(train: dict[str, bool], watch: dict[str, bool]) -> Evaluation:
    """Both judges' scripted verdicts on the one held-out answer, and their means."""
    train_scores, watch_scores = scores(train), scores(watch)
    values = {"eval/reward": train_scores[0].value, "eval/watch_reward": watch_scores[0].value}
    return Evaluation(values, train_scores, watch_scores)


# the training judge comes to pass c1 then c2 while the watch stops passing them: hacking
SCRIPT = [
    evaluation({"p0-c1": False, "p0-c2": False, "p0-c3": True}, {"p0-c1": True, "p0-c2": True, "p0-c3": True}),
    evaluation({"p0-c1": True, "p0-c2": False, "p0-c3": True}, {"p0-c1": False, "p0-c2": True, "p0-c3": True}),
    evaluation({"p0-c1": True, "p0-c2": True, "p0-c3": True}, {"p0-c1": False, "p0-c2": False, "p0-c3": True}),
]  # fmt: skip


def tracker(stage_dir: Path, patience: int = 2) -> WatchTracker:
    return WatchTracker(
        WatchSettings(judge="offline", patience=patience),
        stage_dir,
        MetricsLog(stage_dir / "metrics.jsonl", "grpo"),
        NoTokenizer(),
        criterion_texts([INSTANCE]),
    )


def observe_script(watching: WatchTracker, model: SavingModel, steps: list[int]) -> list[Any]:
    found = []
    for step, scripted in zip(steps, SCRIPT, strict=False):
        model.step = step
        found.append(watching.observe(step, scripted, model))
    return found


def test_the_alarm_fires_names_the_criteria_and_best_is_the_watch_peak(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    stage = tmp_path / "1-grpo"
    watching = tracker(stage)
    caplog.set_level(logging.WARNING, logger="papergym.train")
    found = observe_script(watching, SavingModel(), [5, 10, 15])
    assert found[:2] == [None, None]  # two changes are needed (patience 2)
    alarm = found[2]
    assert alarm is not None
    assert [g.criterion for g in alarm.criteria] == [f"{INSTANCE.id}/p0-c1", f"{INSTANCE.id}/p0-c2"]
    # the log line says it and names the criteria, with their text
    (line,) = [r.getMessage() for r in caplog.records]
    assert "1-grpo" in line and "steps 5-15" in line and "routes queries" in line
    # the metrics record carries the same, with the criteria's text
    records = watching.metrics.read()
    (record,) = [r for r in records if r.get("alarm") == "divergence"]
    assert record["step"] == 15 and record["first_step"] == 5
    assert record["criteria"][0]["gap"] == 2.0
    assert record["criteria"][0]["text"] == INSTANCE.rubric.specific[0].text
    # best/ holds the weights of the watch's peak (step 5), with its pointer file
    assert (stage / BEST_DIR / "weights.txt").read_text(encoding="utf-8") == "5"
    assert read_best(stage) == {"step": 5, "watch": 1.0, "train": pytest.approx(1 / 3)}
    assert len((stage / WATCH_FILE).read_text(encoding="utf-8").splitlines()) == 3
    summary = watch_summary(stage, records)["watch"]
    assert summary["evaluations"] == 3
    assert [a["step"] for a in summary["alarms"]] == [15]
    assert summary["best"]["step"] == 5 and summary["best"]["path"] == str(stage / BEST_DIR)


def test_no_alarm_while_the_watch_agrees(tmp_path: Path) -> None:
    watching = tracker(tmp_path / "1-opsd", patience=1)
    up = [
        evaluation({"p0-c1": False}, {"p0-c1": False}),
        evaluation({"p0-c1": True}, {"p0-c1": True}),
    ]
    model = SavingModel()
    assert [watching.observe(step, e, model) for step, e in zip((1, 2), up, strict=True)] == [
        None,
        None,
    ]
    assert read_best(tmp_path / "1-opsd") == {"step": 2, "watch": 1.0, "train": 1.0}
    assert watch_summary(tmp_path / "1-opsd", watching.metrics.read())["watch"]["alarms"] == []


def test_a_resume_drops_the_evaluations_it_repeats_and_a_best_from_them(tmp_path: Path) -> None:
    stage = tmp_path / "1-grpo"
    model = SavingModel()
    first = tracker(stage)
    for step, scripted in ((5, SCRIPT[1]), (10, SCRIPT[0])):  # the watch: 2/3, then 1
        model.step = step
        first.observe(step, scripted, model)
    assert read_best(stage) == {"step": 10, "watch": 1.0, "train": pytest.approx(1 / 3)}
    # killed after step 10's evaluation, resumed from checkpoint-5: step 10 is evaluated again
    # on another timeline where the watch fell. The old step 10 leaves watch.jsonl, and best/
    # (from it) is removed rather than kept as if still true: step 5's weights are not on disk
    model.step = 100
    tracker(stage).observe(10, SCRIPT[2], model)
    steps = [json.loads(line)["step"] for line in (stage / WATCH_FILE).read_text().splitlines()]
    assert steps == [5, 10]
    assert read_best(stage) is None and not (stage / BEST_DIR).exists()
    # resumed again, the watch peaks at 10: best/ is written from the weights in memory
    tracker(stage).observe(10, SCRIPT[0], model)
    assert read_best(stage) == {"step": 10, "watch": 1.0, "train": pytest.approx(1 / 3)}
    assert (stage / BEST_DIR / "weights.txt").read_text(encoding="utf-8") == "100"


def test_record_evaluation_writes_both_means_then_watches(tmp_path: Path) -> None:
    class Scripted:
        def run(self, model: Any) -> Evaluation:
            return SCRIPT[0]

    stage = tmp_path / "1-grpo"
    watching = tracker(stage)
    values = record_evaluation(Scripted(), watching, watching.metrics, 3, SavingModel())  # type: ignore[arg-type]
    (record,) = watching.metrics.read()
    assert record["step"] == 3 and record["eval/watch_reward"] == 1.0 == values["eval/watch_reward"]
    assert (stage / WATCH_FILE).is_file() and read_best(stage) is not None


def config(**sections: Any) -> TrainConfig:
    return TrainConfig.model_validate({"reward": {"judge": "offline"}, **sections})


def test_the_watch_is_the_reward_section_with_its_keys_replaced(tmp_path: Path) -> None:
    calibration = tmp_path / "cal.json"
    section = watch_section(
        RewardSection(judge="offline", alpha=0.6),
        WatchSettings(judge="llm", calibration=calibration),
    )
    assert (section.judge, section.alpha, section.calibration) == ("llm", 0.6, calibration)
    assert build_watch(config()) is None  # watch.judge defaults to none
    watch = build_watch(config(watch={"judge": "offline", "alpha": 0.5}))
    assert watch is not None and isinstance(watch.judge, OfflineJudge) and watch.alpha == 0.5


def test_a_watch_that_judges_as_the_reward_does_is_refused() -> None:
    with pytest.raises(BadInputError, match="judges exactly as the training reward"):
        build_watch(config(watch={"judge": "offline"}))
    # reward.judge auto resolves to offline without an LLM: still the same judge
    auto = TrainConfig.model_validate({"watch": {"judge": "offline"}})
    with pytest.raises(BadInputError, match=r"watch\.judge=offline"):
        build_watch(auto)
