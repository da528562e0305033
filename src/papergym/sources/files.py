"""Reading paper source files as text, safely.

Paper sources come from many authors, editors and decades: most are UTF-8, some are Windows
cp1252 or latin-1, a few carry a BOM, and now and then a binary file (a figure, a PDF) sits
where text is expected. Every reader here decodes leniently instead of crashing, and refuses
binary or oversized files with a :class:`BadInputError` that names the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from papergym.errors import BadInputError

#: How much of a file :func:`looks_binary` inspects; enough to see a binary header.
SNIFF_BYTES = 8192
#: Share of control bytes above which data is taken to be binary, not text.
CONTROL_SHARE = 0.30
#: Control bytes that ordinary text (and TeX) legitimately contains: tab, LF, CR, form feed.
_TEXT_CONTROLS = frozenset(b"\t\n\r\f")
_UTF8_BOM = b"\xef\xbb\xbf"
#: Tried in order; latin-1 maps every byte, so decoding always succeeds in the end.
_ENCODINGS = ("utf-8", "cp1252", "latin-1")
#: Opening a FIFO for reading blocks until a writer comes; without blocking it returns at once
#: (and a regular file reads as ever). O_BINARY: no newline translation where that exists.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def leads_out(path: Path, folder: Path) -> bool:
    """Whether ``path``, found in ``folder``, is (or passes through) a link to somewhere outside
    ``folder``. A folder of papers someone else prepared can hold ``leak.txt -> /etc/passwd``:
    its files are read, and sent to an LLM, only while they stay inside it."""
    return not path.resolve().is_relative_to(folder.resolve())


def refuse_link_out(path: Path, folder: Path) -> None:
    """A :class:`BadInputError` for ``path`` when it :func:`leads_out` of ``folder``."""
    if leads_out(path, folder):
        raise BadInputError(
            path,
            f"a link leading out of {folder}; not read (name the file itself to read it)",
        )


def looks_binary(data: bytes) -> bool:
    """Whether ``data`` looks like a binary file rather than text.

    Only the first :data:`SNIFF_BYTES` are inspected. A NUL byte means binary (text never has
    one; UTF-16 is not supported). Otherwise binary means more than :data:`CONTROL_SHARE` of
    the bytes are ASCII control characters other than tab, LF, CR and form feed. Bytes >= 0x80
    never count, so UTF-8 accents, CJK and math symbols are text.
    """
    head = data[:SNIFF_BYTES]
    if not head:
        return False
    if b"\x00" in head:
        return True
    controls = sum(
        1 for byte in head if (byte < 0x20 or byte == 0x7F) and byte not in _TEXT_CONTROLS
    )
    return controls / len(head) > CONTROL_SHARE


def decode_text(data: bytes, path: str | Path | None) -> str:
    """Decode file contents to text: UTF-8 (BOM stripped), else cp1252, else latin-1.

    ``path`` only names the source in errors (an archive member has no file of its own).
    Raises :class:`BadInputError` when ``data`` looks binary: decoding a binary file would
    "succeed" through latin-1 and feed garbage downstream.
    """
    if looks_binary(data):
        raise BadInputError(path, "binary file, not text")
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    for encoding in _ENCODINGS:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise AssertionError("unreachable: latin-1 decodes every byte string")


def read_text(path: Path, *, max_bytes: int = 20_000_000) -> str:
    """Read the text file at ``path`` with :func:`decode_text`, refusing files over ``max_bytes``.

    Only a regular file is read: a FIFO named ``*.tex`` would block the read forever, and a
    device never ends. The file is opened without blocking and checked on the open handle, so
    nothing can be swapped in between the check and the read. The size is checked before
    reading, and the read itself is capped too, so a file that grows meanwhile cannot exhaust
    memory.
    """
    path = Path(path)
    try:
        if path.is_dir():
            raise BadInputError(path, "is a folder, not a file")
        fd = os.open(path, _OPEN_FLAGS)
        with os.fdopen(fd, "rb") as handle:
            status = os.fstat(fd)
            if not stat.S_ISREG(status.st_mode):
                raise BadInputError(path, "not a regular file")
            if status.st_size > max_bytes:
                raise BadInputError(
                    path, f"file too large ({status.st_size} bytes, limit {max_bytes})"
                )
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise BadInputError(path, "no such file") from None
    except PermissionError:
        raise BadInputError(path, "permission denied") from None
    except OSError as error:  # a socket (ENXIO), a link loop: the user's file, not our bug
        raise BadInputError(path, f"cannot read: {error.strerror or error}") from None
    if len(data) > max_bytes:
        raise BadInputError(path, f"file too large (over {max_bytes} bytes)")
    return decode_text(data, path)
