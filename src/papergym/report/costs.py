"""Cost, tokens and latency per system of an eval folder, the judge's included: from the
answers' own records (``answers.jsonl``) and the judge's calls per system
(``judge_usage.jsonl``). An unpriced model's cost is said to be unpriced, never $0; a folder
written before these were recorded says so."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from papergym.eval import records as er
from papergym.report.parts import EvalDir, Table

NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class SystemCost:
    """One system's answers and judge calls, totalled."""

    system: str
    answers: int
    recorded: int  # answers with tokens recorded
    cached: int
    prompt_tokens: int
    completion_tokens: int
    latencies: tuple[float, ...]  # answers that were asked (not from the cache)
    answer_cost: float | None  # None: some answer unpriced
    judge: er.EvalJudgeUsage | None  # None: no judge usage recorded for it


def money(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def _judge_total(system: str, lines: Sequence[er.EvalJudgeUsage]) -> er.EvalJudgeUsage | None:
    """The judge's usage for ``system`` summed over runs; None when no run recorded any."""
    mine = [line for line in lines if line.system == system]
    if not mine:
        return None
    costs = [line.cost_usd for line in mine]
    return er.EvalJudgeUsage(
        system=system,
        answers=sum(line.answers for line in mine),
        calls=sum(line.calls for line in mine),
        cache_hits=sum(line.cache_hits for line in mine),
        prompt_tokens=sum(line.prompt_tokens for line in mine),
        completion_tokens=sum(line.completion_tokens for line in mine),
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
    )


def system_costs(directory: EvalDir) -> list[SystemCost]:
    """Each system's totals, in the summary's order."""
    costs = []
    for summary in directory.summary.systems:
        name = summary.system.name
        answers = [a for a in directory.answers if a.system == name]
        recorded = [a for a in answers if a.completion_tokens is not None]
        priced = [a.cost_usd for a in recorded]
        costs.append(
            SystemCost(
                system=name,
                answers=len(answers),
                recorded=len(recorded),
                cached=sum(a.cached for a in recorded),
                prompt_tokens=sum(a.prompt_tokens or 0 for a in recorded),
                completion_tokens=sum(a.completion_tokens or 0 for a in recorded),
                latencies=tuple(
                    a.latency_s for a in recorded if a.latency_s is not None and not a.cached
                ),
                answer_cost=None
                if not recorded or any(c is None for c in priced)
                else sum(c for c in priced if c is not None),
                judge=_judge_total(name, directory.judge_usage),
            )
        )
    return costs


def _latency_text(latencies: Sequence[float]) -> str:
    if not latencies:
        return "n/a (n=0)"
    mean = statistics.fmean(latencies)
    return f"{mean:.2f} / {statistics.median(latencies):.2f} n={len(latencies)}"


def _answer_cells(cost: SystemCost) -> list[str]:
    if not cost.recorded:
        return [NOT_RECORDED] * 4
    mean = cost.completion_tokens / max(cost.recorded - cost.cached, 1)
    return [
        f"{cost.completion_tokens:,} ({mean:,.0f} per answer asked)",
        f"{cost.prompt_tokens:,}",
        _latency_text(cost.latencies),
        money(cost.answer_cost),
    ]


def _judge_cells(judge: er.EvalJudgeUsage | None) -> list[str]:
    if judge is None:
        return [NOT_RECORDED] * 3
    return [
        f"{judge.calls:,} ({judge.cache_hits:,} from cache)",
        f"{judge.prompt_tokens + judge.completion_tokens:,} "
        f"({judge.prompt_tokens:,} in, {judge.completion_tokens:,} out)",
        money(judge.cost_usd),
    ]


def _total(cost: SystemCost) -> str:
    if not cost.recorded or cost.judge is None:
        return money(cost.answer_cost) if cost.recorded else NOT_RECORDED
    if cost.answer_cost is None or cost.judge.cost_usd is None:
        return "unpriced"
    return money(cost.answer_cost + cost.judge.cost_usd)


def cost_table(directory: EvalDir) -> Table:
    """Tokens, latency and cost per system, the judge's calls for its answers beside them."""
    rows = [
        [
            cost.system,
            f"{cost.answers} ({cost.cached} from cache)",
            *_answer_cells(cost),
            *_judge_cells(cost.judge),
            _total(cost),
        ]
        for cost in system_costs(directory)
    ]
    return Table(
        "Cost, tokens and latency",
        [
            "system",
            "answers",
            "answer tokens",
            "prompt tokens",
            "latency s (mean / median)",
            "answers' cost",
            "judge calls",
            "judge tokens",
            "judge cost",
            "total cost",
        ],
        rows,
        note="Tokens are those sent to and returned by the endpoint (an answer from the response "
        "cache costs none). Latency is per answer asked, from request to the whole answer, "
        "with n the answers behind it. Unpriced: a model without a price in the LLM config; "
        f"{NOT_RECORDED}: a folder from an older papergym, or an offline judge (no calls).",
    )
