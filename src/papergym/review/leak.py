"""The surface-leak check: can a classifier that sees only surface marks predict acceptance?

Camera-ready papers carry author names, venue lines and acknowledgements; submissions carry
"Anonymous authors". A classifier given only those marks, and nothing of the science, is
fitted with cross-validation before and after anonymisation: before, its AUC for acceptance
shows how much the marks give away; after, it must be near chance (0.5), or the reviewer could
still read the decision off the surface.

The marks it sees are found by rules of their own, not by the anonymiser's (a check that reused
the anonymiser's parse would only confirm itself):

- the front matter: the words of the lines before the first line of running prose (a line of 8
  or more words, mostly lowercase), at most the first 30 lines: title, authors, affiliations,
  venue lines, the abstract's heading;
- acknowledgement and funding paragraphs: the words of every paragraph that mentions
  acknowledgements, thanks, grants, funding or support;
- a fixed list of surface marks counted over the whole text (emails, "anonymous",
  "double-blind", "published as", code-repository hosts, "equal contribution", what a cut URL
  leaves ("available at ]"), a release "upon acceptance", ...).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from papergym.records import Record
from papergym.review.anonymise import anonymise
from papergym.review.metrics import auc

FRONT_LINES = 30
SURFACE_MARKS: dict[str, str] = {
    "email": r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+",  # from a run's start: linear time
    "anonymous": r"\banonymous\b",
    "double-blind": r"double[- ]blind",
    "under-review": r"under review",
    "published-as": r"published as|accepted (?:at|to|as)",
    "conference-paper": r"conference paper",
    "github": r"github\.(?:com|io)|gitlab\.com",
    "anonymous-repo": r"4open\.science",
    "equal-contribution": r"equal(?:ly)? contribut|contributed equally",
    "corresponding-author": r"corresponding author|correspondence to",
    "university": r"\buniversity\b|\binstitute\b|\bdepartment\b",
    "company": r"\b(?:inc|ltd|llc|corp)\b\.?|research lab",
    "acknowledgement": r"acknowledge?ments?",
    "thanks": r"\bthank",
    "grant": r"\bgrants?\b|\bfellowship\b|\bfunded\b|\bfunding\b",
    "supported-by": r"supported (?:\w+ ){0,3}by",
    # what cutting a URL out of its sentence leaves ("Code is available at ]"), and what only a
    # submission says of its code
    "url-stub": r"\b(?:available|found|released|hosted|provided)\s+(?:at|on|from|here|in)\s*:?"
    r"[\s*_]*\]",
    "upon-acceptance": r"\bupon (?:the )?(?:paper'?s? )?acceptance|\bduring the (?:review|"
    r"discussion|rebuttal) (?:phase|period|stage)",
}
_MARKS = {name: re.compile(pattern, re.IGNORECASE) for name, pattern in SURFACE_MARKS.items()}
_ACK_PARAGRAPH = re.compile(
    r"acknowledg|\bthank|grateful|\bgrants?\b|\bfund(?:ed|ing)\b|supported (?:\w+ ){0,3}by",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z]{2,}")


def _is_prose_line(line: str) -> bool:
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", line)
    return len(words) >= 8 and sum(w[0].islower() for w in words) / len(words) >= 0.6


def front_matter(text: str) -> str:
    """The lines before the first line of running prose (at most :data:`FRONT_LINES`)."""
    lines = [line for line in text.splitlines() if line.strip()][:FRONT_LINES]
    end = next((i for i, line in enumerate(lines) if _is_prose_line(line)), len(lines))
    return "\n".join(lines[:end])


def acknowledgement_paragraphs(text: str) -> str:
    """Every paragraph that mentions acknowledgements, thanks, grants, funding or support."""
    paragraphs = re.split(r"\n\s*\n", text)
    return "\n".join(p for p in paragraphs if _ACK_PARAGRAPH.search(p))


def surface_tokens(text: str) -> list[str]:
    """The surface features of a paper, as tokens: ``front:WORD``, ``ack:WORD`` and
    ``mark:NAME`` (once per occurrence of a fixed mark)."""
    front = [f"front:{w}" for w in set(_WORD.findall(front_matter(text).lower()))]
    ack = [f"ack:{w}" for w in set(_WORD.findall(acknowledgement_paragraphs(text).lower()))]
    marks = [f"mark:{name}" for name, pattern in _MARKS.items() for _ in pattern.finditer(text)]
    return front + ack + marks


class LeakCheck(Record):
    """Cross-validated AUC for acceptance of a classifier that sees only surface marks."""

    before: float | None = None
    after: float | None = None
    papers: int
    accepted: int
    folds: int
    method: str


def surface_auc(
    texts: Sequence[str], accepted: Sequence[bool], *, folds: int, seed: int
) -> float | None:
    """Out-of-fold AUC of a logistic regression on :func:`surface_tokens` (binary presence of
    words, log counts of marks); None when a class has fewer papers than folds."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(accepted, dtype=int)
    if min(int(labels.sum()), int(len(labels) - labels.sum())) < folds:
        return None
    vectoriser: Any = CountVectorizer(analyzer=surface_tokens, min_df=2)
    try:
        counts = vectoriser.fit_transform(list(texts)).astype(float)
    except ValueError:  # no feature occurs twice: nothing on the surface to learn from
        return 0.5
    counts.data = np.log1p(counts.data)
    scores = np.zeros(len(labels))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for train, held in splitter.split(np.zeros(len(labels)), labels):
        model = LogisticRegression(C=1.0, max_iter=2000)
        model.fit(counts[train], labels[train])
        scores[held] = model.decision_function(counts[held])
    value = auc(scores.tolist(), [bool(v) for v in labels])
    return None if value is None or math.isnan(value) else value


def surface_leak(
    texts: Sequence[str],
    accepted: Sequence[bool],
    *,
    folds: int = 5,
    seed: int = 0,
    anonymised: Sequence[str] | None = None,
) -> LeakCheck:
    """The surface-only classifier's AUC on the raw texts and on their anonymised versions
    (``anonymised``, when the caller has them already)."""
    if anonymised is None:
        anonymised = [anonymise(t).text for t in texts]
    return LeakCheck(
        before=surface_auc(texts, accepted, folds=folds, seed=seed),
        after=surface_auc(anonymised, accepted, folds=folds, seed=seed),
        papers=len(texts),
        accepted=sum(accepted),
        folds=folds,
        method=f"logistic regression on front-matter words, acknowledgement-paragraph words and "
        f"{len(SURFACE_MARKS)} fixed surface marks; {folds}-fold stratified cross-validation",
    )
