"""The reviewer scores a round's papers (and the watch scores them too); each input's best and
worst paper become a preference pair."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from papergym.errors import PaperGymError
from papergym.train.cycle.records import CycleInput, Pair, Paper, Skip, select_pair
from papergym.train.cycle.reviewers import PaperScorer
from papergym.train.progress import PhaseFactory, PhaseHook


class ReviewerUnreachable(PaperGymError):
    """The reviewer's endpoint never answered for some papers of a round: the round is not
    finished (its papers are not saved), and the same command retries it."""

    def __init__(self, number: int, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__(f"round {number}: {len(reasons)} paper(s) not reviewed: {reasons[0]}")


def score_papers(
    runner: asyncio.Runner,
    inputs: Sequence[CycleInput],
    generated: Sequence[Sequence[tuple[str, int]]],
    reward: PaperScorer,
    watch: PaperScorer | None,
    phase: PhaseFactory | None = None,
    name: str = "reviewing",
) -> list[Paper]:
    """Every generated paper with the reward's score and, when there is a watch, its score;
    ``phase`` gets the progress of each reviewer (``name``, ``name`` + " (watch)")."""
    texts = [text for group in generated for text, _ in group]

    def hook(label: str) -> PhaseHook | None:
        return phase(label, len(texts), "papers") if phase is not None else None

    scores = runner.run(_score_all(reward, texts, hook(name)))
    watched = (
        runner.run(_score_all(watch, texts, hook(f"{name} (watch)")))
        if watch is not None
        else [None] * len(texts)
    )
    papers: list[Paper] = []
    index = 0
    for item, group in zip(inputs, generated, strict=True):
        for sample, (text, tokens) in enumerate(group):
            score, seen = scores[index], watched[index]
            papers.append(
                Paper(
                    input_id=item.id,
                    sample=sample,
                    text=text,
                    tokens=tokens,
                    words=len(text.split()),
                    score=score.value,
                    rating=score.rating,
                    reason=score.reason,  # a partial score's too: it may name a failure
                    watch_score=seen.value if seen is not None else None,
                )
            )
            index += 1
    return papers


async def _score_all(
    scorer: PaperScorer | None, texts: Sequence[str], on_scored: PhaseHook | None = None
) -> list[Any]:
    """The scores of ``texts``, reviewed concurrently (the scorer bounds how many at once);
    ``on_scored`` is told the count done as each one finishes."""
    assert scorer is not None
    if on_scored is None:
        return list(await scorer.ascore_many(texts))
    done = 0

    async def one(text: str) -> Any:
        nonlocal done
        (score,) = await scorer.ascore_many([text])
        done += 1
        on_scored(done, {})
        return score

    return list(await asyncio.gather(*(one(text) for text in texts)))


def pairs_of(
    inputs: Sequence[CycleInput], papers: Sequence[Paper]
) -> tuple[list[Pair], list[Skip]]:
    """One pair per input whose papers give one; the rest as skips with their reason."""
    pairs: list[Pair] = []
    skips: list[Skip] = []
    for item in inputs:
        chosen = select_pair(item, [p for p in papers if p.input_id == item.id])
        (pairs if isinstance(chosen, Pair) else skips).append(chosen)  # type: ignore[arg-type]
    return pairs, skips
