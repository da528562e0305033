"""Append-only JSONL logs of finished work, so an interrupted eval repeats none of it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from papergym.errors import BadInputError

R = TypeVar("R", bound=BaseModel)


class RecordLog(Generic[R]):
    """One record per line, appended and flushed as each item finishes.

    A process killed mid-write (the OS keeps what was written when a process dies, so no
    fsync per line) leaves at most a partial last line; reading drops it (it is
    work to redo, not data), so the next append starts on a fresh line.
    """

    def __init__(self, path: Path, model: type[R]) -> None:
        self.path = path
        self.model = model

    def read(self) -> list[R]:
        """The complete records so far (none when the file does not exist)."""
        if not self.path.is_file():
            return []
        data = self.path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            with self.path.open("r+b") as handle:  # cut the partial line a kill left behind
                handle.truncate(len(complete))
        records: list[R] = []
        for number, line in enumerate(complete.decode("utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append(self.model.model_validate(json.loads(line)))
            except (ValueError, ValidationError) as error:
                first = str(error).splitlines()[0]
                raise BadInputError(
                    f"{self.path}:{number}", f"not a {self.model.__name__} record: {first}"
                ) from None
        return records

    def append(self, records: Iterable[R]) -> None:
        lines = "".join(r.model_dump_json() + "\n" for r in records)
        if not lines:
            return
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(lines)
