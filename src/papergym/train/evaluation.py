"""Evaluation during and after training, on the build's held-out split (``data.test_fraction``).

**During a stage** (``eval.steps``): every N optimiser steps, :class:`StepEvaluator` answers the
held-out questions greedily with the policy *in memory* (the chat template and the prompts
training uses, no reload from disk), scores the answers with the rubric reward the GRPO stage
uses (``make_reward(config.reward, config.llm)``) and returns the ``eval/*`` values one
metrics record carries: the mean reward with its bootstrap interval, the specific and general
parts, unscored answers and answer length. An answer cut at ``eval.max_tokens`` is unscored,
never 0, as in ``papergym eval``. Generation, scoring and statistics are ``papergym eval``'s
own functions.

**After the run** (``eval.final``): :func:`evaluate_run` runs ``papergym eval`` on the base
model and each stage's ``final/`` model into ``RUN/eval/`` (answers, scores, summary with the
paired differences between stages), resumable like any eval folder.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from papergym.errors import BadInputError
from papergym.eval.data import EvalData
from papergym.eval.evaluate import eval_score, messages_for, unscored_answer
from papergym.eval.records import SUMMARY_FILE, EvalAnswer, EvalScore, EvalSummary, EvalSystem
from papergym.eval.run import PLAN_FILE, check_plan, eval_plan, run_eval
from papergym.eval.summary import Bootstrap, system_summary
from papergym.eval.systems import ResolvedSystem
from papergym.llm.config import BackendConfig
from papergym.llm.hf_backend import (
    GenerationSettings,
    LoadedModel,
    generate_batch,
    prompt_token_ids,
)
from papergym.llm.types import SamplingParams
from papergym.llm.usage import UsageTracker
from papergym.records import Instance, Rubric, source_kind_of
from papergym.reward import runtime
from papergym.reward.factory import make_reward
from papergym.reward.reward import RubricReward
from papergym.train.config import TrainConfig, config_yaml
from papergym.train.tokens import stop_token_ids

EVAL_DIR = "eval"
"""The run folder's sub-folder the final evaluation writes."""
BASE = "base"
"""The system name of the model the first stage started from."""
GENERATION_BATCH = 8
"""Held-out prompts per ``generate`` call during training."""


def held_out_instances(rows: Sequence[dict[str, Any]]) -> list[Instance]:
    """The held-out TRL rows as Instances: what the reward scores (the rows carry the rubric)."""
    return [
        Instance(
            id=row["instance_id"],
            recipe=row.get("recipe") or "papergym",
            builder="llm",
            # a TRL row carries only its recipe: ARES rows are judged as documents, not plans
            source_kind=source_kind_of(row.get("recipe")),
            paper_id=row.get("paper_id") or "",
            domain=row.get("domain") or "",  # rows exported before the column read as ""
            question=row["question"],
            reference_answer=row["reference"],
            rubric=Rubric.model_validate_json(row["rubric"]),
        )
        for row in rows
    ]


def step_question_limit(config: TrainConfig) -> int | None:
    return config.eval.step_questions or config.eval.limit


@dataclass(frozen=True)
class Evaluation:
    """One held-out evaluation: its ``eval/*`` values and each judge's scores of the answers."""

    values: dict[str, Any]
    scores: list[EvalScore]
    watch_scores: list[EvalScore] | None


@dataclass
class StepEvaluator:
    """Greedy answers to the held-out questions from a model in memory, scored."""

    name: str
    instances: list[Instance]
    tokenizer: Any
    reward: RubricReward
    max_tokens: int
    system_prompt: str | None
    boot: Bootstrap
    watch: RubricReward | None = None
    """The watch judge (``watch``): scores the same answers, for the divergence alarm."""

    def evaluate(self, model: Any) -> dict[str, Any]:
        """The ``eval/*`` values of ``model`` now; the model's train/eval mode is restored."""
        return self.run(model).values

    def run(self, model: Any) -> Evaluation:
        """The answers' scores by the reward (and by the watch, when there is one) and the
        ``eval/*`` values of them: ``eval/watch_*`` are the watch's, on the same answers."""
        started = time.perf_counter()
        answers = self.answers(model)
        scores = self.score(answers)
        values = self.values(scores)
        watch_scores = None
        if self.watch is not None:
            watch_scores = self.score(answers, self.watch)
            watched = self.values(watch_scores)
            values |= {
                "eval/watch_reward": watched["eval/reward"],
                "eval/watch_reward_low": watched["eval/reward_low"],
                "eval/watch_reward_high": watched["eval/reward_high"],
                "eval/watch_unscored": watched["eval/unscored"],
            }
        values["eval/seconds"] = round(time.perf_counter() - started, 2)
        return Evaluation(values, scores, watch_scores)

    def values(self, scores: Sequence[EvalScore]) -> dict[str, Any]:
        """The ``eval/*`` statistics of one judge's scores of the held-out answers."""
        summary = system_summary(
            EvalSystem(name=self.name, spec=self.name, kind="model", model=self.name),
            scores,
            self.boot,
        )
        return {
            "eval/reward": summary.reward.value,
            "eval/reward_low": summary.reward.low,
            "eval/reward_high": summary.reward.high,
            "eval/specific": summary.specific.value,
            "eval/general": summary.general.value,
            "eval/unscored": summary.unscored,
            "eval/unbacked_rate": summary.unbacked_rate,
            "eval/words": summary.words.value,
            "eval/questions": len(self.instances),
        }

    def answers(self, model: Any) -> list[EvalAnswer]:
        """One greedy answer per question, generated as the hf backend of ``papergym eval``
        does (same chat template, prompt and stop tokens), on the weights being trained."""
        loaded = LoadedModel(
            tokenizer=self.tokenizer,
            model=model,
            eos_ids=frozenset(stop_token_ids(model, self.tokenizer)),
            pad_id=int(self.tokenizer.pad_token_id),
        )
        settings = GenerationSettings.of(
            SamplingParams(temperature=0.0, max_tokens=self.max_tokens)
        )
        prompts = [
            prompt_token_ids(self.tokenizer, messages_for(i, self.system_prompt), None)
            for i in self.instances
        ]
        was_training = model.training
        model.train(False)  # no dropout in the answers
        try:
            completions = [
                row[0]
                for start in range(0, len(prompts), GENERATION_BATCH)
                for row in generate_batch(
                    loaded, prompts[start : start + GENERATION_BATCH], settings
                )
            ]
        finally:
            model.train(was_training)
        return [
            EvalAnswer(
                system=self.name,
                instance_id=instance.id,
                sample=0,
                answer=c.text,
                words=len(c.text.split()),
                finish_reason=c.finish_reason,
                error=f"answer cut at max_tokens={self.max_tokens}"
                if c.finish_reason == "length"
                else None,
            )
            for instance, c in zip(self.instances, completions, strict=True)
        ]

    def score(
        self, answers: Sequence[EvalAnswer], reward: RubricReward | None = None
    ) -> list[EvalScore]:
        """Each answer's score by ``reward`` (default: the training reward); a cut answer is
        unscored, never 0."""
        reward = reward or self.reward
        by_id = {i.id: i for i in self.instances}
        judged = [a for a in answers if a.error is None]
        pairs = [(by_id[a.instance_id], a.answer) for a in judged]
        scores = iter(runtime.run(reward.ascore_many(pairs)))
        return [
            unscored_answer(a, reward.judge.name)
            if a.error is not None
            else eval_score(a, by_id[a.instance_id], next(scores))
            for a in answers
        ]


def step_evaluator(
    config: TrainConfig,
    name: str,
    rows: dict[str, list[dict[str, Any]]],
    tokenizer: Any,
    reward: RubricReward | None = None,
    watch: RubricReward | None = None,
) -> StepEvaluator | None:
    """The stage's evaluator, or None when ``eval.steps`` is off or nothing is held out;
    ``watch`` (when given) scores its answers too."""
    held_out = rows.get("test") or []
    if not config.eval.steps or not held_out:
        return None
    limit = step_question_limit(config)
    e = config.eval
    return StepEvaluator(
        name=name,
        instances=held_out_instances(held_out[:limit] if limit else held_out),
        tokenizer=tokenizer,
        reward=reward or make_reward(config.reward, config.llm),
        max_tokens=e.max_tokens,
        system_prompt=config.data.system_prompt,
        boot=Bootstrap(resamples=e.resamples, level=e.level, seed=e.seed),
        watch=watch,
    )


def should_evaluate(step: int, every: int | None) -> bool:
    """Whether the step just finished is one ``eval.steps`` asks for."""
    return every is not None and every > 0 and step > 0 and step % every == 0


# -- after the run -----------------------------------------------------------------------------


def _system(name: str, model: str, config: TrainConfig) -> ResolvedSystem:
    backend = BackendConfig(backend="hf", model=model, dtype=config.model.dtype)
    record = EvalSystem(name=name, spec=model, kind="model", model=model)
    return ResolvedSystem(record, backend, config.data.system_prompt)


def run_systems(config: TrainConfig, result: dict[str, Any]) -> list[ResolvedSystem]:
    """The base model, then each stage's final model, named by its stage folder (1-opsd...):
    each stage starts from the one before, so the names read as the run's path."""
    stages = result["stages"]
    systems = [_system(BASE, str(stages[0]["init_model"]), config)]
    systems += [
        _system(Path(s["final_model"]).parent.name, str(s["final_model"]), config) for s in stages
    ]
    return systems


@dataclass(frozen=True)
class RunEval:
    """What the final evaluation left: its folder, summary and endpoint failures."""

    out: Path
    summary: EvalSummary | None
    failures: list[str]
    tracker: UsageTracker


def evaluate_run(config: TrainConfig, result: dict[str, Any], held_out: list[Instance]) -> RunEval:
    """``papergym eval`` of the run's base model and stage finals on ``held_out``, in
    ``RUN/eval/``; a finished evaluation of the same plan is read back, not redone."""
    from papergym.train.data import instances_path

    out = Path(result["run_dir"]) / EVAL_DIR
    limit = config.eval.limit
    assert config.data.build_dir is not None  # training read it
    data = EvalData(
        path=instances_path(config.data.build_dir),
        format="instances",
        split="test",
        instances=held_out[:limit] if limit else held_out,
    )
    # The run folder's answers.jsonl is the resume log; the response cache is off for the
    # answers, since a model path (a retrained run) can hold other weights next time.
    settings = config.model_copy(update={"llm": config.llm.model_copy(update={"cache": False})})
    systems = run_systems(config, result)
    reward = make_reward(config.reward, config.llm)
    plan = eval_plan(config.eval, config.reward, data, systems, reward.judge.name)
    summary_path = out / SUMMARY_FILE
    plan_path = out / PLAN_FILE
    finished = summary_path.is_file() and plan_path.is_file()
    if finished and json.loads(plan_path.read_text(encoding="utf-8")) == plan:
        summary = EvalSummary.model_validate_json(summary_path.read_text(encoding="utf-8"))
        return RunEval(out, summary, [], UsageTracker(prices=dict(config.llm.prices)))
    try:
        check_plan(out, plan)
    except BadInputError as error:  # eval's advice (another -o) would retrain: say what helps
        reason = error.reason.removesuffix("; use another -o")
        raise BadInputError(
            out, f"{reason}; remove that folder or set eval.final=false to keep it"
        ) from None
    evaluated = run_eval(
        data,
        systems,
        out,
        section=settings.eval,
        reward=settings.reward,
        llm=settings.llm,
        config_yaml=config_yaml(settings),
        data_label=str(config.data.build_dir),
        scorer=reward,
    )
    return RunEval(out, evaluated.summary, evaluated.failures, evaluated.usage)


def eval_values(summary: EvalSummary) -> dict[str, Any]:
    """Per system, the mean reward with its interval: what ``--json`` shows of the eval."""
    return {s.system.name: s.reward.model_dump(mode="json") for s in summary.systems}


def free_memory() -> None:
    """Training's model is gone by now; give its GPU memory back before the eval loads."""
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
