"""What is known about one endpoint beyond its configuration: the structured-output mode it
takes, how fast it generates, and the model name it answers with.

``papergym llm-check`` measures these and saves them in ``endpoints.json`` beside the response
cache (``<cache_dir>/endpoints.json``), keyed by model and normalised endpoint (credentials
stripped); every later run reads the file, so a backend with ``structured_output: auto`` starts
at the mode the check found, and an endpoint's request timeouts start from the speed it
measured. Within one process, the mode a server was seen to take is remembered per endpoint
(:data:`LEARNED_MODES`), so one refusal is paid once, not once per call.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from papergym.llm.identity import normalise_endpoint
from papergym.llm.servers import SchemaMode

RECORDS_FILE = "endpoints.json"


class EndpointRecord(BaseModel):
    """One endpoint as ``llm-check`` found it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    structured_output: SchemaMode | None = Field(
        default=None, description="The best structured-output mode the endpoint took."
    )
    tokens_per_s: float | None = Field(
        default=None, description="Tokens per second of one request alone."
    )
    recommended_concurrency: int | None = Field(
        default=None, description="In-flight requests that still raised the total speed."
    )
    answered_as: str | None = Field(
        default=None, description="The model name in the answers, when not the one asked for."
    )
    checked_at: str = Field(default="", description="When the check ran (ISO 8601, UTC).")


LEARNED_MODES: dict[str, SchemaMode] = {}
"""endpoint key → the mode ``auto`` uses there now, for this process."""


def endpoint_key(model: str, url: str) -> str:
    """``model@endpoint``, the endpoint normalised and without credentials."""
    return f"{model}@{normalise_endpoint(url)}"


def records_path(cache_dir: Path) -> Path:
    return cache_dir / RECORDS_FILE


def read_records(path: Path) -> dict[str, EndpointRecord]:
    """The records in ``path``; an absent or unreadable file is no record (it is only a hint:
    a run without it asks in the best mode first and measures the speed itself)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    records = {}
    for key, value in raw.items():
        try:
            records[str(key)] = EndpointRecord.model_validate(value)
        except ValidationError:
            continue
    return records


def write_records(path: Path, updates: dict[str, EndpointRecord]) -> None:
    """``updates`` merged into the records in ``path``, written atomically."""
    records = {**read_records(path), **updates}
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {key: record.model_dump(mode="json") for key, record in sorted(records.items())}
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".endpoints.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
