"""A real tiny GRPO run whose reward can be hacked on purpose: the training judge pays for a
repeated keyword, the watch judge penalises it. The alarm fires, names the criteria that drive
the gap, and ``best/`` holds the weights of the watch's peak. Slow (minutes on a busy CPU)."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from train_samples import sample_rows

from papergym.records import Instance, Verdict
from papergym.reward.reward import RubricReward
from papergym.settings.train import StageName, TrainConfig
from papergym.train.run import StageContext
from papergym.train.watch import BEST_DIR, WATCH_FILE, read_best

pytestmark = pytest.mark.slow

KEYWORD = "e"
"""A letter the tiny model writes now and then: the group rewards vary, so GRPO can learn it."""


def keyword_count(answer: str) -> int:
    return answer.count(KEYWORD)


class KeywordJudge:
    """Hackable: criterion ``rank`` is met once the keyword appears 2·rank times."""

    name = "keyword"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        count = keyword_count(answer)
        return [
            Verdict(criterion_id=c.id, passed=count >= 2 * (c.rank or 1))
            for c in instance.rubric.specific
        ], []


class PlainJudge:
    """The watch: the same criteria, failed by an answer that leans on the keyword."""

    name = "plain"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        count = keyword_count(answer)
        return [
            Verdict(criterion_id=c.id, passed=count < 2 * (c.rank or 1))
            for c in instance.rubric.specific
        ], []


def context(tmp_path: Path, tiny_model: Path, stage: StageName, **sections: Any) -> StageContext:
    rows = sample_rows(4)
    config = TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "stages": [stage],
            "model": {"name_or_path": str(tiny_model), "dtype": "float32"},
            "lora": {"enabled": False},
            "eval": {"steps": 1, "max_tokens": 24, "resamples": 20},
            "watch": {"judge": "offline", "patience": 2},
            **sections,
        }
    )
    # the held-out questions are the training ones: what matters is that both judges score them
    stage_dir = tmp_path / "run" / f"1-{stage}"
    return StageContext(config, stage, stage_dir, str(tiny_model), {"train": rows, "test": rows})


def test_a_hacked_grpo_reward_sets_off_the_alarm(tmp_path: Path, tiny_model: Path) -> None:
    from papergym.train.grpo import run_grpo

    grpo = {
        "steps": 4,
        "num_generations": 4,
        "prompts_per_step": 2,
        "max_completion_length": 8,
        "learning_rate": 1e-2,
        "beta": 0.0,
        "save_every": 100,
    }
    ctx = context(tmp_path, tiny_model, "grpo", grpo=grpo)
    summary = run_grpo(ctx, reward=RubricReward(KeywordJudge()), watch=RubricReward(PlainJudge()))
    records = ctx.metrics.read()
    evals = {r["step"]: r for r in records if "eval/watch_reward" in r}
    assert sorted(evals) == [1, 2, 3, 4]  # both judges logged at every evaluation
    alarms = [r for r in records if r.get("alarm") == "divergence"]
    assert alarms, (
        f"no alarm: {[(s, r['eval/reward'], r['eval/watch_reward']) for s, r in evals.items()]}"
    )
    alarm = alarms[0]
    window = range(alarm["first_step"], alarm["last_step"] + 1)
    assert len(window) == 3
    for before, after in pairwise(window):  # rose, while the watch fell
        assert evals[after]["eval/reward"] > evals[before]["eval/reward"]
        assert evals[after]["eval/watch_reward"] < evals[before]["eval/watch_reward"]
    named = alarm["criteria"]
    assert named and all(c["gap"] > 0 and c["text"].startswith("The plan") for c in named)
    assert [c["gap"] for c in named] == sorted((c["gap"] for c in named), reverse=True)
    # best/ is the watch's (earliest) peak, a loadable model folder
    peak = max(r["eval/watch_reward"] for r in evals.values())
    first_peak = min(s for s, r in evals.items() if r["eval/watch_reward"] == peak)
    best = read_best(ctx.stage_dir)
    assert best is not None and best["step"] == first_peak and best["watch"] == peak
    assert (ctx.stage_dir / BEST_DIR / "config.json").is_file()
    assert summary["watch"]["alarms"][0]["last_step"] == alarm["last_step"]
    assert summary["watch"]["best"]["step"] == first_peak
    lines = (ctx.stage_dir / WATCH_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1, 2, 3, 4]


def test_opsd_logs_the_watch_at_every_evaluation(tmp_path: Path, tiny_model: Path) -> None:
    from papergym.train.opsd import run_opsd

    opsd = {"steps": 2, "batch_size": 2, "micro_batch_size": 2, "max_new_tokens": 4}
    ctx = context(tmp_path, tiny_model, "opsd", opsd=opsd, reward={"judge": "offline"})
    summary = run_opsd(ctx, watch=RubricReward(PlainJudge()))
    evals = [r for r in ctx.metrics.read() if "eval/reward" in r]
    assert [r["step"] for r in evals] == [1, 2]
    assert all("eval/watch_reward" in r and "eval/watch_unscored" in r for r in evals)
    assert summary["watch"]["evaluations"] == 2
    assert summary["watch"]["best"] is not None or all(
        r["eval/watch_reward"] is None for r in evals
    )
