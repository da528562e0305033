"""The orderings a multi-way comparison shows its answers in, and the labels they carry.

Judges prefer some positions whatever they read, so every question is shown in a set of
orderings in which each system holds each position equally often: every permutation up to 3
systems, a Williams design (a balanced Latin square) beyond.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Sequence
from typing import Literal

MAX_SYSTEMS = 26
"""One label per letter."""

MAX_PERMUTED = 3
"""Up to this many systems every permutation is shown (6 at most); beyond, a Williams design."""

Design = Literal["permutations", "williams"]


def labels(count: int) -> tuple[str, ...]:
    """The labels of ``count`` answers, in the order shown: A, B, C, …"""
    if not 1 <= count <= MAX_SYSTEMS:
        raise ValueError(f"between 1 and {MAX_SYSTEMS} answers can be labelled, not {count}")
    return tuple(string.ascii_uppercase[:count])


def williams_design(count: int) -> list[tuple[int, ...]]:
    """A Williams design for ``count`` treatments: rows in which each treatment holds each
    position equally often (a Latin square) and follows each other treatment equally often.

    The first row is 0, 1, n−1, 2, n−2, …; row r adds r to it (mod n). For even n those n rows
    balance first-order carryover (each ordered pair adjacent exactly once); for odd n no
    single square can, so the mirror of each row is added: 2n rows, each pair adjacent twice.
    """
    if count < 1:
        raise ValueError("a design needs at least one treatment")
    first = [0]
    low, high = 1, count - 1
    while len(first) < count:
        if len(first) % 2:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
    rows = [tuple((value + shift) % count for value in first) for shift in range(count)]
    if count % 2:
        rows += [row[::-1] for row in rows]
    return rows


def design(count: int) -> tuple[Design, list[tuple[int, ...]]]:
    """The orderings shown for ``count`` systems: every permutation up to 3, else Williams."""
    if count <= MAX_PERMUTED:
        return "permutations", list(itertools.permutations(range(count)))
    return "williams", williams_design(count)


def orderings_of(systems: Sequence[str]) -> tuple[Design, list[tuple[str, ...]]]:
    """The design applied to ``systems`` (index i is ``systems[i]``)."""
    kind, rows = design(len(systems))
    return kind, [tuple(systems[i] for i in row) for row in rows]
