"""Which kind of folder ``papergym report`` was given, by the marker file each command writes:
eval and compare folders, train runs (any stage, cycle included), ``papergym review`` and
``papergym review eval`` outputs, and builds (paper and ARES). Anything else is one line
naming the folder and what each kind holds."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from papergym.errors import BadInputError
from papergym.eval import records as er
from papergym.eval.compare import records as cr

Kind = Literal["eval", "compare", "train", "review", "review-eval", "build"]

METRICS_FILE = "metrics.jsonl"
"""A training stage's log (:class:`papergym.train.run.MetricsLog`)."""
ROUND_METRICS_FILE = "metrics.json"
"""A cycle round's numbers, written when the round is finished."""
ROUND = re.compile(r"^round-(\d+)$")
REVIEWS_FILE = "reviews.jsonl"
"""``papergym review``'s output (papergym.review.run.REVIEWS_FILE; not imported: that module
takes seconds to import)."""
REVIEW_EVAL_FILE = "review-eval.json"
"""``papergym review eval``'s summary (papergym.review.eval_run.SUMMARY_FILE)."""
CARD_FILE = "card.json"
"""A paper build's or an ARES build's card (``papergym build``, ``papergym ares``)."""

WHAT_EACH_HOLDS = (
    f"neither an eval folder ({er.SUMMARY_FILE} and {er.SCORES_FILE} from `papergym eval`) "
    f"a compare folder ({cr.SUMMARY_FILE} and {cr.VERDICTS_FILE} from `papergym compare`), "
    f"a train run ({METRICS_FILE} in it or in its stage folders, or round-N/"
    f"{ROUND_METRICS_FILE}), a review folder ({REVIEWS_FILE}), a review eval folder "
    f"({REVIEW_EVAL_FILE}) nor a build ({CARD_FILE})"
)


def stage_folders(path: Path) -> list[Path]:
    """A run's stage folders in run order (``1-opsd``, ``2-grpo``, ``write-sft``...), or the
    folder itself when it is one stage."""
    if (path / METRICS_FILE).is_file():
        return [path]
    found = [p for p in path.iterdir() if p.is_dir() and (p / METRICS_FILE).is_file()]
    return sorted(
        found, key=lambda p: (int(p.name.split("-")[0]) if p.name[0].isdigit() else 0, p.name)
    )


def round_folders(path: Path) -> list[Path]:
    """A cycle run's finished rounds, in order."""
    found = [
        (int(match.group(1)), p)
        for p in path.iterdir()
        if (match := ROUND.match(p.name)) and (p / ROUND_METRICS_FILE).is_file()
    ]
    return [p for _, p in sorted(found)]


def folder_kind(path: Path) -> Kind:
    """The kind of ``path`` by its marker file; a one-line :class:`BadInputError` otherwise."""
    if not path.exists():
        raise BadInputError(path, "no such folder")
    if not path.is_dir():
        raise BadInputError(path, f"not a folder: {WHAT_EACH_HOLDS}")
    if (path / er.SUMMARY_FILE).is_file() and (path / cr.VERDICTS_FILE).is_file():
        return "compare"
    if (path / er.SUMMARY_FILE).is_file() and (path / er.SCORES_FILE).is_file():
        return "eval"
    if (path / REVIEW_EVAL_FILE).is_file():
        return "review-eval"
    if (path / REVIEWS_FILE).is_file():
        return "review"
    if (path / CARD_FILE).is_file():
        return "build"
    if stage_folders(path) or round_folders(path):
        return "train"
    raise BadInputError(path, WHAT_EACH_HOLDS)
