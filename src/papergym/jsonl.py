"""JSONL reading and writing for records, used by every step.

Writes are atomic (a temporary file in the same folder, then a rename), so an interrupted run
never leaves half a file behind; appends add one complete line at a time, for resumable steps.
The temporary file is created with the modes an ordinary file gets (0666 less the umask, and a
folder's default ACL), not ``mkstemp``'s owner-only 0600: datasets are read by teammates and by
training workers running as other users.
"""

from __future__ import annotations

import codecs
import glob
import itertools
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar, overload

from pydantic import BaseModel, ValidationError

from papergym.errors import BadInputError

M = TypeVar("M", bound=BaseModel)


def _line(record: BaseModel) -> str:
    return record.model_dump_json(exclude_computed_fields=True) + "\n"


_TEMP_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)


def _temp_file_name(name: str, token: str) -> str:
    """The hidden name of a temporary file for ``name`` (``token``: random, or a glob's ``*``)."""
    return f".{name}.{token}.tmp"


def create_temp_file(path: str | Path) -> tuple[int, Path]:
    """Create a fresh hidden temporary file beside ``path``; return its descriptor and path.

    Like ``tempfile.mkstemp`` (a new name, never an existing file or link), but with mode 0666
    as the umask allows, so that renaming it over ``path`` gives an ordinary file's modes.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = path.parent / _temp_file_name(path.name, secrets.token_hex(6))
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o666), tmp
        except FileExistsError:
            continue


def create_temp_dir(target: str | Path) -> Path:
    """Create a fresh hidden folder beside ``target``, with an ordinary folder's modes.

    ``tempfile.mkdtemp`` makes it 0700, which a folder swapped into place would keep.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}"
        try:
            tmp.mkdir(mode=0o777)
            return tmp
        except FileExistsError:
            continue


def remove_stale_temp_files(path: str | Path) -> None:
    """Remove the temporary files a killed writer of ``path`` left beside it (a hard kill skips
    the clean-up of :func:`write_jsonl`). Only for a file that this process alone writes:
    another writer's file in progress would be removed too."""
    path = Path(path)
    for tmp in path.parent.glob(_temp_file_name(glob.escape(path.name), "*")):
        tmp.unlink(missing_ok=True)


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records to ``path`` atomically, one JSON object per line; return the count."""
    count = 0
    fd, tmp = create_temp_file(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for record in records:
                handle.write(_line(record))
                count += 1
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file, then a rename): a reader never
    sees half a file, and an interrupted write leaves the old one."""
    fd, tmp = create_temp_file(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def append_jsonl(path: str | Path, record: BaseModel) -> None:
    """Append one record as a single complete line (flushed), creating the file if needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(_line(record))
        handle.flush()


def iter_json_lines(path: str | Path) -> Iterator[tuple[int, object]]:
    """Yield ``(line number, parsed JSON value)`` for each non-blank line of ``path``.

    A UTF-8 byte-order mark is accepted (editors on Windows write one); a folder, a missing
    file, bytes that are not UTF-8 and a line that is not JSON each raise a one-line
    :class:`BadInputError` naming the file (and line).
    """
    path = Path(path)
    if path.is_dir():
        raise BadInputError(path, "is a folder, not a JSONL file")
    if not path.is_file():
        raise BadInputError(path, "no such file")
    with path.open("rb") as handle:  # bytes, so a decoding error names its own line
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise BadInputError(
                    f"{path}:{number}", f"not UTF-8 text (byte {error.start} of the line)"
                ) from None
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                raise BadInputError(f"{path}:{number}", f"not valid JSON: {error}") from None


def iter_jsonl(path: str | Path, model: type[M]) -> Iterator[M]:
    """Yield records of type ``model`` from ``path``; a bad line raises an error naming it."""
    for number, data in iter_json_lines(path):
        try:
            yield model.model_validate(data)
        except ValidationError as error:
            first = str(error).splitlines()[0]
            raise BadInputError(
                f"{path}:{number}", f"not a valid {model.__name__}: {first}"
            ) from error


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read every record of type ``model`` from ``path``."""
    return list(iter_jsonl(path, model))


class RereadRecords(Sequence[M]):
    """Records read again from where they are kept on each pass, never all held at once.

    What a build returns for its instances: a corpus of 20,000 papers would otherwise hold every
    instance in memory to the end of the run. ``read`` yields the records (a fresh iterator per
    call); ``count`` is how many it yields, known when they were written. Indexing reads up to
    the index; a slice reads them all: both are for small uses, passes are what it is for.
    """

    def __init__(self, read: Callable[[], Iterable[M]], count: int) -> None:
        self._read = read
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[M]:
        return iter(self._read())

    @overload
    def __getitem__(self, index: int) -> M: ...

    @overload
    def __getitem__(self, index: slice) -> list[M]: ...

    def __getitem__(self, index: int | slice) -> M | list[M]:
        if isinstance(index, slice):
            return list(self)[index]
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError(index)
        return next(itertools.islice(iter(self), position, None))

    def __repr__(self) -> str:
        return f"RereadRecords({self._count} records)"


def reread_jsonl(path: str | Path, model: type[M], count: int) -> RereadRecords[M]:
    """The ``count`` records of ``path``, read from the file on each pass."""
    return RereadRecords(lambda: iter_jsonl(path, model), count)
