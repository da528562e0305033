"""A GGUF model as a plain transformers folder, for servers that cannot read GGUF.

``transformers serve`` serves a model folder, not a GGUF file. :func:`prepare_gguf_folder`
loads the file with transformers (dequantised), drops the quantization config that would
make the model unsaveable and the folder GGUF again, and saves model and tokenizer with
``save_pretrained``. The folder then loads, and serves, as any model folder.

It writes only under the output folder, and is resumable and idempotent: files are written
into ``OUT/.partial`` first and moved into ``OUT`` one by one, ``config.json`` last (without
it the folder is no model anything will load), then the marker ``papergym-prepared.json``
that records which file it was made from. A folder with that marker for the same model (size
and SHA-256 of the file's bytes, wherever the file lies: the same wheel installed in two
virtual environments is one model) is done: a second run does nothing. A run killed half-way
leaves no marker, and the next run starts over.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
from papergym.llm.gguf import (
    available_memory,
    read_header,
    refuse_if_too_big,
    weights_bytes,
)

MARKER = "papergym-prepared.json"
STAGING = ".partial"
# What save_pretrained writes for a causal LM and its tokenizer: the only names a folder may
# hold, besides the marker and the staging folder, for this command to write into it.
_SAVED = (
    "config.json",
    "generation_config.json",
    "model*.safetensors",
    "model.safetensors.index.json",
    "tokenizer*",
    "special_tokens_map.json",
    "added_tokens.json",
    "chat_template.jinja",
    "vocab.json",
    "merges.txt",
)


@dataclass(frozen=True)
class PreparedFolder:
    """The outcome: where, from what, and whether this run did the work."""

    folder: Path
    source: Path
    parameters: int
    context_length: int | None
    seconds: float
    already_done: bool


def prepare_gguf_folder(gguf: Path, out: Path, *, device: str = "cpu") -> PreparedFolder:
    """Make ``out`` a transformers model folder holding the model of the GGUF file ``gguf``."""
    header = read_header(gguf)  # refuses a missing or non-GGUF file in one line
    source = _source_record(gguf)
    started = time.perf_counter()
    done = _marker(out)
    if done is not None and _same_model(done.get("source"), source):
        return PreparedFolder(out, gguf, header.parameters, header.context_length, 0.0, True)
    _refuse_foreign(out, done)
    refuse_if_too_big(
        gguf, weights_bytes(header.parameters, "float32"), available_memory(device), device
    )
    staging = out / STAGING
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _save_dequantised(gguf, staging)
    saved = sorted(staging.iterdir(), key=lambda p: p.name == "config.json")  # config last
    for path in saved:
        path.replace(out / path.name)
    staging.rmdir()
    record = {"source": source, "parameters": header.parameters, "files": [p.name for p in saved]}
    partial = out / f"{MARKER}.tmp"
    partial.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    partial.replace(out / MARKER)
    seconds = time.perf_counter() - started
    return PreparedFolder(out, gguf, header.parameters, header.context_length, seconds, False)


def _source_record(gguf: Path) -> dict[str, object]:
    digest = hashlib.sha256()
    with gguf.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return {"gguf": str(gguf.resolve()), "size": gguf.stat().st_size, "sha256": digest.hexdigest()}


def _same_model(recorded: object, source: dict[str, object]) -> bool:
    """The same bytes: a path or modification time says nothing (reinstalled wheels differ)."""
    if not isinstance(recorded, dict):
        return False
    return all(recorded.get(key) == source[key] for key in ("size", "sha256"))


def _marker(out: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((out / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _refuse_foreign(out: Path, done: dict[str, Any] | None) -> None:
    """Refuse an output that is a file, holds another model, or holds files of others.

    A marker without a digest was written by an older PaperGym (which keyed on path and
    modification time): the folder is ours, and is prepared again.
    """
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "the output exists and is not a folder")
    if done is not None and "sha256" in done.get("source", {}):
        made_from = done.get("source", {}).get("gguf", "another file")
        raise BadInputError(
            out, f"holds a model prepared from {made_from}; choose another output folder"
        )
    if not out.is_dir():
        return
    ours = (MARKER, f"{MARKER}.tmp", STAGING)
    foreign = sorted(
        p.name
        for p in out.iterdir()
        if p.name not in ours and not any(fnmatch.fnmatch(p.name, n) for n in _SAVED)
    )
    if foreign:
        raise BadInputError(
            out, f"not empty and not a folder this command prepared (holds {foreign[0]})"
        )


def _save_dequantised(gguf: Path, into: Path) -> None:
    """Load ``gguf`` with transformers (dequantised) and save model and tokenizer ``into``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model: Any = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # The weights are plain tensors now; the GGUF quantizer only refuses to save them, and a
    # config that still names it would make the folder load as GGUF again.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(into)
    tokenizer.save_pretrained(into)
