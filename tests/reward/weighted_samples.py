"""A weighted rubric with pitfalls, answers that meet known criteria, and a judge that reads them.

Numbers checked by hand in the tests (α = 0.7). Specific weights: a 3, b 2, c 1 (desired, P = 6)
and h1 −2, h2 −4 (pitfalls, N = 6, W = P + N = 12); general g1, g2 unweighted.

=========  ============  ==============================  ==============================
answer     met           positive (÷6, clipped)          absolute (÷12, clipped)
=========  ============  ==============================  ==============================
partial    a b h1 | g1   3+2−2 = 3 → 0.5;  0.7·0.5+0.3·0.5 = 0.5    3/12 = 0.25; 0.175+0.15 = 0.325
blunder    a h2 | g1 g2  3−4 = −1 → 0;     0.3·1 = 0.3              −1/12 → 0;   0.3
full       a b c | g1 g2 6 → 1;            1.0                      6/12 = 0.5;  0.35+0.3 = 0.65
=========  ============  ==============================  ==============================

The offline judge grades no general criteria (α becomes 1), so through it the value is the
specific part alone: partial 0.5 / 0.25, blunder 0 / 0, full 1 / 0.5.
"""

from __future__ import annotations

from papergym.records import Criterion, GeneralCriterion, Instance, Rubric, Verdict

TEXTS = {
    "a": "The plan trains a convolutional network on satellite images of farmland.",
    "b": "The plan measures crop yield with ground sensors in every field.",
    "c": "The plan interviews farmers about their irrigation schedules.",
    "h1": "The plan reports accuracy figures before any experiment has been run.",
    "h2": "The plan tunes the hyperparameters on the held-out test fields.",
}
WEIGHTS = {"a": 3.0, "b": 2.0, "c": 1.0, "h1": -2.0, "h2": -4.0}
GENERAL = {"g1": "The plan is specific.", "g2": "The plan is feasible."}

MET = {
    "partial": ("a", "b", "h1", "g1"),
    "blunder": ("a", "h2", "g1", "g2"),
    "full": ("a", "b", "c", "g1", "g2"),
}
EXPECTED = {  # (specific, value) by normalisation, with the scripted judge (general graded)
    "positive": {"partial": (0.5, 0.5), "blunder": (0.0, 0.3), "full": (1.0, 1.0)},
    "absolute": {"partial": (0.25, 0.325), "blunder": (0.0, 0.3), "full": (0.5, 0.65)},
}
OFFLINE_EXPECTED = {  # value by normalisation with the offline judge (no general pass)
    "positive": {"partial": 0.5, "blunder": 0.0, "full": 1.0},
    "absolute": {"partial": 0.25, "blunder": 0.0, "full": 0.5},
}


def weighted_instance(instance_id: str = "weighted-1") -> Instance:
    specific = tuple(
        Criterion(
            id=cid,
            text=text,
            dimension="method",
            origin="answer",
            rank=rank,
            weight=WEIGHTS[cid],
        )
        for rank, (cid, text) in enumerate(TEXTS.items(), start=1)
    )
    general = tuple(GeneralCriterion(id=gid, text=text) for gid, text in GENERAL.items())
    return Instance(
        id=instance_id,
        recipe="papergym",
        builder="llm",
        paper_id="doc-farm",
        source_kind="document",
        question="How would you estimate crop yield across a region from remote data?",
        reference_answer=" ".join(PLAN_SENTENCES[c] for c in ("a", "b", "c")),
        rubric=Rubric(specific=specific, general=general),
    )


PLAN_SENTENCES = {  # each criterion's words and more: the offline judge does not count a copy
    "a": "The plan trains a convolutional network on satellite images of farmland, starting from "
    "a pretrained backbone and seasonal composites.",
    "b": "The plan measures crop yield with ground sensors in every field, logging moisture daily "
    "and calibrating each sensor at harvest.",
    "c": "The plan interviews farmers about their irrigation schedules, recording pump hours and "
    "rainfall diaries per season.",
    "h1": "The plan reports accuracy figures before any experiment has been run, quoting numbers "
    "from an imagined pilot study.",
    "h2": "The plan tunes the hyperparameters on the held-out test fields, picking the learning "
    "rate and depth that score best there.",
}


def answer(name: str) -> str:
    """An answer that states exactly the criteria ``MET[name]`` lists (as marker tokens too)."""
    stated = " ".join(PLAN_SENTENCES[c] for c in MET[name] if c in TEXTS)
    return stated + " [" + " ".join(MET[name]) + "]"


class MarkerJudge:
    """Marks a criterion met when its id appears in the answer's trailing ``[ids]`` marker.

    Deterministic, so the adapters' numbers can be checked by hand; the weights are never shown
    to it (it returns weight-1 verdicts, as real judges do; the reward applies the weights).
    """

    name = "marker"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        marked = set(answer.rsplit("[", 1)[-1].rstrip("]").split()) if "[" in answer else set()
        specific = [
            Verdict(criterion_id=c.id, passed=c.id in marked) for c in instance.rubric.specific
        ]
        general = [
            Verdict(criterion_id=g.id, passed=g.id in marked, kind="general")
            for g in instance.rubric.general
        ]
        return specific, general
