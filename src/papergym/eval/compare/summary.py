"""Compare's numbers from its verdicts: win / tie / loss rates with bootstrap intervals over
questions, position bias, Fleiss' κ between judges, and the summary that holds them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from papergym import __version__
from papergym.eval.compare.orderings import Design, labels
from papergym.eval.compare.records import (
    CRITERIA,
    TIE,
    Agreement,
    CompareCriterion,
    CompareSummary,
    CompareVerdict,
    CriterionResult,
    PositionBias,
    SystemRates,
)
from papergym.eval.compare.settings import CompareSection
from papergym.eval.stats import bootstrap_ratio, fleiss_kappa


def _by_question(
    verdicts: Iterable[CompareVerdict], questions: Sequence[str]
) -> dict[str, list[CompareVerdict]]:
    grouped: dict[str, list[CompareVerdict]] = {q: [] for q in questions}
    for verdict in verdicts:
        grouped.setdefault(verdict.instance_id, []).append(verdict)
    return grouped


def _position_bias(
    grouped: dict[str, list[CompareVerdict]],
    criterion: CompareCriterion,
    count: int,
    resamples: int,
    seed: int,
) -> PositionBias:
    firsts: list[float] = []
    decisive: list[float] = []
    by_label: Counter[str] = Counter()
    for verdicts in grouped.values():
        picks = [v.picks[criterion] for v in verdicts if v.picks is not None]
        chosen = [p.label for p in picks if p.label != TIE]
        by_label.update(chosen)
        firsts.append(float(sum(label == "A" for label in chosen)))
        decisive.append(float(len(chosen)))
    total = int(sum(decisive))
    return PositionBias(
        first=bootstrap_ratio(firsts, decisive, resamples=resamples, seed=seed),
        expected=1.0 / count,
        by_position={
            label: (by_label[label] / total if total else None) for label in labels(count)
        },
        decisive=total,
    )


def _system_rates(
    grouped: dict[str, list[CompareVerdict]],
    criterion: CompareCriterion,
    system: str,
    resamples: int,
    seed: int,
) -> SystemRates:
    wins: list[float] = []
    ties: list[float] = []
    losses: list[float] = []
    parsed: list[float] = []
    for verdicts in grouped.values():
        picks = [v.picks[criterion].system for v in verdicts if v.picks is not None]
        wins.append(float(picks.count(system)))
        ties.append(float(picks.count(TIE)))
        losses.append(float(len(picks) - picks.count(system) - picks.count(TIE)))
        parsed.append(float(len(picks)))

    def rate(counts: list[float]) -> Any:
        # the same seed for each: the three rates come from the same resampled questions
        return bootstrap_ratio(counts, parsed, resamples=resamples, seed=seed)

    return SystemRates(
        system=system,
        wins=int(sum(wins)),
        ties=int(sum(ties)),
        losses=int(sum(losses)),
        win=rate(wins),
        tie=rate(ties),
        loss=rate(losses),
    )


def criterion_result(
    verdicts: Sequence[CompareVerdict],
    criterion: CompareCriterion,
    *,
    systems: Sequence[str],
    questions: Sequence[str],
    judges: Sequence[str],
    resamples: int,
    seed: int,
) -> CriterionResult:
    """Rates and position bias on one criterion, from every verdict given."""
    grouped = _by_question(verdicts, questions)
    parsed = sum(v.parsed for v in verdicts)
    by_judge: dict[str, PositionBias] = {}
    if len(judges) > 1:
        for judge in judges:
            own = _by_question((v for v in verdicts if v.judge == judge), questions)
            by_judge[judge] = _position_bias(own, criterion, len(systems), resamples, seed)
    return CriterionResult(
        criterion=criterion,
        verdicts=len(verdicts),
        parsed=parsed,
        unparsed=len(verdicts) - parsed,
        systems=tuple(_system_rates(grouped, criterion, s, resamples, seed) for s in systems),
        position_bias=_position_bias(grouped, criterion, len(systems), resamples, seed),
        position_bias_by_judge=by_judge,
    )


def agreement(
    verdicts: Sequence[CompareVerdict],
    criterion: CompareCriterion,
    *,
    systems: Sequence[str],
    judges: Sequence[str],
) -> Agreement:
    """Fleiss' κ of ``judges`` on one criterion; items are question × ordering, categories
    the systems and the tie. An item any judge has no parsed verdict on is excluded."""
    categories = [*systems, TIE]
    items: dict[tuple[str, tuple[str, ...]], dict[str, str | None]] = {}
    for verdict in verdicts:
        pick = verdict.picks[criterion].system if verdict.picks is not None else None
        items.setdefault((verdict.instance_id, verdict.ordering), {})[verdict.judge] = pick
    rows: list[list[int]] = []
    excluded = 0
    for ratings in items.values():
        picks = [ratings.get(judge) for judge in judges]
        if any(p is None for p in picks):
            excluded += 1
            continue
        rows.append([picks.count(category) for category in categories])
    kappa = fleiss_kappa(rows)
    return Agreement(
        criterion=criterion,
        kappa=kappa.kappa,
        observed=kappa.observed,
        expected=kappa.expected,
        items=len(rows),
        excluded=excluded,
        judges=len(judges),
    )


def _reason_kind(reason: str) -> str:
    """An unparsed reason without its last details (a parser's line and column), so that
    verdicts that failed the same way are counted together."""
    return ": ".join(reason.split(": ")[:5])


def summarise(
    verdicts: Sequence[CompareVerdict],
    *,
    folders: Sequence[Path],
    data_id: str,
    systems: Sequence[str],
    judges: Sequence[str],
    questions: Sequence[str],
    kind: Design,
    orderings: Sequence[tuple[str, ...]],
    section: CompareSection,
    judge_models: dict[str, str] | None = None,
    usage: Sequence[dict[str, object]] = (),
) -> CompareSummary:
    """The summary of a finished comparison."""
    parsed = sum(v.parsed for v in verdicts)
    reasons = Counter(_reason_kind(v.unparsed_reason or "") for v in verdicts if not v.parsed)
    return CompareSummary(
        version=__version__,
        eval_dirs=tuple(str(f) for f in folders),
        data_id=data_id,
        systems=tuple(systems),
        judges=tuple(judges),
        judge_models=judge_models or {},
        reference_shown=section.reference,
        design=kind,
        orderings=tuple(orderings),
        questions=len(questions),
        verdicts=len(verdicts),
        parsed=parsed,
        unparsed=len(verdicts) - parsed,
        unparsed_reasons=dict(reasons),
        resamples=section.resamples,
        seed=section.seed,
        criteria=tuple(
            criterion_result(
                verdicts,
                c,
                systems=systems,
                questions=questions,
                judges=judges,
                resamples=section.resamples,
                seed=section.seed,
            )
            for c in CRITERIA
        ),
        agreement=tuple(agreement(verdicts, c, systems=systems, judges=judges) for c in CRITERIA)
        if len(judges) > 1
        else (),
        usage=tuple(usage),
    )
