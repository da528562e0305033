"""A miniature of ARES's graded vs binary criterion verdicts (SPEC §3, §6), on two CPU cores.

**What runs.** PaperGym's real rubric reward (``RubricReward``: weighted specific criteria, both
normalisations, α = 0.7 with one general criterion) and its real LLM rubric judge
(``RubricJudge``, binary or ``verdict="graded"``, strict parsing and the quote rule) talk to
``papergym fake-llm``'s plausible judge over HTTP. That judge is lexical: a criterion is met
(binary) when the answer holds at least half of its key terms; graded, it is fully met (2) from
three quarters, partly met (1) from a third. No model is trained.

**The task, per seed.** 16 questions (``--quick``: 6), each with 4 weighted criteria (weights
1-3) and one pitfall (weight −2) of 4 made-up terms each, drawn from a shared pool of 48 terms
so that another question's rubric matches an answer in part. Each question gets a group of 8
answers, as one policy would sample them: a base level (0.2 to 0.8) per question, each answer's
level within ±0.15 of it. Each criterion's terms are covered independently with that
probability, each pitfall term made with probability (1 − level)/2, and a covered term is
misspelt (the judge misses it) with probability 0.15 — the judge's noise. An answer's **true
quality** is the weighted share of terms covered, the pitfall's share subtracting, over the
positive weights (misspelt terms count: the answer does cover them).

**Measures** (per seed, per scale, under each normalisation):

* ``spearman`` — rank correlation of reward and true quality over all answers;
* ``pair_acc`` — of the answer pairs to one question with different true quality, the share the
  reward orders right (a tie counts ½);
* ``tied_pairs`` — of all answer pairs to one question (a GRPO group), the share given the same
  reward: no advantage between them (lower is more learning signal);
* ``own_vs_other_auc`` — AUC of answers of quality ≥ ½ scored against their own rubric vs the
  same answers scored against another question's rubric.

**Statistics.** Per measure, the mean over seeds with a 95% percentile-bootstrap interval over
seeds (``papergym.eval.stats.bootstrap_mean``) and the paired difference graded − binary by seed
(``paired_difference``), with seeds won/tied/lost and an exact sign test. A difference **holds**
when its interval excludes 0 and the sign test gives p < 0.05.

**What this cannot show.** True quality is defined here as partial coverage, which is exactly
what a graded verdict measures, so the miniature shows that the scoring machinery carries the
finer scale through (finer ranking, fewer tied groups), not that a real LLM judge grades
"partly met" consistently: a 0/½/1 judgement may be noisier than 0/1 in a real model, which
would eat the gain. Nor does it train a policy: whether finer rewards help GRPO is the paper's
claim, and a tiny model on a synthetic task would not tell.

**Results** (seeds 1-8, 456 s): graded − binary, positive normalisation: pairs ordered right
+0.025 [+0.021, +0.030] (8/8 seeds) and tied pairs −0.074 [−0.090, −0.059] (8/8) hold;
Spearman +0.013 and own-vs-other AUC +0.007 are suggested (7/1, sign p 0.07). The same under
absolute, where Spearman and AUC are not separated. Table: ``docs/ares.md``.

    python benchmarks/graded_miniature.py [--seeds 1 2 ...] [--questions 16] [--quick] [--out r.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import string
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym.eval.stats import bootstrap_mean, paired_difference, sign_test, spearman
from papergym.fakellm.plausible import responder
from papergym.fakellm.server import FakeOpenAIServer
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.records import (
    Criterion,
    GeneralCriterion,
    Instance,
    Normalisation,
    Rubric,
    Score,
    VerdictScale,
)
from papergym.reward.judge import RubricJudge
from papergym.reward.offline import auc_score
from papergym.reward.reward import RubricReward
from papergym.reward.scoring import rubric_score

TERMS_PER_CRITERION = 4
CRITERIA = 4
POOL = 48
ANSWERS = 8
MISS = 0.15  # a covered term misspelt: the lexical judge misses it
SCALES: tuple[VerdictScale, ...] = ("binary", "graded")
NORMALISATIONS: tuple[Normalisation, ...] = ("positive", "absolute")
MEASURES = ("spearman", "pair_acc", "tied_pairs", "own_vs_other_auc")
GENERAL = "States caveats and limitations."
PITFALL_WEIGHT = -2.0
BASE_LEVELS = (0.2, 0.35, 0.5, 0.65, 0.8)
SPREAD = 0.15


@dataclass(frozen=True)
class Answer:
    """One constructed answer: its text and true quality."""

    question: int
    text: str
    quality: float


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(6, 8)))


def make_task(seed: int, questions: int) -> tuple[list[Instance], list[Answer]]:
    """The seed's questions (weighted rubrics from a shared term pool) and their answers."""
    rng = random.Random(seed)
    pool = list(dict.fromkeys(_word(rng) for _ in range(POOL * 2)))[:POOL]
    instances, answers = [], []
    for q in range(questions):
        terms = [rng.sample(pool, TERMS_PER_CRITERION) for _ in range(CRITERIA)]
        weights = [rng.choice((1.0, 2.0, 3.0)) for _ in range(CRITERIA)]
        pitfall = rng.sample(pool, TERMS_PER_CRITERION)
        specific = (
            *(
                Criterion(id=f"q{q}-c{i}", text=f"Has {', '.join(t)}.", dimension="method",
                          origin="answer", rank=i + 1, weight=w)
                for i, (t, w) in enumerate(zip(terms, weights, strict=True))
            ),
            Criterion(id=f"q{q}-p", text=f"Has {', '.join(pitfall)}.", dimension="method",
                      origin="answer", rank=CRITERIA + 1, weight=PITFALL_WEIGHT),
        )  # fmt: skip
        instances.append(
            Instance(
                id=f"q{q}", recipe="ares", builder="extractive", paper_id=f"q{q}",
                title=f"Question {q}", question=f"What does case {q} involve?",
                reference_answer=" ".join(f"It has {' and '.join(t)}." for t in terms),
                rubric=Rubric(specific=specific, general=(GeneralCriterion(id="g", text=GENERAL),)),
                source_kind="document",
            )
        )  # fmt: skip
        base = rng.choice(BASE_LEVELS)  # a GRPO group: one policy's answers, of similar quality
        for _ in range(ANSWERS):
            level = min(max(base + rng.uniform(-SPREAD, SPREAD), 0.0), 1.0)
            answers.append(_answer(rng, q, terms, weights, pitfall, level))
    return instances, answers


def _answer(
    rng: random.Random,
    q: int,
    terms: list[list[str]],
    weights: list[float],
    pitfall: list[str],
    level: float,
) -> Answer:
    sentences, covered = [], 0.0
    made = [t for t in pitfall if rng.random() < (1 - level) / 2]  # weaker answers err more
    if made:
        sentences.append(f"It has {' and '.join(made)}.")
    covered += PITFALL_WEIGHT * len(made) / len(pitfall)
    for criterion, weight in zip(terms, weights, strict=True):
        shown = [t for t in criterion if rng.random() < level]
        covered += weight * len(shown) / len(criterion)
        written = ["zq" + t if rng.random() < MISS else t for t in shown]
        if written:
            sentences.append(f"It has {' and '.join(written)}.")
    if rng.random() < level:
        sentences.append("Caveats and limitations apply.")
    text = " ".join(sentences) or "No idea."
    return Answer(q, text, covered / sum(weights))  # the positive normalisation's truth


def _rescored(score: Score, normalisation: Normalisation) -> float | None:
    """The same verdicts under another normalisation (a pure function: no judge call)."""
    specific = [v for v in score.verdicts if v.kind == "specific"]
    general = [v for v in score.verdicts if v.kind == "general"]
    return rubric_score(score.instance_id, specific, general, normalisation=normalisation).value


def measures(
    answers: Sequence[Answer], own: Sequence[float | None], other: Sequence[float | None]
) -> dict[str, float]:
    """The four measures of one seed and scale (unscored answers left out, and counted)."""
    kept = [(a, v) for a, v in zip(answers, own, strict=True) if v is not None]
    rho = spearman([a.quality for a, _ in kept], [v for _, v in kept])
    right, pairs, tied, within = 0.0, 0, 0, 0
    for q in sorted({a.question for a in answers}):
        group = [(a.quality, v) for a, v in kept if a.question == q]
        for i, (qa, va) in enumerate(group):
            for qb, vb in group[i + 1 :]:
                within += 1
                tied += va == vb
                if qa != qb:
                    pairs += 1
                    right += 0.5 if va == vb else float((va - vb) * (qa - qb) > 0)
    good = [i for i, a in enumerate(answers) if a.quality >= 0.5]
    positives = [own[i] for i in good if own[i] is not None]
    negatives = [other[i] for i in good if other[i] is not None]
    return {
        "spearman": rho if rho is not None else 0.0,
        "pair_acc": right / pairs if pairs else 0.5,
        "tied_pairs": tied / within if within else 0.0,
        "own_vs_other_auc": auc_score(positives, negatives),  # type: ignore[arg-type]
        "unscored": float(sum(v is None for v in own)),
    }


async def _scores(
    server: FakeOpenAIServer, scale: VerdictScale, pairs: list[tuple[Instance, str]]
) -> list[Score]:
    backend = {
        "model": "fake",
        "base_url": [server.base_url],
        "max_retries": 0,
        "max_concurrency": 16,
    }
    config = LLMConfig.model_validate({"roles": {"judge": backend}, "cache": False})
    reward = RubricReward(RubricJudge(LLMClient(config), verdict=scale), cache_size=0)
    return await reward.ascore_many(pairs)


def run_seed(server: FakeOpenAIServer, seed: int, questions: int) -> dict[str, dict[str, float]]:
    """``{"graded/positive": {measure: value}, ...}`` for one seed."""
    instances, answers = make_task(seed, questions)
    own_pairs = [(instances[a.question], a.text) for a in answers]
    other_pairs = [(instances[(a.question + 1) % questions], a.text) for a in answers]
    out: dict[str, dict[str, float]] = {}
    for scale in SCALES:
        scores = asyncio.run(_scores(server, scale, own_pairs + other_pairs))
        own, other = scores[: len(answers)], scores[len(answers) :]
        for norm in NORMALISATIONS:
            out[f"{scale}/{norm}"] = measures(
                answers, [_rescored(s, norm) for s in own], [_rescored(s, norm) for s in other]
            )
    return out


def report(results: dict[int, dict[str, dict[str, float]]]) -> list[str]:
    """The table over seeds and the paired differences graded − binary, with what holds."""
    seeds = sorted(results)
    lines = [f"seeds: {seeds}", f"{'variant':<18}" + "".join(f"{m:>28}" for m in MEASURES)]
    for scale in SCALES:
        for norm in NORMALISATIONS:
            cells = []
            for m in MEASURES:
                e = bootstrap_mean([results[s][f"{scale}/{norm}"][m] for s in seeds])
                cells.append(f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]")
            lines.append(f"{scale + '/' + norm:<18}" + "".join(f"{c:>28}" for c in cells))
    lines.append("graded - binary, paired by seed:")
    for norm in NORMALISATIONS:
        for m in MEASURES:
            g = [results[s][f"graded/{norm}"][m] for s in seeds]
            b = [results[s][f"binary/{norm}"][m] for s in seeds]
            d = paired_difference(g, b)
            won = sum(x > y for x, y in zip(g, b, strict=True))
            lost = sum(x < y for x, y in zip(g, b, strict=True))
            p = sign_test(won, lost)
            holds = d.low is not None and d.high is not None and (d.low > 0 or d.high < 0)
            verdict = "HOLDS" if holds and p < 0.05 else "suggested" if holds else "not separated"
            lines.append(
                f"  {norm:<9}{m:<18}{d.value:+.3f} [{d.low:+.3f}, {d.high:+.3f}]  "
                f"won/tied/lost {won}/{len(seeds) - won - lost}/{lost}  sign p {p:.3f}  {verdict}"
            )
    unscored = sum(r[k]["unscored"] for r in results.values() for k in r)
    lines.append(f"unscored answers (all variants): {unscored:g}")
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, nargs="+", help="default 1 .. 8 (--quick: 1 2 3)")
    parser.add_argument("--questions", type=int, help="questions per seed (default 16; --quick 6)")
    parser.add_argument("--quick", action="store_true", help="3 seeds, 6 questions (~20 s)")
    parser.add_argument("--out", type=Path, help="write the per-seed measures here (JSON)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    seeds = args.seeds or ([1, 2, 3] if args.quick else list(range(1, 9)))
    questions = args.questions or (6 if args.quick else 16)
    start = time.perf_counter()
    with FakeOpenAIServer(responder=responder) as server:
        results = {seed: run_seed(server, seed, questions) for seed in seeds}
    print("\n".join(report(results)))
    print(f"wall {time.perf_counter() - start:.1f} s, {server.request_count} judge calls")
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
