"""Extracting arXiv e-prints and other source archives, safely.

arXiv serves a paper's source as a gzipped tar, a single gzipped ``.tex`` (often with no
extension), and now and then a plain tar or a zip. Archives come from strangers, so extraction
is defensive: every member is validated *before* anything is written (no absolute paths, no
``..``, no links leading outside, no devices, bounded counts and sizes), the bytes actually
written are counted while streaming (so a lying header or a gzip bomb is stopped at the limit),
and on any failure what was written is removed again. Symbolic and hard links are never created:
a link to a file inside the archive is materialised as a copy; other links are skipped.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import re
import shutil
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, Protocol

from papergym.errors import BadInputError
from papergym.sources.files import looks_binary

_CHUNK = 1 << 20
_TAR_BLOCK = 512
#: A zip symlink's target is stored as the member's data; anything longer is not a real link.
_MAX_LINK_TARGET = 4096
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_ARCHIVE_NAME = re.compile(r"\.(tar\.gz|tgz|tar|gz|zip)$", re.IGNORECASE)
_DRIVE = re.compile(r"^[A-Za-z]:")
_SEPARATORS = re.compile(r"[\\/]")
#: What a damaged archive raises inside the standard library; mapped to "corrupt archive".
_CORRUPT: tuple[type[BaseException], ...] = (
    tarfile.TarError,
    zipfile.BadZipFile,
    gzip.BadGzipFile,
    EOFError,
    zlib.error,
    NotImplementedError,  # zip compression method we cannot read
)

ArchiveKind = Literal["gzip", "tar", "zip"]


@dataclass(frozen=True)
class ArchiveLimits:
    """Bounds on what one archive may unpack to, against zip/gzip bombs and runaway trees."""

    max_total_bytes: int = 1 << 30
    max_files: int = 10_000
    max_member_bytes: int = 200 << 20


DEFAULT_LIMITS = ArchiveLimits()


@dataclass(frozen=True)
class _Member:
    """One validated member: ``name`` is a clean relative POSIX path ("" for the root itself)."""

    name: str
    kind: Literal["file", "dir", "link"]
    size: int = 0
    target: str = ""  # for links: the clean relative path the link points to


class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


_Opener = Callable[[], AbstractContextManager[_Reader]]


class _Budget:
    """Counts members and bytes against the limits, refusing as soon as one is passed."""

    def __init__(self, path: Path, limits: ArchiveLimits) -> None:
        self.path = path
        self.limits = limits
        self.count = 0
        self.declared = 0
        self.written = 0

    def declare(self, name: str, size: int) -> None:
        """Account for a member's header, before any of its bytes are written."""
        self.count += 1
        if self.count > self.limits.max_files:
            raise BadInputError(self.path, f"too many members (limit {self.limits.max_files})")
        self._check_sizes(name, size, self.declared + size, "declared ")
        self.declared += size

    def spend(self, name: str, size: int, member_so_far: int) -> None:
        """Account for ``size`` bytes about to be written; headers may lie, this cannot."""
        self.written += size
        self._check_sizes(name, member_so_far, self.written, "")

    def _check_sizes(self, name: str, member: int, total: int, how: str) -> None:
        if member > self.limits.max_member_bytes:
            reason = f"member {name!r} too large ({how}{member} bytes, limit {self.limits.max_member_bytes})"
            raise BadInputError(self.path, reason)
        if total > self.limits.max_total_bytes:
            reason = f"{how}uncompressed size too large at member {name!r} (limit {self.limits.max_total_bytes} bytes)"
            raise BadInputError(self.path, reason)


# --- recognising archives ---------------------------------------------------------------------


def _is_tar_header(block: bytes) -> bool:
    """Whether ``block`` is a tar header: ustar magic, or (old v7 tars) a valid checksum."""
    if len(block) < _TAR_BLOCK or block[0] == 0:
        return False
    if block[257:262] == b"ustar":
        return True
    field = block[148:156].replace(b"\x00", b" ").strip()
    try:
        stored = int(field, 8)
    except ValueError:
        return False
    return stored == 256 + sum(block[:148]) + sum(block[156:_TAR_BLOCK])


def _sniff(path: Path) -> ArchiveKind | None:
    """The archive kind of ``path`` by its magic bytes, whatever its extension says."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_TAR_BLOCK)
    except OSError:
        return None
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(_ZIP_MAGICS):
        return "zip"
    return "tar" if _is_tar_header(head) else None


def is_archive(path: Path) -> bool:
    """True when ``path`` is a gzip, tar or zip file, judged by its magic bytes."""
    return _sniff(Path(path)) is not None


# --- validating member names and links --------------------------------------------------------


def _is_absolute(name: str) -> bool:
    # Windows forms too ("C:\\x", "\\\\server\\x"): archives made on Windows carry them.
    return name.startswith(("/", "\\")) or bool(_DRIVE.match(name))


def _clean_name(path: Path, raw: str) -> str:
    """The member name as a clean relative path; refuses absolute names and ``..``."""
    parts = _SEPARATORS.split(raw)
    reason = None
    if "\x00" in raw:
        reason = "NUL byte in name"
    elif _is_absolute(raw):
        reason = "absolute path"
    elif ".." in parts:
        reason = "'..' in path"
    if reason:
        raise BadInputError(path, f"unsafe member {raw!r}: {reason}")
    return "/".join(part for part in parts if part not in ("", "."))


def _link_target(name: str, linkname: str, symbolic: bool) -> str | None:
    """Where a link points, as a clean relative path; None when that is outside the root.

    A symbolic link is relative to its own folder, a (tar) hard link to the archive root.
    """
    if not linkname or "\x00" in linkname or _is_absolute(linkname):
        return None
    stack = name.split("/")[:-1] if symbolic else []
    for part in _SEPARATORS.split(linkname):
        if part == "..":
            if not stack:
                return None
            stack.pop()
        elif part not in ("", "."):
            stack.append(part)
    return "/".join(stack)


def _link_member(path: Path, raw: str, name: str, linkname: str, symbolic: bool) -> _Member:
    target = _link_target(name, linkname, symbolic)
    if target is None:
        reason = f"unsafe member {raw!r}: link to {linkname!r} points outside the archive"
        raise BadInputError(path, reason)
    return _Member(name, "link", 0, target)


def _check_layout(path: Path, members: Iterable[_Member]) -> None:
    """Refuse a member that sits inside a file or link, or is both a file and a folder."""
    members = list(members)
    leaves = {m.name for m in members if m.kind != "dir"}
    for member in members:
        parts = member.name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if parent in leaves:
                raise BadInputError(path, f"member {member.name!r} is inside {parent!r}, a file")
        if member.kind == "dir" and member.name in leaves:
            raise BadInputError(path, f"member {member.name!r} is both a file and a folder")


# --- writing ----------------------------------------------------------------------------------


def _target(root: Path, name: str) -> Path:
    """The path for member ``name`` under ``root``; a last check that it cannot escape."""
    target = root.joinpath(*name.split("/")) if name else root
    if not target.resolve().is_relative_to(root):
        raise AssertionError(f"member {name!r} escapes {root} despite validation")
    return target


def _chunks(source: _Reader) -> Iterator[bytes]:
    while chunk := source.read(_CHUNK):
        yield chunk


def _write_chunks(chunks: Iterable[bytes], target: Path, name: str, budget: _Budget) -> None:
    """Write ``chunks`` to ``target``, counting each chunk against the budget before writing it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    member_bytes = 0
    with target.open("wb") as out:
        for chunk in chunks:
            member_bytes += len(chunk)
            budget.spend(name, len(chunk), member_bytes)
            out.write(chunk)


def _materialise_link(root: Path, member: _Member, budget: _Budget) -> None:
    """Copy a link's target file to the link's place; links to folders or nothing are skipped."""
    source, target = _target(root, member.target), _target(root, member.name)
    if source == target or source.is_symlink() or not source.is_file():
        return
    with source.open("rb") as handle:
        _write_chunks(_chunks(handle), target, member.name, budget)


def _write_all(root: Path, entries: list[tuple[_Member, _Opener | None]], budget: _Budget) -> None:
    """Write validated members: folders and files in order, then links as copies."""
    for member, opener in entries:
        if member.kind == "dir":
            _target(root, member.name).mkdir(parents=True, exist_ok=True)
        elif member.kind == "file" and opener is not None:
            with opener() as source:
                _write_chunks(_chunks(source), _target(root, member.name), member.name, budget)
    for member, _ in entries:
        if member.kind == "link":
            _materialise_link(root, member, budget)


def _clear(root: Path) -> None:
    """Remove everything under ``root`` (not ``root`` itself), so no partial tree remains."""
    for child in root.iterdir():
        with contextlib.suppress(OSError):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()


# --- tar --------------------------------------------------------------------------------------


def _tar_member(path: Path, info: tarfile.TarInfo) -> _Member:
    name = _clean_name(path, info.name)
    if info.isdir():
        return _Member(name, "dir")
    if not name:
        raise BadInputError(path, f"unsafe member {info.name!r}: not a folder but names the root")
    if info.isreg():
        return _Member(name, "file", info.size)
    if info.issym() or info.islnk():
        return _link_member(path, info.name, name, info.linkname, info.issym())
    if info.ischr() or info.isblk() or info.isfifo():
        raise BadInputError(path, f"unsafe member {info.name!r}: device or fifo")
    raise BadInputError(path, f"unsafe member {info.name!r}: unsupported member type")


def _apply_data_filter(path: Path, info: tarfile.TarInfo, root: Path) -> None:
    """Defence in depth: the standard library's ``data`` filter must agree with our checks."""
    try:
        tarfile.data_filter(info, str(root))
    except tarfile.FilterError as exc:
        raise BadInputError(path, f"unsafe member {info.name!r}: {exc}") from exc


def _scan_tar(
    path: Path, tar: tarfile.TarFile, root: Path, budget: _Budget
) -> list[tuple[tarfile.TarInfo, _Member]]:
    """Validate every member; iterating reads headers lazily, so limits stop a huge tar early."""
    found = []
    for info in tar:
        member = _tar_member(path, info)
        budget.declare(info.name, member.size)
        _apply_data_filter(path, info, root)
        found.append((info, member))
    _check_layout(path, (member for _, member in found))
    return found


def _check_complete(path: Path, members: list[tuple[tarfile.TarInfo, _Member]]) -> None:
    """A plain tar cut short ends silently at a bad header; catch a cut inside file data."""
    size = path.stat().st_size
    for info, member in members:
        if member.kind == "file" and info.sparse is None and info.offset_data + info.size > size:
            raise BadInputError(path, f"corrupt archive: truncated in member {info.name!r}")


def _drain(path: Path, gz: gzip.GzipFile, limit: int) -> None:
    """Read the gzip stream to its end, so its CRC is checked before anything is written."""
    extra = 0
    for chunk in _chunks(gz):
        extra += len(chunk)
        if extra > limit:
            raise BadInputError(path, f"too much data after the tar end (limit {limit} bytes)")


def _tar_opener(tar: tarfile.TarFile, info: tarfile.TarInfo) -> _Opener | None:
    if not info.isreg():
        return None

    def open_member() -> IO[bytes]:
        handle = tar.extractfile(info)
        assert handle is not None, "extractfile returns a file for every regular member"
        return handle

    return open_member


def _extract_tar(path: Path, root: Path, budget: _Budget, gz: gzip.GzipFile | None) -> None:
    """Extract a tar (``gz``: the already open gzip stream holding it)."""
    with tarfile.TarFile(path, "r", fileobj=gz) as tar:
        members = _scan_tar(path, tar, root, budget)
        if gz is not None:
            _drain(path, gz, budget.limits.max_total_bytes)
        else:
            _check_complete(path, members)
        entries = [(member, _tar_opener(tar, info)) for info, member in members]
        _write_all(root, entries, budget)


# --- gzip -------------------------------------------------------------------------------------


def _single_name(path: Path) -> str:
    """``2401.01234.gz`` → ``2401.01234.tex``; ``main.tex.gz`` → ``main.tex``."""
    name = re.sub(r"\.(tar\.gz|tgz|gz)$", "", path.name, flags=re.IGNORECASE) or "main"
    return name if name.lower().endswith(".tex") else f"{name}.tex"


def _refuse_non_latex(path: Path, head: bytes) -> None:
    """arXiv gzips PDF- and PostScript-only submissions too; they hold no LaTeX source."""
    if head.lstrip().startswith(b"%PDF"):
        raise BadInputError(path, "PDF-only submission, no LaTeX source")
    if head.startswith(b"%!PS"):
        raise BadInputError(path, "PostScript-only submission, no LaTeX source")
    if looks_binary(head):
        raise BadInputError(path, "gzip holds a binary file, no LaTeX source")


def _extract_single(
    path: Path, root: Path, budget: _Budget, gz: gzip.GzipFile, head: bytes
) -> None:
    """Write a gzipped single file as ``<name>.tex``, stream-decompressed under the limits."""
    _refuse_non_latex(path, head)
    name = _single_name(path)
    budget.declare(name, 0)
    _write_chunks(itertools.chain([head], _chunks(gz)), _target(root, name), name, budget)


def _extract_gzip(path: Path, root: Path, budget: _Budget) -> None:
    with gzip.GzipFile(path, "rb") as gz:
        head = gz.read(_TAR_BLOCK)
        if _is_tar_header(head):
            gz.seek(0)
            _extract_tar(path, root, budget, gz)
        else:
            _extract_single(path, root, budget, gz, head)


def _extract_plain_tar(path: Path, root: Path, budget: _Budget) -> None:
    _extract_tar(path, root, budget, None)


# --- zip --------------------------------------------------------------------------------------


def _zip_link(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> _Member:
    """A zip symlink stores its target as the member's data (Info-ZIP convention)."""
    if info.file_size > _MAX_LINK_TARGET:
        raise BadInputError(path, f"unsafe member {info.filename!r}: symlink target too long")
    with archive.open(info) as handle:
        linkname = handle.read(_MAX_LINK_TARGET).decode("utf-8", "surrogateescape")
    return _link_member(path, info.filename, name, linkname, symbolic=True)


def _zip_member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> _Member:
    name = _clean_name(path, info.filename)
    file_type = (info.external_attr >> 16) & 0o170000  # Unix mode bits, 0 from other systems
    if info.flag_bits & 0x1:
        raise BadInputError(path, f"member {info.filename!r} is encrypted")
    if info.is_dir():
        return _Member(name, "dir")
    if not name:
        raise BadInputError(
            path, f"unsafe member {info.filename!r}: not a folder but names the root"
        )
    if file_type == 0o120000:
        return _zip_link(path, archive, info, name)
    if file_type not in (0, 0o100000):
        raise BadInputError(path, f"unsafe member {info.filename!r}: device, fifo or socket")
    return _Member(name, "file", info.file_size)


def _zip_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo, member: _Member) -> _Opener | None:
    if member.kind != "file":
        return None

    def open_member() -> IO[bytes]:
        return archive.open(info)

    return open_member


def _extract_zip(path: Path, root: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(path) as archive:
        found = []
        for info in archive.infolist():
            member = _zip_member(path, archive, info)
            budget.declare(info.filename, member.size)
            found.append((info, member))
        _check_layout(path, (member for _, member in found))
        bad = archive.testzip()  # checks every CRC before anything is written
        if bad is not None:
            raise BadInputError(path, f"corrupt archive: bad CRC in member {bad!r}")
        entries = [(member, _zip_opener(archive, info, member)) for info, member in found]
        _write_all(root, entries, budget)


# --- entry point ------------------------------------------------------------------------------

_EXTRACTORS: dict[ArchiveKind, Callable[[Path, Path, _Budget], None]] = {
    "gzip": _extract_gzip,
    "tar": _extract_plain_tar,
    "zip": _extract_zip,
}


def _archive_kind(path: Path) -> ArchiveKind:
    if not path.exists():
        raise BadInputError(path, "no such file")
    if not path.is_file():
        raise BadInputError(path, "not a file")
    kind = _sniff(path)
    if kind is None and _ARCHIVE_NAME.search(path.name):
        raise BadInputError(path, "corrupt archive: not a gzip, tar or zip file")
    if kind is None:
        raise BadInputError(path, "not an archive (expected gzip, tar or zip)")
    return kind


def _short(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def extract_archive(path: Path, dest: Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> Path:
    """Extract the archive at ``path`` into ``dest`` and return the folder holding the paper.

    ``dest`` must be an existing empty folder the caller owns (a temporary directory, say); the
    paper is extracted directly into it, so ``dest`` itself is returned. Raises
    :class:`BadInputError` for an unsafe, oversized, corrupt or non-LaTeX archive, and then
    leaves ``dest`` empty again.
    """
    path, dest = Path(path), Path(dest)
    kind = _archive_kind(path)
    if not dest.is_dir() or any(dest.iterdir()):
        raise ValueError(f"{dest}: the destination must be an existing empty folder")
    root = dest.resolve()
    try:
        _EXTRACTORS[kind](path, root, _Budget(path, limits))
    except BaseException as exc:
        _clear(root)
        if isinstance(exc, _CORRUPT):
            raise BadInputError(path, f"corrupt archive: {_short(exc)}") from exc
        raise
    return dest
