"""The keep / reweight / drop rule of ``audit --usefulness``, and the rubric it leads to.

:func:`recommend` is pure; the thresholds are the ``audit.usefulness`` section. In order, the
first rule that applies decides:

1. **drop** a criterion the leakage audit found leaked: the question gives it away, so it
   rewards restating the question.
2. **drop** a near-duplicate of a higher-ranked criterion (token Jaccard ≥
   ``duplicate_threshold``): it counts the same thing twice.
3. **keep** a criterion with fewer than ``min_answers`` scored answers: too little evidence to
   call it useless (and unscored answers are no evidence at all).
4. **drop** a criterion always met over its scored answers: it separated no answers, so it
   gave no gradient and moved no ranking, and answers will not get worse at it. A criterion
   never met separated none either, but weak answers fail hard criteria: it is **kept** with
   that reason, and dropped only with ``drop_never_met``.
5. **reweight** (weight × ``reweight_factor``, sign kept) a criterion whose verdict varied in
   fewer than ``min_spread`` of its groups (little gradient for its weight), or whose
   correlation with the rest of the rubric is below ``min_correlation`` (it pulls against the
   rest: a criterion that rewards something else, or a judge that grades it inversely).
6. **keep** the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from papergym.audit.settings import UsefulnessSection
from papergym.audit.usefulness import CriterionUsefulness, Recommendation
from papergym.records import Instance


def recommend(stats: CriterionUsefulness, section: UsefulnessSection) -> CriterionUsefulness:
    """``stats`` with its recommendation, new weight and reasons set by the rule above."""
    drop = _drop_reason(stats, section)
    if drop is not None:
        return _decided(stats, "drop", stats.weight, (drop,))
    if stats.scored < section.min_answers:
        reason = f"kept: {stats.scored} scored answers (< {section.min_answers}), too few to judge"
        return _decided(stats, "keep", stats.weight, (reason,))
    if stats.constant == "always" or (stats.constant == "never" and section.drop_never_met):
        reason = f"{stats.constant} met in {stats.scored} scored answers: separates none"
        return _decided(stats, "drop", stats.weight, (reason,))
    if stats.constant == "never":
        reason = f"never met in {stats.scored} scored answers: hard or unmeetable, kept"
        return _decided(stats, "keep", stats.weight, (reason,))
    reasons = _reweight_reasons(stats, section)
    if reasons:
        return _decided(stats, "reweight", stats.weight * section.reweight_factor, reasons)
    return _decided(stats, "keep", stats.weight, ())


def _drop_reason(stats: CriterionUsefulness, section: UsefulnessSection) -> str | None:
    if stats.leaked:
        return "leaked: the leakage audit found it inferable from the question"
    if stats.similarity is not None and stats.similarity >= section.duplicate_threshold:
        return f"near-duplicate of {stats.duplicate_of} (Jaccard {stats.similarity:.2f})"
    return None


def _reweight_reasons(stats: CriterionUsefulness, section: UsefulnessSection) -> tuple[str, ...]:
    reasons = []
    if stats.spread is not None and stats.spread < section.min_spread:
        reasons.append(
            f"varied in {stats.varied_groups} of {stats.groups} groups "
            f"(< {section.min_spread:.0%}): little gradient"
        )
    if stats.correlation is not None and stats.correlation < section.min_correlation:
        reasons.append(f"correlation with the rest {stats.correlation:+.2f}: pulls against it")
    return tuple(reasons)


def _decided(
    stats: CriterionUsefulness,
    recommendation: Recommendation,
    weight: float,
    reasons: tuple[str, ...],
) -> CriterionUsefulness:
    return stats.model_copy(
        update={"recommendation": recommendation, "new_weight": weight, "reasons": reasons}
    )


def apply_recommendations(
    instances: Sequence[Instance], decided: Sequence[CriterionUsefulness]
) -> tuple[list[Instance], list[str]]:
    """The instances with dropped criteria removed (the rest re-ranked 1..n in their order)
    and reweighted ones given their new weight, and a warning per rubric left unchanged
    because every criterion would have gone (a rubric without criteria scores nothing).
    Criteria without a decision (their instance was not judged) stay as they are."""
    by_key: Mapping[tuple[str, str], CriterionUsefulness] = {
        (d.instance_id, d.criterion_id): d for d in decided
    }
    applied: list[Instance] = []
    warnings: list[str] = []
    for instance in instances:
        kept = []
        for criterion in instance.rubric.specific:
            decision = by_key.get((instance.id, criterion.id))
            if decision is None or decision.recommendation == "keep":
                kept.append(criterion)
            elif decision.recommendation == "reweight":
                kept.append(criterion.model_copy(update={"weight": decision.new_weight}))
        if not kept:
            warnings.append(f"{instance.id}: every criterion would be dropped; left unchanged")
            applied.append(instance)
            continue
        dropped = len(instance.rubric.specific) - len(kept)
        ranked = tuple(c.model_copy(update={"rank": n}) for n, c in enumerate(kept, start=1))
        note = instance.rubric.note
        if dropped:
            note = f"{note} {dropped} dropped by audit --usefulness.".strip()
        rubric = instance.rubric.model_copy(update={"specific": ranked, "note": note})
        applied.append(instance.model_copy(update={"rubric": rubric}))
    return applied, warnings
