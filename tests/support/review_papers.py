"""A synthetic written paper for the review reward's guards: headed sections of paragraphs
whose sentences share their paragraph's own words (as written text does), so neighbouring
sentences overlap more than distant ones, and no sentence repeats another."""

from __future__ import annotations

from pathlib import Path

from papergym.review.offline import Baseline, Provenance, baseline_json, tokens

FAVOURITES = frozenset({"sparaion", "grapaity", "protaure", "auctaance"})
"""Words of :func:`synthetic_paper` a word-weight reviewer of the tests favours."""
SECTIONS = ("Introduction", "Method", "Experiments", "Conclusion")
STEMS = ("spar", "grap", "prot", "auct", "memor", "rewar", "visi", "speec", "lamin", "orbit")
SUFFIXES = ("ion", "ment", "ness", "ity", "ure", "ance", "ism", "ing")
PATTERNS = (
    "The {0} of the {1} is tied to the {2} and to the {3} in this {4}.",
    "We show that a {2} with its {4} makes the {0} more like the {1}.",
    "When the {3} grows, the {1} and the {2} follow it into the {0}.",
    "It is the {4} that sets how the {3} and the {0} meet in a {1}.",
    "Our {1} keeps the {0} apart from the {2}, as the {3} would {4}.",
)


def _sentence(pattern: int, pool: list[str], shift: int) -> str:
    picks = [pool[(shift + k) % len(pool)] for k in range(5)]
    text = PATTERNS[pattern % len(PATTERNS)].format(*picks)
    return text[0].upper() + text[1:]


def synthetic_paper(markdown: bool = False, paragraphs_per_section: int = 2) -> str:
    """A paper of four headed sections, ``paragraphs_per_section`` paragraphs each, five
    sentences a paragraph, each paragraph with its own eight words."""
    parts: list[str] = ["A Study of Things"]
    paragraph = 0
    for number, name in enumerate(SECTIONS, start=1):
        parts.append(f"## {name}" if markdown else f"{number} {name.upper()}")
        for _ in range(paragraphs_per_section):
            stem = STEMS[paragraph % len(STEMS)] + "abcdefghij"[paragraph // len(STEMS)]
            pool = [stem + suffix for suffix in SUFFIXES]
            sentences = (_sentence(i + 2 * paragraph, pool, i + paragraph) for i in range(5))
            parts.append(" ".join(sentences))
            paragraph += 1
    return "\n\n".join(parts) + "\n"


def write_baseline(path: Path, paper: str) -> Path:
    """A fitted-baseline file whose only words are the paper's: the favourites
    weigh +2, every other word of it nothing (a word-weight reviewer with known favourites)."""
    words = set(tokens(paper.lower()))
    terms = {w: (1.0, 2.0 if w in FAVOURITES else 0.0) for w in sorted(words)}
    provenance = Provenance(
        command="test",
        data="test",
        papers=1,
        ratings=1,
        accepted=0,
        version="0",
        sklearn="0",
        date="2026-12-02",
        selection="none",
    )
    baseline = Baseline(
        alpha=1.0,
        intercept=5.0,
        terms=terms,
        threshold=5.5,
        human_threshold=5.5,
        provenance=provenance,
    )
    path.write_text(baseline_json(baseline), encoding="utf-8")
    return path
