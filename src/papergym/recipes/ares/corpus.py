"""Streaming corpus readers: JSONL, parquet, saved Hugging Face datasets, folders of text files.

A corpus is one or more paths. Files are read in a fixed order (the paths as given, each folder
walked in sorted order), and every document gets a *position*: its ordinal in that order, which
decides its shard (:mod:`.shards`) and so what a resumed or distributed run skips. Nothing holds
more than one batch of rows: JSONL is read a line at a time, parquet a row group's batch at a
time, a saved dataset through its memory-mapped Arrow table, so memory stays flat as the corpus
grows.

What is wrong with a *file* (not JSONL or parquet, no text column) is a :class:`BadInputError`
found before anything runs. What is wrong with *one document* is a :class:`Drop` at step
``read`` with its reason, and the run goes on:

- empty or whitespace-only text, or a text field that is not a string;
- a record over ``max_document_mb`` (JSONL: the line; parquet: the text cell; files: the file),
  skipped without being read whole where the format allows (JSONL lines and files);
- bytes that are not UTF-8: the document is dropped, not decoded with replacement characters,
  because a question written from mojibake teaches nothing and the drop says which byte;
- a JSONL line that is not a JSON object.

Files named ``README.*`` or ``LICENSE.*`` inside a corpus folder describe the corpus and are
not documents.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from papergym.errors import BadInputError
from papergym.recipes.ares.documents import Document, MetaValue
from papergym.records import Drop

SourceKind = Literal["jsonl", "parquet", "hf", "text"]
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson")
TEXT_SUFFIXES = (".txt", ".md")
NOT_DOCUMENTS = ("readme", "license", "licence")
BATCH_ROWS = 256  # rows per Arrow batch: small, so one batch of long documents stays small
READ_STEP = "read"
Wanted = Callable[[int], bool]


@dataclass(frozen=True)
class Columns:
    """Which fields of a row hold the text, the id and the url (``ares.*_column``)."""

    text: str = "text"
    id: str = "id"
    url: str = "url"


@dataclass(frozen=True)
class Entry:
    """One row of the corpus: its position in the stream and the document, or why none."""

    position: int
    item: Document | Drop


Rows = Generator[Entry, None, int]  # yields a source's wanted rows, returns its end position


@dataclass(frozen=True)
class Source:
    """One file (or saved dataset, or text file) of the corpus."""

    path: Path
    name: str  # relative, as outputs show it
    kind: SourceKind


def _suffix_kind(path: Path) -> SourceKind | None:
    name = path.name.lower()
    if name.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(TEXT_SUFFIXES):
        return "text"
    return None


def _is_saved_dataset(path: Path) -> bool:
    return path.is_dir() and any(
        (path / f).is_file() for f in ("dataset_info.json", "state.json", "dataset_dict.json")
    )


def _is_description(path: Path) -> bool:
    return path.name.lower().split(".")[0] in NOT_DOCUMENTS


def _check_regular(path: Path) -> None:
    """Only a regular file is read: a FIFO never ends or blocks, a device never ends."""
    if not path.is_file():
        raise BadInputError(path, "not a regular file")


def _check_link(path: Path, root: Path) -> None:
    """A link in a corpus folder must stay inside it (the LaTeX reader's and archives' rule): a
    link to ``/etc/passwd`` in a folder of texts is not the user's corpus."""
    target = path.resolve()
    if not target.is_relative_to(root):
        raise BadInputError(
            path,
            f"a link leading out of the corpus folder (to {target}); not followed: pass the "
            "target itself to read it",
        )


def _walk(folder: Path, prefix: str) -> Iterator[Source]:
    root = folder.resolve()
    links: list[Path] = []  # linked folders: never walked (their files are read where they are)
    for path in sorted(folder.rglob("*")):
        if any(link in path.parents for link in links):
            continue
        name = f"{prefix}/{path.relative_to(folder).as_posix()}"
        if path.is_symlink():
            if path.is_dir() or _suffix_kind(path) is not None:
                _check_link(path, root)
            if path.is_dir():
                links.append(path)
                continue
        if _suffix_kind(path) is not None and path.exists() and not path.is_dir():
            _check_regular(path)  # a FIFO or a device named like a corpus file
        if _is_saved_dataset(path):
            yield Source(path, name, "hf")
        elif path.is_file() and not _is_description(path):
            if any(
                _is_saved_dataset(parent) for parent in path.parents if folder in parent.parents
            ):
                continue  # an Arrow file inside a saved dataset, read through the dataset
            kind = _suffix_kind(path)
            if kind is not None:
                yield Source(path, name, kind)


def discover(paths: Sequence[Path]) -> list[Source]:
    """The corpus files under ``paths``, in reading order; a bad path is a BadInputError."""
    sources: list[Source] = []
    for path in paths:
        if not path.exists():
            raise BadInputError(path, "no such file or folder")
        if _is_saved_dataset(path):
            sources.append(Source(path, path.name, "hf"))
        elif path.is_dir():
            found = list(_walk(path, path.name))
            if not found:
                raise BadInputError(
                    path, "no corpus files in the folder (.jsonl, .parquet, .txt, .md)"
                )
            sources.extend(found)
        else:
            _check_regular(path)
            kind = _suffix_kind(path)
            if kind is None:
                raise BadInputError(
                    path,
                    "not a corpus file: expected JSONL (.jsonl), parquet (.parquet), .txt or .md, "
                    "or a saved Hugging Face dataset folder",
                )
            sources.append(Source(path, path.name, kind))
    return sources


# --- the readers ---------------------------------------------------------------------------------


def _drop(source: str, doc_id: str, reason: str) -> Drop:
    return Drop(source=source, step=READ_STEP, reason=reason, paper_id=doc_id)


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.3g} MB"


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


@dataclass(frozen=True)
class Corpus:
    """The sources of a corpus, checked, and how to read them."""

    sources: tuple[Source, ...]
    columns: Columns = Columns()
    max_document_bytes: int = 10_000_000

    @classmethod
    def open(
        cls, paths: Sequence[Path], columns: Columns = Columns(), max_document_mb: float = 10.0
    ) -> Corpus:
        """Find and check the corpus files (one line naming a bad one) before anything runs."""
        corpus = cls(tuple(discover(paths)), columns, int(max_document_mb * 1_000_000))
        for source in corpus.sources:
            corpus.check(source)
        return corpus

    def check(self, source: Source) -> None:
        """Refuse a file that is not what its name says, or that has no text column."""
        if source.kind == "jsonl":
            self._check_jsonl(source)
        elif source.kind == "parquet":
            names = self._parquet(source).schema_arrow.names
            self._check_columns(source, names)
        elif source.kind == "hf":
            for _, dataset in self._datasets(source):
                self._check_columns(source, list(dataset.column_names))

    def _check_columns(self, source: Source, names: Sequence[str]) -> None:
        if self.columns.text not in names:
            raise BadInputError(
                source.path,
                f"no '{self.columns.text}' column (columns: {', '.join(names[:12])}); "
                "set ares.text_column",
            )

    def _check_jsonl(self, source: Source) -> None:
        with _open_binary(source) as handle:
            for _, raw, _ in _lines(handle, self.max_document_bytes):
                if raw is None or not raw.strip():
                    continue
                try:
                    first = json.loads(raw.decode("utf-8", errors="replace"))
                except (json.JSONDecodeError, EOFError, OSError):
                    first = None
                if not isinstance(first, dict):
                    raise BadInputError(
                        source.path, "not JSONL: the first line is not a JSON object"
                    )
                if self.columns.text not in first:
                    keys = ", ".join(list(first)[:12])
                    raise BadInputError(
                        source.path,
                        f"no '{self.columns.text}' field in the first record (fields: {keys}); "
                        "set ares.text_column",
                    )
                return
        raise BadInputError(source.path, "empty JSONL file: no record")

    def _parquet(self, source: Source) -> Any:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(source.path)
        except (pa.ArrowException, OSError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise BadInputError(source.path, f"not a parquet file: {reason}") from None

    def _datasets(self, source: Source) -> Iterator[tuple[str, Any]]:
        import datasets

        try:
            loaded = datasets.load_from_disk(str(source.path))
        except (OSError, ValueError, FileNotFoundError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise BadInputError(
                source.path, f"not a saved Hugging Face dataset: {reason}"
            ) from None
        if isinstance(loaded, datasets.DatasetDict):
            for split in sorted(loaded):
                yield f"{source.name}/{split}", loaded[split]
        else:
            yield source.name, loaded

    # --- streaming ---------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Entry]:
        return self.entries()

    def entries(self, wanted: Wanted | None = None, stop: int | None = None) -> Iterator[Entry]:
        """Every row of the corpus, in order; rows ``wanted`` rejects are counted, not parsed;
        reading ends at position ``stop`` (the rest of the corpus is not read at all)."""
        if stop is not None:
            wanted = _stopping(wanted, stop)
        position = 0
        try:
            for source in self.sources:
                position = yield from self._read(source, position, wanted)
        except _Stop:
            return

    def _read(self, source: Source, start: int, wanted: Wanted | None) -> Rows:
        """The wanted rows of one source; returns the position after its last row."""
        if source.kind == "jsonl":
            return (yield from self._read_jsonl(source, start, wanted))
        if source.kind == "parquet":
            return (yield from self._read_parquet(source, start, wanted))
        if source.kind == "hf":
            return (yield from self._read_hf(source, start, wanted))
        return (yield from self._read_text(source, start, wanted))

    def _read_jsonl(self, source: Source, start: int, wanted: Wanted | None) -> Rows:
        position = start
        with _open_binary(source) as handle:
            for number, raw, size in _lines(handle, self.max_document_bytes):
                if raw is not None and not raw.strip():
                    continue
                here, position = position, position + 1
                if wanted is not None and not wanted(here):
                    continue  # another shard's or a finished row: not parsed
                yield Entry(here, self._jsonl_item(source.name, number, raw, size))
        return position

    def _jsonl_item(self, name: str, number: int, raw: bytes | None, size: int) -> Document | Drop:
        row_id = f"{name}:{number}"
        if raw is None:
            limit = _megabytes(self.max_document_bytes)
            return _drop(name, row_id, f"record of {_megabytes(size)} over the {limit} limit")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return _drop(name, row_id, f"not UTF-8 text (byte {error.start} of the line)")
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            return _drop(name, row_id, f"not valid JSON: {error}")
        if not isinstance(record, dict):
            return _drop(name, row_id, "not a JSON object")
        return self._document(name, row_id, record)

    def _document(self, name: str, row_id: str, row: dict[str, Any]) -> Document | Drop:
        columns = self.columns
        given = row.get(columns.id)
        doc_id = row_id if given is None or str(given).strip() == "" else str(given)
        text = row.get(columns.text)
        if text is None:
            return _drop(name, doc_id, f"no '{columns.text}' field")
        if not isinstance(text, str):
            return _drop(name, doc_id, f"'{columns.text}' is not a string")
        if not text.strip():
            return _drop(name, doc_id, "empty document")
        url = row.get(columns.url)
        meta: dict[str, MetaValue] = {
            k: v
            for k, v in row.items()
            if k not in (columns.text, columns.id, columns.url) and _scalar(v)
        }
        return Document(
            id=doc_id,
            text=text,
            url=str(url) if url is not None else None,
            source=name,
            meta=meta,
        )

    def _read_text(self, source: Source, start: int, wanted: Wanted | None) -> Rows:
        if wanted is not None and not wanted(start):
            return start + 1
        name = source.name
        with _open_binary(source) as handle:
            size = os.fstat(handle.fileno()).st_size
            # bounded whatever the size said: a file may grow between the two
            data = (
                handle.read(self.max_document_bytes + 1) if size <= self.max_document_bytes else b""
            )
        if max(size, len(data)) > self.max_document_bytes:
            limit = _megabytes(self.max_document_bytes)
            reason = f"file of {_megabytes(max(size, len(data)))} over the {limit} limit"
            yield Entry(start, _drop(name, name, reason))
            return start + 1
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            yield Entry(start, _drop(name, name, f"not UTF-8 text (byte {error.start})"))
            return start + 1
        yield Entry(start, self._document(name, name, {self.columns.text: text}))
        return start + 1

    def _read_parquet(self, source: Source, start: int, wanted: Wanted | None) -> Rows:
        file = self._parquet(source)
        columns = self._arrow_columns(file.schema_arrow)
        position = start
        for group in range(file.num_row_groups):
            rows = file.metadata.row_group(group).num_rows
            if wanted is not None and not any(wanted(p) for p in range(position, position + rows)):
                position += rows  # a row group with nothing to do is not read at all
                continue
            for batch in file.iter_batches(
                batch_size=BATCH_ROWS, row_groups=[group], columns=columns
            ):
                yield from self._batch(source.name, batch, position, position - start, wanted)
                position += batch.num_rows
        return position

    def _read_hf(self, source: Source, start: int, wanted: Wanted | None) -> Rows:
        position = start
        for name, dataset in self._datasets(source):
            columns = self._arrow_columns(dataset.features.arrow_schema)
            table_rows = 0
            for table in dataset.select_columns(columns).with_format("arrow").iter(BATCH_ROWS):
                for batch in table.to_batches():
                    yield from self._batch(name, batch, position, table_rows, wanted)
                    position += batch.num_rows
                    table_rows += batch.num_rows
        return position

    def _arrow_columns(self, schema: Any) -> list[str]:
        """The text column and the scalar ones (id, url, metadata); nested columns are not read."""
        import pyarrow as pa

        keep = []
        for field in schema:
            kind = field.type
            scalar = (
                pa.types.is_string(kind)
                or pa.types.is_large_string(kind)
                or pa.types.is_integer(kind)
                or pa.types.is_floating(kind)
                or pa.types.is_boolean(kind)
            )
            if field.name == self.columns.text or scalar:
                keep.append(field.name)
        return keep

    def _batch(
        self, name: str, batch: Any, position: int, row: int, wanted: Wanted | None
    ) -> Iterator[Entry]:
        """The rows of one Arrow batch; a text cell over the limit is never turned into a str."""
        import pyarrow.compute as pc

        text_index = batch.schema.get_field_index(self.columns.text)
        texts = batch.column(text_index)
        sizes = pc.binary_length(texts).to_pylist() if _is_textual(texts.type) else None
        others = [
            (field.name, batch.column(i)) for i, field in enumerate(batch.schema) if i != text_index
        ]
        for offset in range(batch.num_rows):
            here = position + offset
            if wanted is not None and not wanted(here):
                continue
            row_id = f"{name}:{row + offset}"
            values = {key: column[offset].as_py() for key, column in others}
            size = sizes[offset] if sizes is not None else None
            if size is not None and size > self.max_document_bytes:
                given = values.get(self.columns.id)
                doc_id = row_id if given is None else str(given)
                limit = _megabytes(self.max_document_bytes)
                reason = f"text of {_megabytes(size)} over the {limit} limit"
                yield Entry(here, _drop(name, doc_id, reason))
                continue
            text = texts[offset].as_py()
            if isinstance(text, bytes):
                try:
                    text = text.decode("utf-8")
                except UnicodeDecodeError as error:
                    yield Entry(here, _drop(name, row_id, f"not UTF-8 text (byte {error.start})"))
                    continue
            yield Entry(here, self._document(name, row_id, {**values, self.columns.text: text}))


class _Stop(Exception):
    """Raised by a stopping ``wanted`` at the first row past the stop: ends the reading."""


def _stopping(wanted: Wanted | None, stop: int) -> Wanted:
    def check(position: int) -> bool:
        if position >= stop:
            raise _Stop
        return wanted is None or wanted(position)

    return check


def _is_textual(kind: Any) -> bool:
    import pyarrow as pa

    return bool(
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    )


# Opening a FIFO blocks until a writer comes; without blocking it returns at once, and the
# check on the open handle refuses it (nothing can be swapped in between check and read).
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


@contextmanager
def _open_binary(source: Source) -> Iterator[IO[bytes]]:
    """The file, opened for reading only if it is a regular file (BadInputError otherwise)."""
    try:
        fd = os.open(source.path, _OPEN_FLAGS)
    except OSError as error:
        raise BadInputError(source.path, f"cannot read: {error.strerror or error}") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadInputError(source.path, "not a regular file")
        os.set_blocking(fd, True)
        if source.path.name.lower().endswith(".gz"):
            with gzip.GzipFile(fileobj=handle, mode="rb") as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            yield handle


def _lines(handle: IO[bytes], limit: int) -> Iterator[tuple[int, bytes | None, int]]:
    """``(line number, bytes or None when over limit, size)``: an over-long line is skipped in
    1 MB chunks, never held whole."""
    number = 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield number, raw, len(raw)
            continue
        size = len(raw)
        del raw
        while True:
            chunk = handle.readline(1 << 20)
            size += len(chunk)
            if not chunk or chunk.endswith(b"\n"):
                break
        yield number, None, size
