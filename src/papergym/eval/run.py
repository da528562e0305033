"""``papergym eval`` as a function: answers from each system on a build's questions, scored by
the rubric reward, summarised with bootstrap intervals.

:func:`run_eval` takes the sections it uses (``eval``, ``reward``, ``llm``), the loaded data
and the resolved systems, and returns an :class:`EvalResult`; ``papergym eval``
(:mod:`papergym.cli.eval`) parses its options and prints the result, and ``papergym train``
evaluates its stages with it. Everything is checked before the folder appears; an interrupted
run resumes from ``answers.jsonl`` and ``scores.jsonl``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym import __version__
from papergym.errors import BadInputError
from papergym.eval.benchmark import protocol_note, rule_for
from papergym.eval.data import EvalData
from papergym.eval.evaluate import (
    Key,
    Progress,
    eval_question,
    eval_reward,
    generate,
    judge_tracker,
    score_by_system,
    system_client,
)
from papergym.eval.log import RecordLog
from papergym.eval.records import (
    ANSWERS_FILE,
    CONFIG_FILE,
    JUDGE_USAGE_FILE,
    QUESTIONS_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    EvalAnswer,
    EvalJudgeUsage,
    EvalScore,
    EvalSummary,
)
from papergym.eval.settings import EvalSection
from papergym.eval.summary import Bootstrap, alphas_used, summarise
from papergym.eval.systems import ResolvedSystem
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.identity import identity_text
from papergym.llm.types import LLMError, SamplingParams
from papergym.llm.usage import UsageTracker
from papergym.redact import redact
from papergym.reward.reward import RubricReward, judge_never_answered
from papergym.reward.settings import RewardSection
from papergym.runfolder import RunRecord, merged_identity, refuse_foreign

PLAN_FILE = "plan.json"
"""What the answers and scores in a folder depend on; a re-run resumes only when it matches."""

PLAN = RunRecord(PLAN_FILE, "eval", hint="use another -o")
"""An eval folder's record: its plan, written first (so it also marks the folder as eval's)."""


@dataclass(frozen=True)
class EvalResult:
    """What an eval left: its scores, the answers that could not be generated (the same call
    finishes them), the summary written (None while answers are missing) and the LLM calls."""

    out: Path
    scores: list[EvalScore]
    failures: list[str]
    summary: EvalSummary | None
    usage: UsageTracker
    """The systems' calls."""
    judge_usage: UsageTracker | None
    """The LLM judge's calls (its own tracker, under its own budget); None offline."""


def _holds_plan(out: Path) -> bool:
    plan = out / PLAN_FILE
    try:
        recorded = json.loads(plan.read_text(encoding="utf-8")) if plan.is_file() else None
    except (ValueError, OSError):
        recorded = None
    return isinstance(recorded, dict) and "data_id" in recorded


def refuse_foreign_folder(out: Path) -> None:
    """``out`` must be new, empty, or an eval folder (its plan.json, written first, says so):
    eval writes config.yaml and summary.json, and another command's folder has its own."""
    refuse_foreign(out, PLAN, ours=_holds_plan)


def eval_plan(
    section: EvalSection,
    reward: RewardSection,
    data: EvalData,
    systems: Sequence[ResolvedSystem],
    judge: str,
    *,
    judge_backend: str | None = None,
) -> dict[str, Any]:
    """What a folder's answers and verdicts depend on. A system is recorded by where it is
    served (an endpoint's normalised URL, a local model's weights), not its model name alone:
    one name behind another server, or new weights in the same folder, is another system, and
    resuming would mix its answers with the old ones. ``judge_backend`` is the LLM judge's, in
    the same form (None for the offline judge)."""
    plan: dict[str, Any] = {
        "data_id": data.data_id,
        "samples": section.samples,
        "temperature": section.temperature,
        "top_p": section.top_p,
        "max_tokens": section.max_tokens,
        "judge": judge,
        "judge_backend": judge_backend,
        "alpha": reward.alpha,
        "normalisation": reward.normalisation,
        "systems": {s.record.name: identity_text(s.backend) for s in systems},
    }
    if (
        reward.mode != "rubric"
    ):  # generic_only's judge has rubric's name; a rubric plan is as it was
        plan["mode"] = reward.mode
    return plan


def judge_backend(reward: RubricReward) -> str | None:
    """Where the reward's LLM judge is served (:func:`identity_text`); None without one."""
    llm = getattr(reward.judge, "llm", None)
    role = getattr(reward.judge, "role", None)
    if not isinstance(llm, LLMClient) or role is None:
        return None
    return identity_text(llm.config.for_role(role))


def check_plan(out: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """The plan to save: an earlier one merged with this one (the systems of both), or bad
    input naming what differs."""
    return merged_identity(out, PLAN, plan, accumulate=("systems",))


def eval_summary(
    section: EvalSection,
    alpha: float,
    loaded: EvalData,
    data: str,
    judge: str,
    systems: Sequence[ResolvedSystem],
    scores: list[EvalScore],
) -> EvalSummary:
    """``summary.json`` of ``scores``: per-system statistics and paired differences; ``data``
    is the data as the summary names it (the path given), ``alpha`` reward.alpha."""
    boot = Bootstrap(resamples=section.resamples, level=section.level, seed=section.seed)
    per_system, pairs = summarise([s.record for s in systems], scores, boot)
    rule = rule_for(section.scoring, loaded.format)
    definition, differences = protocol_note(rule)
    return EvalSummary(
        version=__version__,
        data=data,
        data_format=loaded.format,
        data_id=loaded.data_id,
        split=loaded.split,
        questions=len(loaded.instances),
        instance_ids=tuple(i.id for i in loaded.instances),
        samples=section.samples,
        temperature=section.temperature,
        max_tokens=section.max_tokens,
        judge=judge,
        alpha=alpha,
        alphas=alphas_used(scores),
        seed=section.seed,
        resamples=section.resamples,
        level=section.level,
        scoring=rule,
        scoring_definition=None if rule == "papergym" else definition,
        protocol_differences=differences,
        systems=per_system,
        pairs=pairs,
    )


async def _ping(
    systems: Sequence[ResolvedSystem], clients: Sequence[LLMClient], reward: RubricReward
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


def _latest(records: Sequence[Any]) -> dict[Key, Any]:
    return {(r.system, r.instance_id, r.sample): r for r in records}


def _start_folder(out: Path, plan: dict[str, Any], config_yaml: str, data: EvalData) -> None:
    """Every check passed: only now does the folder appear, its plan first."""
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / PLAN_FILE, json.dumps(plan, indent=1, ensure_ascii=False))
    write_text_atomic(out / CONFIG_FILE, config_yaml)
    write_jsonl(out / QUESTIONS_FILE, [eval_question(i) for i in data.instances])


@dataclass(frozen=True)
class _Wanted:
    """The records of this run among a folder's: its systems, questions and samples."""

    systems: set[str]
    ids: set[str]
    samples: int

    def kept(self, records: Sequence[Any]) -> list[Any]:
        return [
            r
            for r in _latest(records).values()
            if r.system in self.systems and r.instance_id in self.ids and r.sample < self.samples
        ]


async def _answer_all(
    systems: Sequence[ResolvedSystem],
    clients: Sequence[LLMClient],
    data: EvalData,
    section: EvalSection,
    log: RecordLog[EvalAnswer],
    progress: Progress | None,
) -> list[str]:
    """The answers not yet in ``log``, one system after another; the endpoint failures."""
    params = SamplingParams(
        temperature=section.temperature,
        top_p=section.top_p,
        max_tokens=section.max_tokens,
        seed=section.seed,
    )
    done = set(_latest(log.read()))
    failures: list[str] = []
    for system, client in zip(systems, clients, strict=True):
        failures += await generate(
            system, client, data.instances, params, section.samples, log, done, progress
        )
        await client.release()  # one local model in memory at a time, not every system's
    return failures


async def _evaluate(
    data: EvalData,
    systems: Sequence[ResolvedSystem],
    out: Path,
    section: EvalSection,
    clients: Sequence[LLMClient],
    reward: RubricReward,
    start: tuple[dict[str, Any], str],
    progress: Progress | None,
) -> tuple[list[EvalScore], list[str]]:
    """Check, start the folder, answer, score: the scores of this run and the failures."""
    plan, config_yaml = start
    await _ping(systems, clients, reward)
    _start_folder(out, check_plan(out, plan), config_yaml, data)
    answers_log = RecordLog(out / ANSWERS_FILE, EvalAnswer)
    scores_log = RecordLog(out / SCORES_FILE, EvalScore)
    failures = await _answer_all(systems, clients, data, section, answers_log, progress)
    wanted = _Wanted(
        {s.record.name for s in systems}, {i.id for i in data.instances}, section.samples
    )
    # a score whose judge never answered (its endpoint failed) is judged again
    scored = {
        k for k, s in _latest(scores_log.read()).items() if not judge_never_answered(s.verdicts)
    }
    todo = [
        a
        for a in wanted.kept(answers_log.read())
        if (a.system, a.instance_id, a.sample) not in scored
    ]
    by_id = {i.id: i for i in data.instances}
    rule = rule_for(section.scoring, data.format)
    usage_log = RecordLog(out / JUDGE_USAGE_FILE, EvalJudgeUsage)
    await score_by_system(reward, todo, by_id, (scores_log, usage_log), progress, rule)
    return wanted.kept(scores_log.read()), failures


def run_eval(
    data: EvalData,
    systems: Sequence[ResolvedSystem],
    out: Path,
    *,
    section: EvalSection,
    reward: RewardSection,
    llm: LLMConfig,
    config_yaml: str,
    data_label: str | None = None,
    scorer: RubricReward | None = None,
    progress: Progress | None = None,
) -> EvalResult:
    """Evaluate ``systems`` on ``data`` into ``out``, resuming what an earlier run left.

    ``llm`` holds the cache, prices and budget of the systems' calls and the LLM judge's
    endpoints; ``config_yaml`` is the resolved configuration saved as config.yaml;
    ``data_label`` names the data in summary.json (default: the file read); ``scorer`` is the
    rubric reward (default :func:`eval_reward` of ``reward`` and ``llm``); ``progress`` is
    called with 1 as each answer and each score is written. Bad input (a system that does not
    load, an endpoint down, a folder of other settings) raises :class:`BadInputError` before
    anything is written; answers that failed at their endpoint are returned as ``failures``,
    and no summary is written until the same call finishes them.
    """
    refuse_foreign_folder(out)
    scorer = scorer or eval_reward(reward, llm)
    plan = eval_plan(
        section, reward, data, systems, scorer.judge.name, judge_backend=judge_backend(scorer)
    )
    tracker = UsageTracker(prices=dict(llm.prices))

    async def evaluate() -> tuple[list[EvalScore], list[str]]:
        clients = [system_client(s, llm, tracker) for s in systems]
        try:
            return await _evaluate(
                data, systems, out, section, clients, scorer, (plan, config_yaml), progress
            )
        finally:
            for client in clients:
                await client.aclose()

    scores, failures = asyncio.run(evaluate())
    summary = None
    if not failures:
        label = str(data.path) if data_label is None else data_label
        summary = eval_summary(
            section, reward.alpha, data, label, scorer.judge.name, systems, scores
        )
        write_text_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=1))
    return EvalResult(out, scores, failures, summary, tracker, judge_tracker(scorer))
