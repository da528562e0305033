"""``summary.json`` from the scores: per-system statistics and paired differences.

Questions are the unit: each question's value is the mean over its scored samples, and every
interval resamples questions. Unscored answers are counted, never averaged in as 0.

Every statistic depends on the scores, not on their order: ``scores.jsonl`` lists answers as
they finished, which a resumed or concurrent run changes, so values are sorted by question
(and sample) before they are summed or resampled.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from papergym.eval.records import (
    AlphaUse,
    Correlation,
    Estimate,
    EvalScore,
    EvalSummary,
    EvalSystem,
    EvalVerdict,
    PairedDifference,
    SystemSummary,
)
from papergym.eval.stats import bootstrap_mean, correlation, paired_difference
from papergym.quotes import tally

PerQuestion = dict[str, float]
"""Question id → the mean of its values over the samples that had one."""


@dataclass(frozen=True)
class Bootstrap:
    """How intervals are drawn."""

    resamples: int = 2000
    level: float = 0.95
    seed: int = 0

    def mean(self, per_question: PerQuestion) -> Estimate:
        # in question order, not the order answers happened to finish: the same scores
        # resampled with the same seed must give the same interval after a resume
        return bootstrap_mean(
            [per_question[key] for key in sorted(per_question)],
            resamples=self.resamples,
            level=self.level,
            seed=self.seed,
        )

    def correlation(
        self, x: Sequence[float], y: Sequence[float], method: Literal["pearson", "spearman"]
    ) -> Correlation:
        return correlation(x, y, method, resamples=self.resamples, level=self.level, seed=self.seed)

    def difference(self, a: Sequence[float], b: Sequence[float]) -> Estimate:
        """The mean of ``a[i] - b[i]``, resampling the pairs."""
        return paired_difference(a, b, resamples=self.resamples, level=self.level, seed=self.seed)


def _order(score: EvalScore) -> tuple[str, int]:
    return score.instance_id, score.sample


def per_question(
    scores: Sequence[EvalScore], value: Callable[[EvalScore], float | None]
) -> PerQuestion:
    """Each question's mean of ``value`` over its answers; questions without one are left out."""
    values: dict[str, list[float]] = defaultdict(list)
    for score in sorted(scores, key=_order):  # sums in one order: the same float every time
        if (v := value(score)) is not None:
            values[score.instance_id].append(v)
    return {key: sum(vs) / len(vs) for key, vs in values.items()}


def _pass_rate(scores: Sequence[EvalScore], keep: Callable[[EvalVerdict], bool]) -> PerQuestion:
    """Each question's share of passed verdicts among those ``keep`` selects (scored answers,
    decided verdicts only)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for score in scores:
        if not score.scored:
            continue
        for verdict in score.verdicts:
            if verdict.passed is not None and keep(verdict):
                counts[score.instance_id][0] += int(verdict.passed)
                counts[score.instance_id][1] += 1
    return {key: passed / total for key, (passed, total) in counts.items() if total}


def unbacked_text(summary: SystemSummary) -> str:
    """A system's unbacked verdicts for a table: ``3/40 (7.5%)``, or ``—`` when its judge
    quotes nothing."""
    if summary.unbacked_rate is None:
        return "—"
    return f"{summary.unbacked}/{summary.met_claimed} ({summary.unbacked_rate:.1%})"


def system_summary(
    system: EvalSystem, scores: Sequence[EvalScore], boot: Bootstrap
) -> SystemSummary:
    """Every statistic of one system's scores (in any order: they are sorted first)."""
    scores = sorted(scores, key=_order)
    scored = [s for s in scores if s.scored]
    general_ids = sorted(
        {v.criterion_id for s in scored for v in s.verdicts if v.kind == "general"}
    )
    # pass rates are of desired criteria: a pitfall's "passed" means the mistake was made
    ranks = sorted(
        {v.rank for s in scored for v in s.verdicts if v.rank is not None and v.weight > 0}
    )
    words = [float(s.words) for s in scored]
    values = [s.value for s in scored if s.value is not None]
    quotes = tally(v for s in scored for v in s.verdicts)
    return SystemSummary(
        system=system,
        answers=len(scores),
        scored=len(scored),
        unscored=len(scores) - len(scored),
        unscored_reasons=dict(
            Counter(s.unscored_reason or "unknown" for s in scores if not s.scored)
        ),
        unbacked=quotes.unbacked,
        met_claimed=quotes.claimed,
        unbacked_rate=quotes.rate,
        reward=boot.mean(per_question(scored, lambda s: s.value)),
        specific=boot.mean(per_question(scored, lambda s: s.specific)),
        general=boot.mean(per_question(scored, lambda s: s.general)),
        by_dimension={
            "method": boot.mean(per_question(scored, lambda s: s.method)),
            "experiment": boot.mean(per_question(scored, lambda s: s.experiment)),
        },
        general_criteria={
            cid: boot.mean(_pass_rate(scored, lambda v, c=cid: v.criterion_id == c))  # type: ignore[misc]
            for cid in general_ids
        },
        by_rank={
            str(rank): boot.mean(
                _pass_rate(
                    scored,
                    lambda v, r=rank: v.kind == "specific" and v.rank == r and v.weight > 0,  # type: ignore[misc]
                )
            )
            for rank in ranks
        },
        words=boot.mean(per_question(scores, lambda s: float(s.words))),
        length_reward=(
            boot.correlation(words, values, "pearson"),
            boot.correlation(words, values, "spearman"),
        ),
    )


def paired(
    a: str, b: str, by_system: Mapping[str, Sequence[EvalScore]], boot: Bootstrap
) -> PairedDifference:
    """``a - b`` over the questions both systems scored, resampling those questions."""
    first = per_question(by_system[a], lambda s: s.value)
    second = per_question(by_system[b], lambda s: s.value)
    common = sorted(key for key in first if key in second)
    xs = [first[k] for k in common]
    ys = [second[k] for k in common]
    return PairedDifference(
        a=a,
        b=b,
        reward=boot.difference(xs, ys),
        wins=sum(x > y for x, y in zip(xs, ys, strict=True)),
        ties=sum(x == y for x, y in zip(xs, ys, strict=True)),
        losses=sum(x < y for x, y in zip(xs, ys, strict=True)),
    )


def summarise(
    systems: Sequence[EvalSystem], scores: Sequence[EvalScore], boot: Bootstrap
) -> tuple[tuple[SystemSummary, ...], tuple[PairedDifference, ...]]:
    """Per-system summaries (in the given order) and every pair's difference."""
    by_system: dict[str, list[EvalScore]] = {s.name: [] for s in systems}
    for score in scores:
        if score.system in by_system:
            by_system[score.system].append(score)
    summaries = tuple(system_summary(s, by_system[s.name], boot) for s in systems)
    pairs = tuple(paired(a.name, b.name, by_system, boot) for a, b in combinations(systems, 2))
    return summaries, pairs


def alphas_used(scores: Sequence[EvalScore]) -> tuple[AlphaUse, ...]:
    """The α each scored answer's reward applied, counted, in increasing α."""
    counts = Counter(s.alpha for s in scores if s.scored and s.alpha is not None)
    return tuple(AlphaUse(alpha=a, answers=n) for a, n in sorted(counts.items()))


_WHY = {1.0: "no general criterion graded", 0.0: "no specific criterion graded"}


def alpha_text(summary: EvalSummary) -> str:
    """The α the reward applied, as a reader should see it: ``α = 0.7``; ``α = 1 (reward.alpha
    0.7 not applied: no general criterion graded)`` under the offline judge; or each α with
    its answers when they differ."""
    configured = summary.alpha
    used = summary.alphas
    if not used:  # nothing scored, or a summary written before α was recorded per answer
        return f"α = {configured:g} (configured)"
    if len(used) == 1:
        alpha = used[0].alpha
        if alpha == configured:
            return f"α = {alpha:g}"
        why = _WHY.get(alpha, "")
        return f"α = {alpha:g} (reward.alpha {configured:g} not applied{': ' + why if why else ''})"
    parts = [
        f"{u.alpha:g} on {u.answers} answer{'s' if u.answers != 1 else ''}"
        + (f" ({_WHY[u.alpha]})" if u.alpha != configured and u.alpha in _WHY else "")
        for u in used
    ]
    return f"α = {', '.join(parts)} (reward.alpha {configured:g})"
