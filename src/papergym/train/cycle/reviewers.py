"""The reviewers ``papergym train cycle`` rewards and watches with, behind ``ReviewReward``.

``cycle.reviewer`` and ``cycle.watch`` name one each: ``llm`` (the ``review`` section's LLM
reviewer, role ``reviewer``), ``offline`` (the fitted baseline of ``papergym review fit``) or
``structure``, a rule check of a paper's form defined here: which required sections it has and
whether it cites only keys it may cite. The rule check costs nothing and cannot be flattered by
style, so it is the natural reward-hacking watch next to a learned reviewer, and the checkable
reviewer of the CPU benchmark.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from papergym.errors import BadInputError
from papergym.review.records import ICLR, PaperReview, VenueScale, baseline_review

SECTION = re.compile(r"\\section\*?\{([^}]*)\}|^#{1,3}\s+(.+?)\s*$", re.MULTILINE)
"""A section heading: LaTeX ``\\section{Name}`` or markdown ``# Name`` / ``## Name``."""
CITE = re.compile(r"\\cite[pt]?\*?\{([^}]*)\}")
DEFAULT_SECTIONS: tuple[str, ...] = ("introduction", "method", "experiments", "conclusion")


class ScoreLike(Protocol):
    """What the loop reads from a review reward's score (``ReviewScore`` has it)."""

    @property
    def value(self) -> float | None: ...

    @property
    def rating(self) -> float | None: ...

    @property
    def reason(self) -> str | None: ...


class PaperScorer(Protocol):
    """Anything that scores many texts at once: ``ReviewReward`` is one."""

    async def ascore_many(self, texts: Sequence[str]) -> Sequence[ScoreLike]: ...


def sections_of(text: str) -> list[str]:
    """The section headings of ``text``, lower-cased, in order."""
    return [(m.group(1) or m.group(2)).strip().lower() for m in SECTION.finditer(text)]


def citations_of(text: str) -> list[str]:
    """Every key cited with ``\\cite{a,b}`` (also ``\\citep``, ``\\citet``), in order."""
    return [k.strip() for m in CITE.finditer(text) for k in m.group(1).split(",") if k.strip()]


@dataclass
class StructureReviewer:
    """A deterministic reviewer of a paper's form (the ``Reviewer`` protocol).

    Checks, each worth the same: every required section is present (one check per section,
    matched by prefix so "Experiments and results" counts as "experiments"), the sections
    come in the required order, the paper cites something, and every cited key is allowed.
    ``allowed_keys(text)`` says which keys the paper may cite (None: any key); the rating is
    ``low + (high − low) × passed/total`` on the venue's scale.
    """

    required: Sequence[str] = DEFAULT_SECTIONS
    allowed_keys: Callable[[str], Collection[str] | None] = field(default=lambda text: None)
    scale: VenueScale = ICLR
    threshold: float = 5.5
    name: str = "structure"

    def checks(self, text: str) -> list[bool]:
        """One boolean per check, in the order the class docstring gives them."""
        found = sections_of(text)
        positions = [_position(found, name) for name in self.required]
        present = [p is not None for p in positions]
        placed = [p for p in positions if p is not None]
        cited = citations_of(text)
        allowed = self.allowed_keys(text)
        return [
            *present,
            all(present) and placed == sorted(placed),
            bool(cited),
            bool(cited) and (allowed is None or all(k in allowed for k in cited)),
        ]

    def rating(self, text: str) -> float:
        passed = self.checks(text)
        low, high = self.scale.low, self.scale.high
        return low + (high - low) * sum(passed) / len(passed)

    async def review(self, paper_id: str, text: str) -> PaperReview:
        score = self.rating(text)
        return baseline_review(paper_id, self.name, score, self.threshold)


def _position(found: Sequence[str], name: str) -> int | None:
    return next((i for i, heading in enumerate(found) if heading.startswith(name)), None)


def build_reviewer(kind: str, config: Any) -> Any:
    """The reviewer ``kind`` names, from the configuration's ``review`` and ``llm`` sections."""
    settings = config.review
    if kind == "structure":
        from papergym.review.reviewer import DEFAULT_THRESHOLD

        threshold = settings.threshold if settings.threshold is not None else DEFAULT_THRESHOLD
        return StructureReviewer(threshold=threshold)
    if kind == "offline":
        try:
            from papergym.review.offline import OfflineReviewer
        except ImportError as error:
            raise BadInputError(None, f"the offline reviewer is unavailable ({error})") from None
        return OfflineReviewer(path=settings.baseline, threshold=settings.threshold)
    if kind == "llm":
        if not config.llm.configured:
            raise BadInputError(
                None,
                "cycle reviewer llm needs an LLM (llm: in the config, role reviewer); or set "
                "cycle.reviewer=offline",
            )
        from papergym.llm.client import LLMClient
        from papergym.review.reviewer import LLMReviewer

        return LLMReviewer.from_settings(LLMClient.from_config(config.llm), settings)
    raise BadInputError(None, f"unknown reviewer {kind!r}: llm, offline or structure")


def build_scorer(kind: str, config: Any) -> PaperScorer:
    """``ReviewReward`` around the reviewer ``kind`` names, guarded as ``review.guards.apply``
    says (the rule check of structure is never guarded: it reads no words)."""
    from papergym.review.reward import ReviewReward
    from papergym.review.runtime import guards_for

    guards = guards_for(config.review, kind)
    reward: PaperScorer = ReviewReward(build_reviewer(kind, config), guards=guards)
    return reward
