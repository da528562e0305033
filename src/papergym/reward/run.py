"""The reward verbs' work, callable from Python: score answers, load instances for the
self-test, calibrate the offline judge. The command line (:mod:`papergym.cli.score`,
:mod:`papergym.cli.check_reward`, :mod:`papergym.cli.calibrate_reward`) parses options, builds
the reward and prints what these return."""

from __future__ import annotations

import datetime
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from papergym import __version__
from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl, write_jsonl, write_text_atomic
from papergym.quotes import QuoteTally, tally
from papergym.records import Instance, Score
from papergym.reward.answers import (
    Answer,
    default_scores_path,
    instances_file,
    read_answers,
    read_instances,
    with_samples,
)
from papergym.reward.reward import RubricReward


def scores_path(answers: Path, out: Path | None) -> Path:
    """Where ``score`` writes (``out``, else beside the answers), refused in one line when it
    is a folder or the answers file itself."""
    out = out if out is not None else default_scores_path(answers)
    if out.is_dir():
        raise BadInputError(out, "is a folder; -o takes the path of the scores file")
    if out.resolve() == answers.resolve():
        raise BadInputError(out, "is the answers file; -o takes another path")
    return out


@dataclass(frozen=True)
class ScoreInputs:
    """The instances by id and the answers to score, every answer's instance known."""

    by_id: dict[str, Instance]
    answers: list[Answer]


def read_score_inputs(instances: Path, answers: Path, *, samples: bool) -> ScoreInputs:
    """The instances and answers of ``score``; an answer to an unknown instance is refused in
    one line naming its file:line."""
    by_id = read_instances(instances)
    given = read_answers(answers, samples=samples)
    unknown = [a for a in given if a.instance_id not in by_id]
    if unknown:
        raise BadInputError(
            f"{answers}:{unknown[0].line}",
            f"instance_id {unknown[0].instance_id!r} is not in {instances}"
            + (f" ({len(unknown) - 1} more unknown)" if len(unknown) > 1 else ""),
        )
    return ScoreInputs(by_id, given)


def score_answers(reward: RubricReward, inputs: ScoreInputs, out: Path) -> list[Score]:
    """Score every answer with ``reward`` and write the scores (with their samples) to ``out``."""
    scores = reward.score_many([(inputs.by_id[a.instance_id], a.answer) for a in inputs.answers])
    write_jsonl(out, with_samples(scores, inputs.answers))
    return scores


def score_summary(
    scores: list[Score], answers: list[Answer], judge: str, out: Path
) -> dict[str, object]:
    """The numbers ``score`` prints: counts, the mean, and per instance when several answers
    each (how many, and how many instances gave every sample the same score: no signal for a
    GRPO group)."""
    values = [s.value for s in scores if s.value is not None]
    summary: dict[str, object] = {
        "answers": len(scores),
        "scored": len(values),
        "unscored": len(scores) - len(values),
        "truncated": sum(s.answer_truncated for s in scores),
        "mean": sum(values) / len(values) if values else None,
    }
    if any(a.sample is not None for a in answers):
        summary.update(_samples_summary(scores, answers))
    summary.update(unbacked_summary(tally(v for s in scores for v in s.verdicts)))
    summary["judge"] = judge
    summary["written"] = str(out)
    summary["unscored_reasons"] = dict(Counter(s.unscored_reason for s in scores if not s.scored))
    return summary


def unbacked_summary(quotes: QuoteTally) -> dict[str, object]:
    """How many "met" verdicts of a quoting judge were unbacked (their quote not in the answer,
    so turned to not met), of how many it gave; empty for a judge that quotes nothing (the
    offline judge): no rate is reported rather than a rate of 0."""
    if not quotes.claimed:
        return {}
    return {
        "unbacked": quotes.unbacked,
        "met_claimed": quotes.claimed,
        "unbacked_rate": quotes.rate,
    }


def _samples_summary(scores: list[Score], answers: list[Answer]) -> dict[str, object]:
    by_instance: dict[str, list[float | None]] = {}
    for answer, score in zip(answers, scores, strict=True):
        by_instance.setdefault(answer.instance_id, []).append(score.value)
    sizes = [len(v) for v in by_instance.values()]
    groups = [[x for x in v if x is not None] for v in by_instance.values()]
    return {
        "instances": len(by_instance),
        "samples_per_instance": (
            str(min(sizes)) if min(sizes) == max(sizes) else f"{min(sizes)}-{max(sizes)}"
        ),
        "instances_all_tied": sum(len(g) > 1 and max(g) == min(g) for g in groups),
    }


def check_instances(path: Path, limit: int | None) -> list[Instance]:
    """The first ``limit`` instances of a build folder or instances file for ``check-reward``;
    none is refused in one line."""
    source = instances_file(path)
    loaded = read_jsonl(source, Instance)[:limit]
    if not loaded:
        raise BadInputError(source, "no instances")
    return loaded


# --- calibrate-reward ----------------------------------------------------------------------------


def one_per_paper(instances: list[Instance]) -> tuple[list[Instance], int]:
    """The first instance of each paper, and how many were left out.

    Negatives pair a criterion with *other* papers' references; two instances of one paper
    (two recipes) would count a paper's own reference as a negative.
    """
    seen: dict[str, Instance] = {}
    for instance in instances:
        seen.setdefault(instance.paper_id, instance)
    return list(seen.values()), len(instances) - len(seen)


def describe(instances: list[Instance], name: str) -> str:
    """The data, in words, for the provenance: counts, builders, recipes and the file's name
    (never its path: the file may ship to other machines)."""

    def counted(values: list[str]) -> str:
        return ", ".join(f"{k} ×{n}" for k, n in sorted(Counter(values).items()))

    return (
        f"{len(instances)} instances, one per paper, from {name} "
        f"(builder: {counted([i.builder for i in instances])}; "
        f"recipe: {counted([i.recipe for i in instances])})"
    )


def calibrate_offline_judge(instances: Path, out: Path, data: str | None) -> dict[str, object]:
    """Fit the offline judge's weight and threshold on ``instances`` (one per paper), write the
    calibration file ``out`` with its figures and provenance, and return the summary."""
    from papergym.reward.offline import CalibrationProvenance, calibrate, calibration_file

    if out.is_dir():
        raise BadInputError(out, "is a folder; -o takes the path of the calibration file")
    loaded, repeated = one_per_paper(read_jsonl(instances, Instance))
    if len(loaded) < 2:
        raise BadInputError(instances, "calibration needs instances of at least two papers")
    if not any(instance.rubric.specific for instance in loaded):
        raise BadInputError(instances, "no instance has specific criteria to calibrate on")
    report = calibrate(loaded)
    provenance = CalibrationProvenance(
        command=f"papergym calibrate-reward {instances.name} -o {out.name}",
        data=data if data is not None else describe(loaded, instances.name),
        date=datetime.datetime.now(datetime.UTC).date(),
        papergym_version=__version__,
        note=f"{repeated} more instances of papers already used were left out" if repeated else "",
    )
    write_text_atomic(out, calibration_file(report, provenance))
    return {
        "lexical_weight": report.lexical_weight,
        "threshold": report.threshold,
        "balanced_accuracy": report.balanced_accuracy,
        "auc": report.auc,
        "margin": report.margin,
        "instances": report.instances,
        "positives": report.positives,
        "negatives": report.negatives,
        "left_out": repeated,
        "written": str(out),
    }
