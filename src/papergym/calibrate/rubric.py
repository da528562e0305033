"""A rubric judge measured against human criterion labels: each labelled answer is judged once
in the rubric's order, again ``repeats − 1`` times (LLM judges), and again with the criteria
shuffled ``orderings`` times; each label's verdict is compared with the label, and each
repeated verdict with the first."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym.calibrate.agreement import (
    agreement,
    base_rate,
    kappa_estimate,
    self_agreement,
)
from papergym.calibrate.labels import CriterionLabel, read_labels
from papergym.calibrate.records import CALIBRATION_FILE, AgreementRow, RubricCalibration
from papergym.calibrate.settings import CalibrateSection
from papergym.jsonl import write_text_atomic
from papergym.records import Instance
from papergym.reward.answers import read_instances
from papergym.reward.reward import Judge

Verdicts = dict[str, bool | None]
"""One judgement of an answer: each specific criterion's verdict (None: unscored)."""


@dataclass(frozen=True)
class Runs:
    """Every judgement of the labelled answers: ``first`` in the rubric's order, the
    ``repeats`` in that order again, the ``orderings`` with the criteria shuffled; each run a
    list over answers."""

    first: list[Verdicts]
    repeats: list[list[Verdicts]]
    orderings: list[list[Verdicts]]


def shuffled(instance: Instance, rng: random.Random) -> Instance:
    """``instance`` with its specific criteria in a random order (ids and texts unchanged)."""
    criteria = list(instance.rubric.specific)
    rng.shuffle(criteria)
    rubric = instance.rubric.model_copy(update={"specific": criteria})
    return instance.model_copy(update={"rubric": rubric})


async def _judge_all(judge: Judge, pairs: Sequence[tuple[Instance, str]]) -> list[Verdicts]:
    results = await asyncio.gather(*(judge.judge(instance, answer) for instance, answer in pairs))
    return [{v.criterion_id: v.passed for v in specific} for specific, _ in results]


async def judge_runs(
    judge: Judge, pairs: Sequence[tuple[Instance, str]], repeats: int, orderings: int, seed: int
) -> Runs:
    """The judgements of ``pairs`` that calibration compares (see :class:`Runs`)."""
    rng = random.Random(seed)
    first = await _judge_all(judge, pairs)
    again = [await _judge_all(judge, pairs) for _ in range(repeats - 1)]
    orders = []
    for _ in range(orderings):
        orders.append(await _judge_all(judge, [(shuffled(i, rng), a) for i, a in pairs]))
    return Runs(first, again, orders)


def agreement_row(
    name: str,
    verdicts: Sequence[bool | None],
    labels: Sequence[bool],
    runs: tuple[list[list[bool | None]], list[list[bool | None]]],
    section: CalibrateSection,
) -> AgreementRow:
    """One row of the report: ``verdicts`` (None: unscored) against ``labels``, and the
    judge's agreement with itself over the repeated and the reordered ``runs`` (each a list of
    runs holding a verdict per label; the first judgement is included in both)."""
    scored = [(bool(v), h) for v, h in zip(verdicts, labels, strict=True) if v is not None]
    judged, human = [v for v, _ in scored], [h for _, h in scored]
    kappa = kappa_estimate(
        judged, human, resamples=section.resamples, level=section.level, seed=section.seed
    )
    repeated, reordered = runs
    return AgreementRow(
        criterion=name,
        items=len(scored),
        unscored=len(verdicts) - len(scored),
        agreement=agreement(judged, human),
        judge_rate=base_rate(judged),
        label_rate=base_rate(human),
        kappa=kappa,
        repeat_consistency=self_agreement([list(verdicts), *repeated]) if repeated else None,
        order_consistency=self_agreement([list(verdicts), *reordered]) if reordered else None,
        reliable=None if kappa.value is None else kappa.value >= section.kappa_threshold,
    )


def criterion_key(label: CriterionLabel) -> str:
    """A criterion's name in the report: ``instance_id/criterion_id``."""
    return f"{label.instance_id}/{label.criterion_id}"


def _verdicts_of(
    labels: Sequence[CriterionLabel], answer_of: dict[tuple[str, str], int], run: list[Verdicts]
) -> list[bool | None]:
    return [run[answer_of[(x.instance_id, x.answer)]].get(x.criterion_id) for x in labels]


def grouped(
    labels: Sequence[CriterionLabel],
    answer_of: dict[tuple[str, str], int],
    runs: Runs,
    section: CalibrateSection,
    key: Callable[[CriterionLabel], str],
) -> list[AgreementRow]:
    """One row per value of ``key`` over the labels (in order of first label)."""
    groups: dict[str, list[CriterionLabel]] = {}
    for label in labels:
        groups.setdefault(key(label), []).append(label)
    return [
        agreement_row(
            name,
            _verdicts_of(group, answer_of, runs.first),
            [x.met == 1 for x in group],
            (
                [_verdicts_of(group, answer_of, r) for r in runs.repeats],
                [_verdicts_of(group, answer_of, r) for r in runs.orderings],
            ),
            section,
        )
        for name, group in groups.items()
    ]


def calibrate_rubric(
    judge: Judge,
    instances: Path,
    labels_file: Path,
    section: CalibrateSection,
    *,
    deterministic: bool,
    out: Path | None = None,
    notes: Sequence[str] = (),
) -> RubricCalibration:
    """Measure ``judge`` against the labels of ``labels_file`` (see the module); a
    ``deterministic`` judge (the offline one) is not repeated. Written to ``out`` when given."""
    by_id = read_instances(instances)
    labels = read_labels(labels_file, by_id)
    answer_of: dict[tuple[str, str], int] = {}
    for label in labels:
        answer_of.setdefault((label.instance_id, label.answer), len(answer_of))
    pairs = [(by_id[instance_id], answer) for instance_id, answer in answer_of]
    repeats = 1 if deterministic else section.repeats
    runs = asyncio.run(judge_runs(judge, pairs, repeats, section.orderings, section.seed))
    (overall,) = grouped(labels, answer_of, runs, section, lambda _: "overall")
    criteria = grouped(labels, answer_of, runs, section, criterion_key)
    by_note = grouped(labels, answer_of, runs, section, lambda x: x.note or "(no note)")
    report = RubricCalibration(
        judge=judge.name,
        labels=str(labels_file),
        instances=str(instances),
        answers=len(pairs),
        kappa_threshold=section.kappa_threshold,
        repeats=repeats,
        orderings=section.orderings,
        resamples=section.resamples,
        level=section.level,
        seed=section.seed,
        overall=overall,
        criteria=criteria,
        by_note=by_note,
        unreliable=[r.criterion for r in criteria if r.reliable is False],
        undetermined=[r.criterion for r in criteria if r.reliable is None],
        notes=[
            *notes,
            *(["a deterministic judge: judged once per ordering, no repeats"] * deterministic),
        ],
    )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / CALIBRATION_FILE, report.model_dump_json(indent=1) + "\n")
    return report
