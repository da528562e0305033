"""Where a writer cycle starts: the base model, or the policy ``papergym train write-sft`` made.

Kept apart from :mod:`papergym.train.write_sft` (which uses the cycle's run-folder checks) so the
two do not import each other."""

from __future__ import annotations

from pathlib import Path

from papergym.errors import BadInputError

WRITE_SFT_DIR = "write-sft"
"""The stage folder of a write-sft run; its ``final`` holds the trained writer."""


def starting_policy(init_from: Path) -> Path:
    """The weights a cycle starts from, given ``cycle.init_from``: a finished write-sft run
    folder (its ``write-sft/final``) or a model folder (with ``config.json``)."""
    for candidate in (init_from / WRITE_SFT_DIR / "final", init_from):
        if (candidate / "config.json").is_file():
            return candidate
    if (init_from / WRITE_SFT_DIR).is_dir():
        raise BadInputError(
            init_from, "write-sft has not finished here (no write-sft/final): run it again first"
        )
    raise BadInputError(
        init_from,
        "is neither a `papergym train write-sft` run folder nor a model folder (no config.json)",
    )
