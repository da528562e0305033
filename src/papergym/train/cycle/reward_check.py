"""``train cycle``'s check of its reward reviewer before any training: the gaming probes.

A policy trained against a reward learns whatever the reward pays for. Before the first round,
the reward's probes (:mod:`papergym.review.probes`: a word list, words appended, the paper
twice, its sentences shuffled) run on a few of the data's own papers (the training examples'
reference papers, ``cycle.probe_papers``). A probe that rates above its paper on any of them
fails the check, and the run is refused unless ``cycle.force_reward`` is set
(``--force-reward``); either way the run folder records the result in ``reward-check.json``
and the summary.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from papergym.errors import BadInputError
from papergym.records import Record
from papergym.review.probes import ProbeReport, TextScorer, probe_reward, word_weights
from papergym.train.settings import CycleSettings

CHECK_FILE = "reward-check.json"


class RewardCheck(Record):
    """The reward reviewer's probes before training, and whether the run went on regardless."""

    report: ProbeReport | None
    """The probes (None: ``cycle.probe_papers`` is 0, or the data has no reference papers)."""
    failing: list[str]
    """Probes that beat their paper on some paper."""
    forced: bool
    """The run went on although probes failed (``cycle.force_reward``)."""


def probe_papers(settings: CycleSettings) -> list[str]:
    """The first ``cycle.probe_papers`` reference papers of the data's training examples."""
    if settings.data is None or settings.probe_papers == 0:
        return []
    from papergym.write.data import load_write_data

    examples = load_write_data(settings.data).examples
    papers = [e.completion for e in examples if e.split == "train" and e.completion.strip()]
    return papers[: settings.probe_papers]


def check_reward_reviewer(
    settings: CycleSettings, reward: TextScorer, papers: Sequence[str]
) -> RewardCheck:
    """The probes of ``reward`` on ``papers``; a failing probe is refused (bad input, exit 2)
    unless ``cycle.force_reward``."""
    if not papers:
        return RewardCheck(report=None, failing=[], forced=False)
    name = getattr(reward, "name", type(reward).__name__)
    weights = word_weights(getattr(reward, "reviewer", None))
    report = asyncio.run(probe_reward(reward, str(name), papers, weights, allowed=0))
    new_loop = getattr(reward, "new_loop", None)
    if callable(new_loop):  # the rounds run on another event loop
        new_loop()
    failing = report.failing
    if failing and not settings.force_reward:
        worst = max((r for r in report.rows if r.probe in failing), key=lambda r: r.beats)
        raise BadInputError(
            None,
            f"the reward reviewer ({settings.reviewer}) is gamed by its probes: "
            f"{', '.join(failing)} (e.g. {worst.probe} beats the paper on {worst.beats} of "
            f"{worst.papers}); guard it (review.guards) or pass --force-reward, which the run "
            "records",
        )
    return RewardCheck(report=report, failing=failing, forced=bool(failing))
