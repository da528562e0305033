"""Gaming probes of the review reward: texts made from a paper that should not rate above it.

For each paper: a text made only of its highest-weight words (the reviewer's favourite words
found in the paper), the paper with those words appended three times, the paper twice, and
the paper's sentences shuffled (poured back into its paragraphs, so the layout stays). A probe
*beats* the original when its rating is strictly higher. ``papergym check-reward --reward
review`` and ``train cycle``'s check of its reward reviewer run them.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from papergym.errors import BadInputError
from papergym.records import Record
from papergym.review.guards import FUNCTION_WORDS, paragraphs, split_sentences
from papergym.review.offline import tokens

TOP_WORDS = 50
"""How many of the reviewer's highest-weight words a word-list probe uses."""
APPENDED_TIMES = 3
PROBES = ("word_list", "words_appended", "duplicated", "shuffled")


class TextScorer(Protocol):
    """What the probes need of a review reward (``ReviewReward`` has it)."""

    async def ascore_many(self, texts: Sequence[str]) -> Sequence[Any]: ...


def word_weights(reviewer: Any) -> Mapping[str, float] | None:
    """Word → weight of a reviewer that weighs words (the offline baseline's coefficients),
    else None."""
    baseline = getattr(reviewer, "baseline", None)
    terms = getattr(baseline, "terms", None)
    if not isinstance(terms, Mapping):
        return None
    return {word: float(pair[1]) for word, pair in terms.items()}


def top_words(text: str, weights: Mapping[str, float] | None, count: int = TOP_WORDS) -> list[str]:
    """The ``count`` words of ``text`` the reviewer weighs most; without weights, its most
    frequent content words (what a policy learns to repeat)."""
    found = Counter(w for w in tokens(text.lower()) if w not in FUNCTION_WORDS)
    if weights is None:
        return [w for w, _ in found.most_common(count)]
    weighed = sorted((w for w in found if w in weights), key=lambda w: (-weights[w], w))
    return weighed[:count]


def shuffled_sentences(text: str, seed: str) -> str:
    """``text`` with its sentences shuffled (seeded by ``seed``) and poured back into its
    paragraphs, each paragraph keeping its number of sentences."""
    shapes = [split_sentences(p) for p in paragraphs(text)]
    pool = [s for shape in shapes for s in shape]
    random.Random(hashlib.sha256(seed.encode("utf-8")).digest()).shuffle(pool)
    out: list[str] = []
    position = 0
    for shape in shapes:
        out.append(" ".join(pool[position : position + len(shape)]))
        position += len(shape)
    return "\n\n".join(out)


def probe_texts(text: str, weights: Mapping[str, float] | None) -> dict[str, str]:
    """The probes' texts for one paper, by probe name, the original first."""
    words = top_words(text, weights)
    return {
        "original": text,
        "word_list": " ".join(words),
        "words_appended": text.rstrip() + " " + " ".join(words * APPENDED_TIMES),
        "duplicated": text.rstrip() + "\n\n" + text.strip(),
        "shuffled": shuffled_sentences(text, text),
    }


class ProbeRow(Record):
    """One probe over the papers."""

    probe: str
    papers: int
    """Papers where both the probe and the original were scored."""
    mean_change: float | None
    """Mean rating change from the original (None: nothing scored)."""
    mean_rating: float | None
    beats: int
    """Papers where the probe rates strictly above the original."""
    fired: dict[str, int]
    """How many of its texts each guard fired on."""


class ProbeReport(Record):
    """The review reward's probes over a set of papers."""

    reward: str
    papers: int
    original_mean: float | None
    rows: list[ProbeRow]
    allowed: int
    """Papers a probe may beat the original on before the check fails."""

    @property
    def failing(self) -> list[str]:
        """The probes that beat the original on more than ``allowed`` papers."""
        return [row.probe for row in self.rows if row.beats > self.allowed]


async def probe_reward(
    reward: TextScorer,
    name: str,
    texts: Sequence[str],
    weights: Mapping[str, float] | None,
    allowed: int = 0,
) -> ProbeReport:
    """Score every probe of every paper text with ``reward`` and summarise per probe."""
    probes = [probe_texts(text, weights) for text in texts]
    flat = [t for p in probes for t in p.values()]
    scores = iter(await reward.ascore_many(flat))
    by_paper = [{probe: next(scores) for probe in p} for p in probes]
    originals = [s["original"].rating for s in by_paper if s["original"].rating is not None]
    rows = [_row(probe, by_paper) for probe in PROBES]
    return ProbeReport(
        reward=name,
        papers=len(texts),
        original_mean=statistics.fmean(originals) if originals else None,
        rows=rows,
        allowed=allowed,
    )


def _row(probe: str, by_paper: Sequence[Mapping[str, Any]]) -> ProbeRow:
    pairs = [
        (s[probe].rating, s["original"].rating)
        for s in by_paper
        if s[probe].rating is not None and s["original"].rating is not None
    ]
    fired: Counter[str] = Counter()
    for s in by_paper:
        fired.update(getattr(s[probe], "fired", None) or [])
    return ProbeRow(
        probe=probe,
        papers=len(pairs),
        mean_change=statistics.fmean(p - o for p, o in pairs) if pairs else None,
        mean_rating=statistics.fmean(p for p, _ in pairs) if pairs else None,
        beats=sum(p > o for p, o in pairs),
        fired=dict(sorted(fired.items())),
    )


PAPER_SUFFIXES = (".txt", ".md", ".tex", ".markdown")


def read_probe_papers(path: Path, limit: int | None = None) -> list[tuple[str, str]]:
    """(name, text) of the papers at ``path``: one text file, or a folder's ``*.txt``, ``*.md``,
    ``*.tex`` files in name order (at most ``limit``); none, or an unreadable one, is bad
    input."""
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in PAPER_SUFFIXES and p.is_file())
    else:
        raise BadInputError(path, "no such file or folder of papers")
    if not files:
        raise BadInputError(path, f"holds no paper text ({', '.join(PAPER_SUFFIXES)})")
    papers: list[tuple[str, str]] = []
    for file in files[:limit]:
        try:
            papers.append((file.stem, file.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as error:
            raise BadInputError(file, f"cannot read as UTF-8 text ({error})") from None
    return papers
