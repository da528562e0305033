"""Disciplines: arXiv categories → the broad discipline an instance is labelled with.

The mapping is data (``disciplines.yaml`` beside this module, shipped in the wheel); this
module loads it into typed records and answers, purely, which discipline a list of categories
belongs to (:func:`discipline_of`) and what a ``--mix`` key names (:func:`label_of_key`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

DATA_FILE = "disciplines.yaml"


class Discipline(BaseModel):
    """One discipline: its label (what an instance's ``domain`` says), its short ``--mix`` key
    and the arXiv archives or exact categories it covers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    key: str
    categories: tuple[str, ...] = Field(min_length=1)


class DisciplineMap(BaseModel):
    """Every discipline, and the category (or archive) → label lookup they make."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    disciplines: tuple[Discipline, ...]

    @property
    def by_category(self) -> dict[str, str]:
        return {c: d.label for d in self.disciplines for c in d.categories}

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(d.key for d in self.disciplines)


def parse_disciplines(data: Mapping[str, Any]) -> DisciplineMap:
    """The map from the YAML's data (label → {key, categories}); a category claimed twice or a
    key used twice is a ValueError (the lookup would depend on the file's order)."""
    found = DisciplineMap(
        disciplines=tuple(Discipline(label=label, **body) for label, body in data.items())
    )
    categories = [c for d in found.disciplines for c in d.categories]
    if len(set(categories)) != len(categories) or len(set(found.keys)) != len(found.keys):
        raise ValueError(f"{DATA_FILE}: a category or key is listed under two disciplines")
    return found


@cache
def load_disciplines() -> DisciplineMap:
    """The shipped mapping (read once)."""
    text = resources.files("papergym.recipes").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse_disciplines(yaml.safe_load(text))


def discipline_of(categories: Sequence[str], mapping: DisciplineMap | None = None) -> str | None:
    """The discipline label of the first of ``categories`` (primary first) that the mapping
    knows, by exact category, then by archive (``astro-ph.GA`` → ``astro-ph``); None when no
    category is known."""
    lookup = (mapping or load_disciplines()).by_category
    for category in categories:
        name = category.strip()
        found = lookup.get(name) or lookup.get(name.split(".", 1)[0])
        if found is not None:
            return found
    return None


def label_of_key(key: str, mapping: DisciplineMap | None = None) -> str:
    """The label of a ``--mix`` key (``cs`` → ``computer science``); a KeyError naming the
    known keys for any other."""
    found = mapping or load_disciplines()
    for discipline in found.disciplines:
        if discipline.key == key:
            return discipline.label
    raise KeyError(f"unknown discipline {key!r} (known: {', '.join(found.keys)})")


def key_of_label(label: str, mapping: DisciplineMap | None = None) -> str | None:
    """The ``--mix`` key of a discipline label, None for a label outside the map."""
    for discipline in (mapping or load_disciplines()).disciplines:
        if discipline.label == label:
            return discipline.key
    return None
