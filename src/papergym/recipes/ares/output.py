"""The output folder of an ARES build: the settings a resumed build must match, and the corpus.

``build.yaml`` holds :class:`AresSettings` (what decides the output); a folder built with other
settings is refused naming each key that differs, as for paper builds
(:mod:`papergym.recipes.output`, which also writes it: ``start_output``), whose rules for the
models apply: each role's model and where it is served (an earlier release's build.yaml without
endpoints resumes without comparing them). ``corpus.json`` holds the corpus files and their
sizes: rows are numbered by their position in the corpus, so a corpus changed under a build (but
for files added after the others, or rows appended to the last one) would move rows between
shards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict

from papergym import __version__
from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.recipes.ares.corpus import Corpus
from papergym.recipes.ares.shards import Mode, ShardStore
from papergym.recipes.output import SETTINGS_FILE, UNRECORDED_BEFORE, refuse_changes
from papergym.runfolder import check_output_path, differences, is_empty

# --- settings: what a resumed build must match ---------------------------------------------------


class AresSettings(BaseModel):
    """Everything that decides an ARES build's output; saved as build.yaml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recipe: Literal["ares"] = "ares"
    mode: Mode = "offline"
    shard_size: int = 1000
    columns: dict[str, str] = {}
    steps: dict[str, Any] = {}  # the ares section's keys that change what the steps do
    models: dict[str, str] = {}  # role → "backend:model"
    endpoints: dict[str, str] = {}  # role → where that model is served (recipes.output.served_by)
    papergym_version: str = __version__

    def identity(self, without: frozenset[str] = frozenset()) -> dict[str, Any]:
        """What must not change under a resumed build. The mode may go from offline to llm: an
        offline folder is the first half of the same build (the offline steps run again, free)."""
        return self.model_dump(exclude={"papergym_version", "mode", *without})


def check_ares_output(out: Path, settings: AresSettings) -> bool:
    """Whether ``out`` resumes an ARES build (True) or is new; writes nothing, refuses the rest."""
    check_output_path(out)
    if is_empty(out):
        return False
    path = out / SETTINGS_FILE
    try:
        previous = yaml.safe_load(path.read_text(encoding="utf-8"))
        old = AresSettings.model_validate({**previous, "papergym_version": ""})
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, TypeError):
        raise BadInputError(
            out, f"output folder is not empty and holds no ARES build ({SETTINGS_FILE})"
        ) from None
    # An offline build used no model: the LLM run that continues it chooses them.
    without = frozenset({"models", "endpoints"}) if old.mode == "offline" else frozenset()
    without |= frozenset(key for key in UNRECORDED_BEFORE if key not in previous)
    changes = differences(old.identity(without), settings.identity(without), "(none)", group=True)
    refuse_changes(out, "ARES build", changes)
    if old.mode == "llm" and settings.mode == "offline":
        raise BadInputError(
            out, "output folder holds an LLM build; an offline run would add nothing to it"
        )
    return True


CORPUS_FILE = "corpus.json"


def _source_bytes(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def corpus_sizes(corpus: Corpus) -> list[tuple[str, int]]:
    return [(source.name, _source_bytes(source.path)) for source in corpus.sources]


def check_corpus(out: Path, corpus: Corpus) -> None:
    """Refuse a corpus that changed under a build, but for files added after the earlier ones
    or the last one grown: positions decide shards, so a file changed, removed or added before
    others would move rows into shards already finished."""
    path = out / CORPUS_FILE
    if not path.is_file():
        return
    try:
        before = [(str(n), int(b)) for n, b in json.loads(path.read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError):  # damaged: without it a changed corpus goes unseen
        raise BadInputError(path, "unreadable; remove the build folder or use another -o") from None
    now = corpus_sizes(corpus)
    for index, (name, size) in enumerate(before):
        last = index == len(before) - 1
        if index >= len(now) or now[index][0] != name:
            found = now[index][0] if index < len(now) else "nothing"
            reason = f"{name} was file {index + 1} of the corpus, now {found}"
        elif now[index][1] != size and not (last and now[index][1] > size):
            reason = f"{name} changed ({size:,} → {now[index][1]:,} bytes)"
        else:
            continue
        raise BadInputError(
            out,
            f"the corpus changed since this build started ({reason}); rows would move between "
            "shards: use a new output folder (adding files after the others is fine)",
        )


def record_corpus(out: Path, corpus: Corpus) -> None:
    write_text_atomic(out / CORPUS_FILE, json.dumps(corpus_sizes(corpus), indent=1))


def unfinished_note(out: Path) -> str | None:
    """What an ARES build folder without ``instances.jsonl`` holds and what to run next (for
    ``papergym export``); None when ``out`` holds no ARES build."""
    try:
        data = yaml.safe_load((out / SETTINGS_FILE).read_text(encoding="utf-8"))
        settings = AresSettings.model_validate({**data, "papergym_version": ""})
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError, TypeError):
        return None
    records = list(ShardStore(out, settings.shard_size).records().values())
    offline = [r for r in records if r.mode == "offline"]
    if settings.mode == "offline":
        read = sum(r.documents for r in offline)
        kept = sum(r.kept for r in offline)
        return (
            f"an offline ARES build, no instances yet: of {read:,} document(s) read, the "
            f"offline steps kept {kept:,} (kept-*.jsonl); writing questions and rubrics needs "
            f"an LLM: run `papergym build CORPUS --recipe ares -o {out}` again with --base-url "
            "and --model (or --llm-config), then export"
        )
    done = sum(r.mode == "llm" for r in records)
    return (
        f"an ARES build that has not finished ({done} shard(s) done; instances.jsonl is "
        f"written at the end of a run): run the same `papergym build CORPUS --recipe ares -o "
        f"{out}` again to finish it, then export"
    )
