"""The review reward's gaming probes on ICLR papers, without and with the guards.

The ICLR 2022 papers (``../shared/reviews/iclr2022``) are split by the SHA-256 of the paper id
before anything is tuned: an even hash is *tuning*, odd is *held-out*. The guards' defaults
were chosen on the tuning half only; the table that counts is on the first ``--papers`` held-out
papers (in hash order). It prints, per probe, the mean rating change from the original and how
many papers the probe beats the original on, then the pairwise ranking error over every paper
of the split (pairs whose mean human ratings differ by more than 1.5: the share where the
lower-rated paper is rated strictly higher; ties counted apart).

The shipped baseline was fitted on all 199 papers, so its ranking of them is in-sample (it
remembers them). ``--refit`` fits the same model (TF-IDF ridge, the shipped alpha) on the
other half only and reviews with it: the ranking error of that reviewer is out-of-sample.

    python benchmarks/review_probes.py [--split held-out|tuning] [--papers 20] [--refit]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import statistics
import sys
import tempfile
from pathlib import Path

from papergym.review.data import RatedPaper, read_papers, read_ratings
from papergym.review.offline import (
    Baseline,
    OfflineReviewer,
    Provenance,
    baseline_json,
    features_text,
    load_baseline,
)
from papergym.review.probes import ProbeReport, probe_reward, word_weights
from papergym.review.records import ICLR
from papergym.review.reward import ReviewReward
from papergym.review.settings import GuardSettings

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "reviews" / "iclr2022"
GAP = 1.5


def split_of(paper_id: str) -> str:
    """tuning or held-out, by the paper id's hash (fixed before any tuning)."""
    digest = hashlib.sha256(paper_id.encode("utf-8")).hexdigest()
    return "tuning" if int(digest, 16) % 2 == 0 else "held-out"


def ranking_error(ratings: dict[str, float], human: dict[str, float]) -> tuple[float, float, int]:
    """(share of wide pairs ranked the wrong way, share tied, wide pairs)."""
    wrong = tied = pairs = 0
    for a, b in itertools.combinations(sorted(ratings), 2):
        if abs(human[a] - human[b]) <= GAP:
            continue
        low, high = (a, b) if human[a] < human[b] else (b, a)
        pairs += 1
        wrong += ratings[low] > ratings[high]
        tied += ratings[low] == ratings[high]
    return (wrong / pairs if pairs else 0.0), (tied / pairs if pairs else 0.0), pairs


def refit(rated: list[RatedPaper], texts: dict[str, str], folder: Path) -> Path:
    """A baseline fitted on ``rated`` alone (the shipped alpha), written to ``folder``."""
    from papergym.review.baseline_fit import fit_tfidf_ridge

    shipped = load_baseline()
    terms, intercept = fit_tfidf_ridge(
        [features_text(texts[p.paper_id]) for p in rated],
        [statistics.fmean(p.ratings) for p in rated],
        shipped.alpha,
    )
    fitted = shipped.model_copy(
        update={
            "terms": terms,
            "intercept": intercept,
            "fitted_on": None,
            "provenance": Provenance(
                **{
                    **shipped.provenance.model_dump(),
                    "command": "benchmarks/review_probes.py --refit",
                    "papers": len(rated),
                }
            ),
        }
    )
    path = folder / "refit.json"
    path.write_text(baseline_json(Baseline.model_validate(fitted.model_dump())), "utf-8")
    return path


def print_probes(report: ProbeReport) -> None:
    """The probe table of one reward."""
    print(f"mean original rating {report.original_mean:.2f}")
    print(f"{'probe':16} {'change':>8} {'rating':>7} {'beats':>6}  fired")
    for row in report.rows:
        fired = ", ".join(f"{k} {v}" for k, v in row.fired.items()) or "-"
        print(
            f"{row.probe:16} {row.mean_change or 0.0:+8.2f} {row.mean_rating or 0.0:7.2f} "
            f"{row.beats:>3}/{row.papers:<2}  {fired}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("held-out", "tuning"), default="held-out")
    parser.add_argument("--papers", type=int, default=20, help="Papers the probes run on.")
    parser.add_argument(
        "--refit",
        action="store_true",
        help="Review with a baseline fitted on the other half (out-of-sample ranking).",
    )
    parser.add_argument(
        "--quick", action="store_true", help="Smoke mode: 2 papers (skips without the data)."
    )
    args = parser.parse_args()
    if args.quick:
        args.papers = 2
    if not DATA.is_dir():
        if args.quick:  # the smoke run must pass where ../shared is absent (CI)
            print(f"skipped: no ICLR data at {DATA}")
            return 0
        print(f"no ICLR data at {DATA}", file=sys.stderr)
        return 2
    rated = read_ratings(DATA / "ratings.tsv", ICLR)
    texts = read_papers(DATA / "papers", rated, DATA / "ratings.tsv")
    mine = sorted(
        (p for p in rated if split_of(p.paper_id) == args.split),
        key=lambda p: hashlib.sha256(p.paper_id.encode("utf-8")).hexdigest(),
    )
    human = {p.paper_id: statistics.fmean(p.ratings) for p in mine}
    folder = Path(tempfile.mkdtemp(prefix="review-probes-"))
    others = [p for p in rated if split_of(p.paper_id) != args.split]
    reviewer = OfflineReviewer(refit(others, texts, folder) if args.refit else None)
    print("reviewer: " + ("refit on the other half" if args.refit else "shipped baseline"))
    chosen = [texts[p.paper_id] for p in mine[: args.papers]]
    print(f"{args.split}: {len(mine)} papers, probes on {len(chosen)}")
    for label, guards in (("without guards", None), ("with guards", GuardSettings())):
        reward = ReviewReward(reviewer, guards=guards)
        print(f"\n{label}")
        if chosen:
            print_probes(
                asyncio.run(probe_reward(reward, label, chosen, word_weights(reviewer), allowed=1))
            )
        scores = reward.score_many([texts[p.paper_id] for p in mine])
        ratings = {p.paper_id: s.rating or 0.0 for p, s in zip(mine, scores, strict=True)}
        wrong, tied, pairs = ranking_error(ratings, human)
        fired_any = sum(bool(s.fired) for s in scores)
        print(
            f"ranking error over {pairs} pairs (human gap > {GAP}): {wrong:.1%} wrong, "
            f"{tied:.1%} tied; originals a guard fired on: {fired_any}/{len(mine)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
