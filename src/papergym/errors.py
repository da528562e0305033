"""Typed errors shared by every PaperGym command.

The CLI maps them to exit codes: :class:`BadInputError` → 2 (the user's input or usage is wrong),
anything else → 1 (a bug or an environment failure on our side).
"""

from __future__ import annotations

from pathlib import Path


class PaperGymError(Exception):
    """Base class of every error PaperGym raises on purpose."""


class BadInputError(PaperGymError):
    """The user's input cannot be used: a missing path, a binary file, a corrupt archive...

    ``str(error)`` is one line that names the file and the reason, ready to print.
    """

    def __init__(self, path: str | Path | None, reason: str) -> None:
        self.path = str(path) if path is not None else None
        self.reason = reason
        super().__init__(f"{self.path}: {reason}" if self.path else reason)
