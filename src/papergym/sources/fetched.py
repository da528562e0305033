"""The ``metadata.json`` that ``papergym fetch`` writes beside each paper it downloads.

It lives here, below both the fetcher (which writes it) and ingestion (which reads it), so that
a build can date a paper and name its licence from what arXiv stated rather than from the
folder's name.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from papergym.errors import BadInputError

METADATA_FILE = "metadata.json"
"""The record's name inside a fetched paper's folder."""


class FetchedMetadata(BaseModel):
    """What arXiv states about a fetched paper.

    Keys it does not know are ignored, not refused: a folder of papers gathered by other tools
    (an arXiv metadata dump, a mirror) often carries a metadata.json with more in it, and
    ``license`` (arXiv's own spelling) is read as ``licence``."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    id: str = Field(description="The arXiv id without version: 2401.01234 or hep-th/9901001.")
    version: int | None = Field(default=None, description="The version downloaded (2 for v2).")
    title: str = ""
    categories: tuple[str, ...] = ()
    primary_category: str | None = None
    submitted: str | None = Field(default=None, description="ISO date of version 1.")
    updated: str | None = Field(default=None, description="ISO date of the version downloaded.")
    licence: str | None = Field(
        default=None,
        validation_alias=AliasChoices("licence", "license"),
        description="The licence URL as arXiv states it; null when it states none.",
    )

    @property
    def versioned_id(self) -> str:
        """``2401.01234v2``, or the bare id when the version is unknown."""
        return f"{self.id}v{self.version}" if self.version else self.id


def read_fetched_metadata(folder: Path) -> FetchedMetadata | None:
    """The ``metadata.json`` of a paper folder, or None when it has none (a paper not fetched).

    A file that is there but unreadable is a :class:`BadInputError` naming it: a build must not
    quietly lose a paper's licence. A JSON object without an ``id`` is another tool's file of
    the same name (``papergym write`` writes one beside each paper) and is not read.
    """
    path = folder / METADATA_FILE
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise BadInputError(path, f"not valid JSON: {error}") from None
    if not isinstance(record, dict) or "id" not in record:
        return None  # another tool's metadata.json (papergym write's, say): no arXiv record
    try:
        return FetchedMetadata.model_validate(record)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "record"
        raise BadInputError(path, f"not a fetch metadata record: {where}: {first['msg']}") from None
