"""The offline baseline reviewer: a ridge model on TF-IDF features of the anonymised text.

It predicts a paper's mean human rating with no LLM, from coefficients fitted by ``papergym
review fit`` and shipped, with their provenance, in ``baseline/iclr2022.json``. It is a
baseline, and everything it writes says so (``PaperReview.baseline`` is True). Prediction is
plain Python and numpy over the shipped vocabulary: no scikit-learn at run time.

Features: the text is anonymised (:func:`~papergym.review.anonymise.anonymise`), URLs, emails
and numbers are dropped, and the lowercase words of three or more letters are counted; a word's
weight is (1 + log count) × idf, and the vector is scaled to unit length (scikit-learn's
``TfidfVectorizer(sublinear_tf=True)``, which ``review fit`` uses with this same tokeniser).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import Executor
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from papergym.errors import BadInputError
from papergym.records import Record
from papergym.review.anonymise import anonymise
from papergym.review.records import ICLR, PaperReview, Removal, VenueScale, baseline_review
from papergym.review.reviewer import off_loop

SHIPPED = "iclr2022.json"
"""The shipped baseline, in the package's ``baseline/`` folder."""

_URL = re.compile(r"(?:https?://|www\.)\S+|(?<!\S)\S+@\S+")
"""URLs and emails (any word with an "@"), whole words. The look-behind keeps the search
linear: a word with an "@" matches from its first character, so no other start is tried."""
_WORD = re.compile(r"[a-z]{3,}")


def tokens(text: str) -> list[str]:
    """The words the baseline counts, of text already anonymised: lowercase runs of three or
    more letters, URLs and emails left out (they name repositories and people, not science)."""
    return _WORD.findall(_URL.sub(" ", text.lower()))


def features_text(text: str) -> str:
    """What the baseline reads of a paper: its anonymised text."""
    return anonymise(text).text


class Provenance(Record):
    """Where a fitted baseline came from: enough to fit it again."""

    command: str
    data: str = Field(description="What it was fitted on, in words (no machine paths).")
    papers: int
    ratings: int
    accepted: int
    version: str = Field(description="papergym version that fitted it.")
    sklearn: str = Field(description="scikit-learn version that fitted it.")
    date: str
    selection: str = Field(description="How the regularisation was chosen.")
    cross_validation: dict[str, float] = Field(
        default_factory=dict, description="Out-of-fold metrics of the chosen model."
    )


HASH_RULE = "sha256 of the text with each run of whitespace made one space, first 16 hex digits"


def text_hash(text: str) -> str:
    """A paper text's fingerprint (:data:`HASH_RULE`): line ends and spacing do not change it."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()[:16]


class FittedPapers(Record):
    """The papers a baseline was fitted on, as fingerprints of their texts (no ids, no paths):
    ``review eval`` marks a paper in-sample when its text or its anonymised text matches one.
    The raw text's hash keeps the match when a later anonymiser changes the anonymised text;
    the anonymised text's hash when the raw text was re-extracted but reads the same."""

    rule: str = HASH_RULE
    texts: list[str] = Field(description="Hashes of the papers' texts as read.")
    anonymised: list[str] = Field(description="Hashes of their anonymised texts.")


def fitted_papers(texts: Sequence[str], anonymised: Sequence[str]) -> FittedPapers:
    return FittedPapers(
        texts=sorted({text_hash(t) for t in texts}),
        anonymised=sorted({text_hash(t) for t in anonymised}),
    )


class Baseline(Record):
    """A fitted baseline: TF-IDF vocabulary with idf and ridge coefficients, and thresholds."""

    kind: str = Field(default="tfidf-ridge", description="Features and model.")
    venue: str = "iclr"
    alpha: float = Field(description="Ridge regularisation strength.")
    intercept: float
    terms: dict[str, tuple[float, float]] = Field(description="Word → (idf, coefficient).")
    threshold: float = Field(
        description="Decision threshold on the baseline's predicted rating, calibrated on its "
        "out-of-fold predictions (accept when prediction >= threshold)."
    )
    threshold_rule: str = Field(
        default="accepts the share of papers the ratings file accepted, on out-of-fold predictions",
        description="How ``threshold`` was calibrated.",
    )
    human_threshold: float = Field(
        description="Threshold on the mean human rating that best matches the decisions: the "
        "default review.threshold for simulated reviewers."
    )
    mean_rating: float | None = Field(
        default=None,
        description="Mean of every human rating of the papers it was fitted on: the constant "
        "baseline's rating in `review eval` (None in a file fitted before it was recorded).",
    )
    fitted_on: FittedPapers | None = Field(
        default=None,
        description="The papers it was fitted on, by text hashes, for `review eval` to mark its "
        "in-sample papers (None in a file fitted before they were recorded).",
    )
    provenance: Provenance

    def predict_rating(self, text: str) -> float:
        """The predicted mean rating of a paper given its anonymised text (unclipped)."""
        counts = Counter(word for word in tokens(text) if word in self.terms)
        weights = {w: (1.0 + math.log(c)) * self.terms[w][0] for w, c in counts.items()}
        norm = math.sqrt(math.fsum(v * v for v in weights.values()))
        if norm == 0.0:
            return self.intercept
        return self.intercept + math.fsum(v * self.terms[w][1] for w, v in weights.items()) / norm


def baseline_json(baseline: Baseline) -> str:
    """The baseline as readable JSON: one term a line, numbers to 6 significant digits (the
    shipped file stays small and diffs term by term)."""
    payload = baseline.model_dump(mode="json", exclude={"terms"})
    head = json.dumps(payload, indent=1, ensure_ascii=False)[:-2]
    lines = [
        f"  {json.dumps(word, ensure_ascii=False)}: [{idf:.6g}, {coef:.6g}]"
        for word, (idf, coef) in sorted(baseline.terms.items())
    ]
    return head + ',\n "terms": {\n' + ",\n".join(lines) + "\n }\n}\n"


def load_baseline(path: Path | None = None) -> Baseline:
    """The baseline at ``path``, or the shipped one; a file that is not one is bad input."""
    if path is None:
        return _shipped()
    try:
        payload: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        return Baseline.model_validate(payload)
    except FileNotFoundError:
        raise BadInputError(path, "no such baseline file") from None
    except (OSError, ValueError) as error:
        first = error.errors()[0]["msg"] if isinstance(error, ValidationError) else str(error)
        raise BadInputError(path, f"not a fitted baseline ({first})") from None


@functools.lru_cache(maxsize=4)
def _cached_baseline(path: Path | None) -> Baseline:
    return load_baseline(path)


def predicted_review(path: Path | None, text: str) -> tuple[float, list[Removal]]:
    """(the unclipped predicted rating, what anonymisation removed) of a raw paper text by the
    baseline at ``path`` (None: shipped): CPU work, run where :func:`off_loop` says."""
    anonymised = anonymise(text)
    return _cached_baseline(path).predict_rating(anonymised.text), list(anonymised.removed)


@functools.cache
def _shipped() -> Baseline:
    text = resources.files("papergym.review").joinpath("baseline", SHIPPED).read_text("utf-8")
    return Baseline.model_validate_json(text)


class OfflineReviewer:
    """The fitted baseline as a reviewer: no reviews, a predicted score and its decision."""

    def __init__(
        self,
        path: Path | None = None,
        threshold: float | None = None,
        scale: VenueScale = ICLR,
        executor: Executor | None = None,
    ) -> None:
        self.path = path
        self.executor = executor
        """Where papers are anonymised and rated (see :func:`off_loop`); None: here."""
        self.baseline = load_baseline(path)
        self.threshold = self.baseline.threshold if threshold is None else threshold
        self.scale = scale
        self.name = f"baseline:{self.baseline.kind}"
        # the reward's cache key: two fitted files of one kind are two reviewers
        fitted = hashlib.sha256(self.baseline.model_dump_json().encode("utf-8")).hexdigest()
        self.identity = json.dumps([self.name, fitted, scale.model_dump(mode="json")])

    def predict(self, texts: Sequence[str]) -> list[float]:
        """Predicted mean ratings of raw paper texts (anonymised here), on the venue's range."""
        return [self._clip(self.baseline.predict_rating(features_text(t))) for t in texts]

    def _clip(self, rating: float) -> float:
        return min(float(self.scale.high), max(float(self.scale.low), rating))

    async def review(self, paper_id: str, text: str) -> PaperReview:
        if self.executor is None:
            anonymised = anonymise(text)
            rating, removed = self.baseline.predict_rating(anonymised.text), anonymised.removed
        else:  # the worker loads the same baseline file (once)
            rating, removed = await off_loop(self.executor, predicted_review, self.path, text)
        score = self._clip(rating)
        return baseline_review(paper_id, self.name, score, self.threshold, removed)
