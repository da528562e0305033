"""The training data ``papergym write prepare`` writes, and :func:`load_write_data` to read it.

Layout of a DATA folder (stable; ``papergym train cycle`` reads it through
:func:`load_write_data`):

``DATA/manifest.json`` — :class:`WriteManifest`: ``kind`` is always ``"write-prepare"`` (any
other folder is refused), the command line, counts, the settings used, the leakage check's
figures, and every dropped paper with its reason.

``DATA/sft.jsonl`` — one :class:`WriteExample` per paper: ``id`` (the paper's content id),
``source``, ``title``, ``split`` (``train``/``test``, by a hash of the id), ``system`` (the
writing instructions, a system message), ``prompt`` (the user message, a string: the paper's own
references — key, title, authors, year, venue and abstract where the bibliography has one — and
nothing from the paper's own text), ``completion`` (the paper in the writer's
text format, see :mod:`papergym.write.paper_text`: an outline as ``%`` comment lines, then
``\\title``, the abstract and every section, with ``\\cite{key}`` kept), and ``keys``.

``DATA/prompts.jsonl`` — one :class:`WritePrompt` per paper, the same ``id``, ``split``,
``system`` and ``prompt`` plus ``keys`` (the citable keys) and ``references``: the prompt set generation
samples from.

``DATA/drops.jsonl`` — one :class:`PrepareDrop` per paper left out (also in the manifest).

Leakage rule: no n-gram (``write.leakage_ngram``, default 8 words) of the paper's own title,
abstract or sections appears in its prompt; a reference whose text shares one is left out of
the prompt (counted), the paper's own entry (same title) too, and the finished prompt is checked
again (a paper that still fails is dropped).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl
from papergym.llm.types import Message
from papergym.records import Record
from papergym.sources.bib import Reference

DATA_KIND = "write-prepare"
MANIFEST_FILE = "manifest.json"
SFT_FILE = "sft.jsonl"
PROMPTS_FILE = "prompts.jsonl"
DROPS_FILE = "drops.jsonl"

Split = Literal["train", "test"]


class WriteExample(Record):
    """One SFT row: a paper's references as the prompt, the paper itself as the completion."""

    id: str
    source: str
    title: str
    split: Split
    system: str = Field(description="The system message: the writing instructions.")
    prompt: str = Field(description="The user message: the paper's references.")
    completion: str
    keys: tuple[str, ...] = Field(description="The keys the prompt offers for citation.")


class WritePrompt(Record):
    """One row of the prompt set: what the writer is given for one paper."""

    id: str
    source: str
    split: Split
    system: str
    prompt: str
    keys: tuple[str, ...]
    references: tuple[Reference, ...]


class PrepareDrop(Record):
    """A paper left out of the data, and why."""

    source: str
    reason: str


class LeakageFigures(Record):
    """What the leakage check did: the n-gram size and how much it left out."""

    ngram: int
    papers_checked: int
    references_left_out: int = Field(
        description="References not put in a prompt because they share an n-gram with the "
        "paper's own text, or are the paper itself."
    )


class WriteManifest(Record):
    """``manifest.json`` of a DATA folder."""

    kind: Literal["write-prepare"] = "write-prepare"
    version: str
    command: str
    papers: int = Field(description="Paper sources read.")
    examples: int
    train: int
    test: int
    drops: tuple[PrepareDrop, ...]
    leakage: LeakageFigures
    settings: dict[str, object]


@dataclass(frozen=True)
class WriteData:
    """A loaded DATA folder."""

    path: Path
    manifest: WriteManifest
    examples: list[WriteExample]
    prompts: list[WritePrompt]

    def split(self, name: Split) -> list[WritePrompt]:
        return [p for p in self.prompts if p.split == name]


def chat(row: WritePrompt | WriteExample) -> list[Message]:
    """The row's prompt as chat messages (system, then user)."""
    return [Message(role="system", content=row.system), Message(role="user", content=row.prompt)]


# Files that name the command whose folder was given instead (a build, an eval, a run...).
_OTHER_KINDS = {
    "instances.jsonl": "a `papergym build` folder",
    "plan.json": "a `papergym eval` folder",
    "reviews.jsonl": "a `papergym review` folder",
    "papers.jsonl": "a `papergym ingest` folder",
    "run.json": "a `papergym train` run folder",
}


def load_write_data(path: Path) -> WriteData:
    """The DATA folder at ``path``, or a one-line :class:`BadInputError` (not a folder, no or a
    foreign manifest, a folder from another command, a missing or invalid file, no prompts)."""
    path = Path(path)
    if not path.is_dir():
        raise BadInputError(path, "no such folder" if not path.exists() else "not a folder")
    manifest_path = path / MANIFEST_FILE
    if not manifest_path.is_file():
        other = next((what for name, what in _OTHER_KINDS.items() if (path / name).exists()), None)
        if other:
            raise BadInputError(path, f"is {other}, not `papergym write prepare` data")
        raise BadInputError(path, "not `papergym write prepare` data: no manifest.json")
    try:
        raw = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise BadInputError(manifest_path, "not JSON") from None
    kind = raw.get("kind") if isinstance(raw, dict) else None
    if kind != DATA_KIND:
        raise BadInputError(
            manifest_path,
            f"made by another command (kind {kind!r}), not `papergym write prepare` data",
        )
    try:
        manifest = WriteManifest.model_validate(raw)
    except ValidationError as error:
        first = str(error).splitlines()[:2]
        raise BadInputError(manifest_path, f"not a valid manifest: {' '.join(first)}") from None
    examples = read_jsonl(path / SFT_FILE, WriteExample)
    prompts = read_jsonl(path / PROMPTS_FILE, WritePrompt)
    if not prompts:
        raise BadInputError(path / PROMPTS_FILE, "no prompts")
    return WriteData(path=path, manifest=manifest, examples=examples, prompts=prompts)
