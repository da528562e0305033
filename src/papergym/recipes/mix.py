"""The discipline mix of a build: which papers ``build --mix cs=0.5,physics=0.5 --target N``
builds, and each paper's discipline from the arXiv categories ``papergym fetch`` saved.

A fetched paper's folder holds ``metadata.json`` with ``categories`` and ``primary_category``
(and more, ignored here); :func:`read_categories` reads just those, tolerating their absence.
A paper with none gets the caller's guess (the offline one from title and abstract), else
``unknown``.

The rule for a discipline with too few papers: all of its papers are taken, no other
discipline tops it up, and the shortfall is reported (a warning line and the card), so the
achieved mix says what was really built rather than drifting silently towards the target.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from papergym.errors import BadInputError
from papergym.recipes.disciplines import discipline_of, key_of_label, label_of_key
from papergym.records import content_hash
from papergym.sources.discover import PaperSource

METADATA_FILE = "metadata.json"
UNKNOWN = "unknown"
SHARE_TOLERANCE = 1e-6

Guess = Callable[[PaperSource], str | None]
"""A discipline label for a paper without categories (None: unknown)."""


# --- parsing ----------------------------------------------------------------------------------


def parse_mix(text: str) -> dict[str, float]:
    """``"cs=0.5,physics=0.5"`` as ``{"cs": 0.5, "physics": 0.5}``; a ValueError saying what is
    wrong otherwise (checked by :func:`check_mix`)."""
    mix: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, equals, share = part.partition("=")
        if not equals:
            raise ValueError(f"mix entry {part!r} is not KEY=SHARE")
        try:
            mix[key.strip()] = float(share)
        except ValueError:
            raise ValueError(
                f"mix share {share.strip()!r} of {key.strip()!r} is not a number"
            ) from None
    return check_mix(mix)


def check_mix(mix: Mapping[str, float]) -> dict[str, float]:
    """``mix`` when its keys are disciplines' and its shares, each in (0, 1], sum to 1."""
    if not mix:
        raise ValueError("the mix names no discipline")
    for key, share in mix.items():
        try:
            label_of_key(key)
        except KeyError as error:  # its message lists the known keys
            raise ValueError(error.args[0]) from None
        if not 0 < share <= 1:
            raise ValueError(f"mix share of {key!r} is {share}; each must be in (0, 1]")
    total = sum(mix.values())
    if abs(total - 1) > SHARE_TOLERANCE:
        raise ValueError(f"mix shares sum to {total:g}; they must sum to 1")
    return dict(mix)


# --- where a paper's discipline comes from ------------------------------------------------------


def metadata_path(source: PaperSource) -> Path:
    """``metadata.json`` of a source: inside a paper folder, beside an archive or .tex file."""
    return (source.path if source.kind == "folder" else source.path.parent) / METADATA_FILE


def read_categories(path: Path) -> tuple[str, ...]:
    """The arXiv categories ``path`` (a metadata.json) records, the primary one first; none
    when the file is absent or lists none. Other keys are ignored; a file that is not a JSON
    object, or categories that are not strings, are a :class:`BadInputError`."""
    if not path.is_file():
        return ()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInputError(path, f"not readable JSON: {error}") from None
    if not isinstance(data, dict):
        raise BadInputError(path, "expected a JSON object")
    primary = data.get("primary_category")
    listed = data.get("categories") or []
    if isinstance(listed, str):  # arXiv's own listing writes them space-separated
        listed = listed.split()
    found = [primary, *listed] if primary else listed
    if not isinstance(listed, list) or not all(isinstance(c, str) for c in found):
        raise BadInputError(path, "categories and primary_category must be strings")
    return tuple(dict.fromkeys(c.strip() for c in found if c.strip()))


def category_discipline(source: PaperSource) -> str | None:
    """The discipline label of a source by its saved arXiv categories (None: none saved)."""
    return discipline_of(read_categories(metadata_path(source)))


def source_disciplines(
    sources: Sequence[tuple[PaperSource, str]], guess: Guess | None = None
) -> dict[str, str]:
    """Relative source → discipline label: by categories, else ``guess``, else ``unknown``."""
    found: dict[str, str] = {}
    for source, relative in sources:
        label = category_discipline(source) or (guess(source) if guess else None)
        found[relative] = label or UNKNOWN
    return found


# --- sampling -----------------------------------------------------------------------------------


class MixRow(BaseModel):
    """One discipline of the mix: its share and count wanted, the papers there were, and taken."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    label: str
    share: float
    wanted: int
    available: int
    selected: int


class MixSelection(BaseModel):
    """The papers a mixed build builds (relative sources, in build order) and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mix: dict[str, float]
    target: int
    seed: int
    rows: tuple[MixRow, ...]
    selected: tuple[str, ...]

    @property
    def digest(self) -> str:
        """What the build folder's identity records: the selection, so a resume with another
        mix, seed or set of papers is refused rather than mixing two selections."""
        return content_hash(list(self.selected))

    def shortfalls(self) -> list[str]:
        """One line per discipline with fewer papers than its share asked for."""
        return [
            f"discipline {row.key} has {row.available} paper(s), fewer than the {row.wanted} "
            f"its share asks for: all taken, not topped up from others"
            for row in self.rows
            if row.available < row.wanted
        ]


def target_counts(mix: Mapping[str, float], target: int) -> dict[str, int]:
    """Papers per discipline: ``share × target`` rounded by largest remainder so they sum to
    ``target`` (ties go to the discipline listed first)."""
    exact = {key: share * target for key, share in mix.items()}
    counts = {key: int(value) for key, value in exact.items()}
    by_remainder = sorted(mix, key=lambda key: -(exact[key] - counts[key]))
    for key in by_remainder[: target - sum(counts.values())]:
        counts[key] += 1
    return counts


def select_mix(
    disciplines: Mapping[str, str], mix: Mapping[str, float], target: int, seed: int
) -> MixSelection:
    """Sample ``target`` sources (of relative source → label) to ``mix``, reproducibly.

    Each discipline's sample is drawn by its own generator, seeded by ``seed`` and its key, from
    its sources in sorted order: the same seed and papers give the same selection, and adding
    papers of one discipline leaves the others' samples alone.
    """
    rows: list[MixRow] = []
    selected: list[str] = []
    for key, wanted in target_counts(mix, target).items():
        label = label_of_key(key)
        pool = sorted(source for source, found in disciplines.items() if found == label)
        taken = random.Random(f"{seed}:{key}").sample(pool, min(wanted, len(pool)))
        selected += taken
        rows.append(
            MixRow(
                key=key,
                label=label,
                share=mix[key],
                wanted=wanted,
                available=len(pool),
                selected=len(taken),
            )
        )
    return MixSelection(
        mix=dict(mix), target=target, seed=seed, rows=tuple(rows), selected=tuple(sorted(selected))
    )


def achieved_mix(selection: MixSelection, domains: Sequence[str]) -> list[dict[str, object]]:
    """Target against achieved, per discipline of the mix (and any other the instances carry):
    papers selected and instances built, counts and shares, for the card."""
    built = {key: 0 for key in selection.mix}
    other = 0
    for domain in domains:
        key = key_of_label(domain)
        if key in built:
            built[key] += 1
        else:
            other += 1
    selected_total = max(len(selection.selected), 1)
    instance_total = max(len(domains), 1)
    rows: list[dict[str, object]] = [
        {
            "discipline": row.key,
            "target_share": row.share,
            "target_papers": row.wanted,
            "available_papers": row.available,
            "selected_papers": row.selected,
            "selected_share": round(row.selected / selected_total, 4),
            "instances": built[row.key],
            "instance_share": round(built[row.key] / instance_total, 4),
        }
        for row in selection.rows
    ]
    if other:
        rows.append(
            {
                "discipline": "other",
                "instances": other,
                "instance_share": round(other / instance_total, 4),
            }
        )
    return rows
