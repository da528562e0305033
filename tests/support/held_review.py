"""A review reward server whose reviewer's text work holds the interpreter lock for a while, run
as its own process (``python -m support.held_review [inline]``), so that a test measures the
server from outside: a client in the same process would be held up by the same lock.

The reviewer sends its work to the server's worker processes (:func:`review_workers`), or, with
``inline``, does it on the event loop, as the reviewers did before. It creates the file named by
``$HELD_STARTED`` when the work starts.
"""

from __future__ import annotations

import os
import re
import sys
from concurrent.futures import Executor
from pathlib import Path

from papergym.netutil import bind
from papergym.review.records import PaperReview
from papergym.review.reviewer import off_loop
from papergym.review.reward import ReviewReward
from papergym.review.server import review_workers, serve_review

LETTERS = 23
"""The work's size: each letter doubles its time (about 1.5 s at 23 on a loaded machine)."""


def hold_the_interpreter(letters: int) -> int:
    """Work that holds the interpreter lock in one C call, as a long regex over a text does."""
    return int(re.fullmatch(r"(?:a|a)+b", "a" * letters) is None)


class HeldReviewer:
    """A reviewer whose text work holds the interpreter lock, in its executor when it has one."""

    name = "held"

    def __init__(self, executor: Executor | None) -> None:
        self.executor = executor

    async def review(self, paper_id: str, text: str) -> PaperReview:
        Path(os.environ["HELD_STARTED"]).touch()
        await off_loop(self.executor, hold_the_interpreter, LETTERS)
        return PaperReview(
            paper_id=paper_id, source=paper_id, reviewer_model="held", baseline=True, score=5.5,
            decision="accept", threshold=5.5,
        )  # fmt: skip


def main(inline: bool) -> int:
    executor = review_workers()
    reward = ReviewReward(HeldReviewer(None if inline else executor), executor=executor)
    return serve_review(reward, bind("127.0.0.1", 0))


if __name__ == "__main__":
    sys.exit(main(inline=sys.argv[1:] == ["inline"]))
