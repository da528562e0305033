"""Tests for papergym.sources.archive: good archives extract, bad ones are refused cleanly."""

from __future__ import annotations

import gzip
import io
import os
import random
import stat
import tarfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.sources import archive
from papergym.sources.archive import ArchiveLimits, extract_archive, is_archive

Entry = tuple[tarfile.TarInfo, bytes | None]
SMALL = ArchiveLimits(max_total_bytes=1_000_000, max_files=5, max_member_bytes=1_000_000)
MAIN_TEX = b"\\documentclass{article}\n\\begin{document}\\input{sections/intro}\\end{document}\n"
INTRO_TEX = "\\section{Introduction} Résumé ∀x\n".encode()


# --- building archives ------------------------------------------------------------------------


def regular(name: str, data: bytes) -> Entry:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def special(name: str, kind: bytes, linkname: str = "") -> Entry:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def tar_bytes(entries: list[Entry], compression: str = "gz") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=f"w:{compression}") as tar:  # type: ignore[call-overload]
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def zip_bytes(entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return buffer.getvalue()


def zip_symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


GOOD_ENTRIES: list[Entry] = [
    special("./", tarfile.DIRTYPE),
    regular("./main.tex", MAIN_TEX),
    special("sections", tarfile.DIRTYPE),
    regular("sections/intro.tex", INTRO_TEX),
    regular("figs/sub/plot.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256))),
    special("sections/alias.tex", tarfile.SYMTYPE, "intro.tex"),
    special("sections/up.tex", tarfile.SYMTYPE, "../main.tex"),
    special("copy.tex", tarfile.LNKTYPE, "main.tex"),
    special("figs/dirlink", tarfile.SYMTYPE, "sub"),
    special("dangling.tex", tarfile.SYMTYPE, "missing.tex"),
]


# --- checking results -------------------------------------------------------------------------


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    """An input folder and an empty destination two levels down, so escapes are visible."""
    (tmp_path / "in").mkdir()
    dest = tmp_path / "out" / "dest"
    dest.mkdir(parents=True)
    return tmp_path / "in", dest


def put(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def tree(root: Path) -> set[str]:
    """Every path under ``root`` (links not followed), relative, with a marker for links."""
    found = set()
    for folder, subdirs, files in os.walk(root):
        for name in subdirs + files:
            path = Path(folder, name)
            found.add(path.relative_to(root).as_posix() + (" -> link" if path.is_symlink() else ""))
    return found


def refused(path: Path, dest: Path, *needles: str, limits: ArchiveLimits = SMALL) -> str:
    """Assert extraction is refused naming the archive and reasons, leaving no trace."""
    top = dest.parent.parent
    before = tree(top)
    with pytest.raises(BadInputError) as info:
        extract_archive(path, dest, limits)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    for needle in needles:
        assert needle in message
    assert list(dest.iterdir()) == []
    assert tree(top) == before
    return message


def assert_good_tree(dest: Path) -> None:
    assert tree(dest) == {
        "main.tex",
        "copy.tex",
        "sections",
        "sections/intro.tex",
        "sections/alias.tex",
        "sections/up.tex",
        "figs",
        "figs/sub",
        "figs/sub/plot.png",
    }
    assert (dest / "main.tex").read_bytes() == MAIN_TEX
    assert (dest / "copy.tex").read_bytes() == MAIN_TEX
    assert (dest / "sections/up.tex").read_bytes() == MAIN_TEX
    assert (dest / "sections/alias.tex").read_bytes() == INTRO_TEX


# --- good archives ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "compression"), [("2401.01234.tar.gz", "gz"), ("src.tgz", "gz"), ("src.tar", "")]
)
def test_tar_extracts_nested_tree(dirs: tuple[Path, Path], name: str, compression: str) -> None:
    indir, dest = dirs
    path = put(indir, name, tar_bytes(GOOD_ENTRIES, compression))
    assert is_archive(path)
    assert extract_archive(path, dest) == dest
    assert_good_tree(dest)


def test_gzipped_tar_without_extension(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    path = put(indir, "2401.01234", tar_bytes(GOOD_ENTRIES))
    extract_archive(path, dest)
    assert_good_tree(dest)


def test_zip_extracts_nested_tree_and_inner_symlink(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    data = zip_bytes(
        [
            ("paper/", b""),
            ("paper/main.tex", MAIN_TEX),
            ("paper/sections/intro.tex", INTRO_TEX),
            zip_symlink("paper/sections/alias.tex", "intro.tex"),
        ]
    )
    path = put(indir, "paper.zip", data)
    assert is_archive(path)
    extract_archive(path, dest)
    assert tree(dest) == {
        "paper",
        "paper/main.tex",
        "paper/sections",
        "paper/sections/intro.tex",
        "paper/sections/alias.tex",
    }
    assert (dest / "paper/sections/alias.tex").read_bytes() == INTRO_TEX


@pytest.mark.parametrize(
    ("name", "written"),
    [("2401.01234", "2401.01234.tex"), ("paper.gz", "paper.tex"), ("main.tex.gz", "main.tex")],
)
def test_single_gzipped_tex(dirs: tuple[Path, Path], name: str, written: str) -> None:
    indir, dest = dirs
    source = "\\documentclass{article}\n% café\n".encode("latin-1")
    path = put(indir, name, gzip.compress(source))
    assert is_archive(path)
    extract_archive(path, dest)
    assert tree(dest) == {written}
    assert (dest / written).read_bytes() == source


def test_is_archive_rejects_text_and_missing(tmp_path: Path) -> None:
    assert not is_archive(put(tmp_path, "fake.tar.gz", b"\\documentclass{article}\n" * 50))
    assert not is_archive(tmp_path / "missing.tar.gz")
    assert not is_archive(put(tmp_path, "empty.zip", b""))


# --- unsafe members ---------------------------------------------------------------------------

UNSAFE_TAR: dict[str, tuple[Entry, str]] = {
    "absolute": (regular("/etc/evil", b"x"), "absolute path"),
    "windows-drive": (regular("C:\\Windows\\evil.tex", b"x"), "absolute path"),
    "windows-root": (regular("\\evil.tex", b"x"), "absolute path"),
    "dotdot": (regular("../evil", b"x"), "'..'"),
    "dotdot-deep": (regular("sub/../../evil", b"x"), "'..'"),
    "dotdot-backslash": (regular("sub\\..\\..\\evil", b"x"), "'..'"),
    "symlink-etc": (special("passwd", tarfile.SYMTYPE, "/etc/passwd"), "outside"),
    "symlink-up": (special("sub/evil", tarfile.SYMTYPE, "../../etc/passwd"), "outside"),
    "symlink-up-one": (special("evil", tarfile.SYMTYPE, "../evil"), "outside"),
    "hardlink-abs": (special("evil", tarfile.LNKTYPE, "/etc/passwd"), "outside"),
    "hardlink-up": (special("sub/evil", tarfile.LNKTYPE, "../outside.txt"), "outside"),
    "fifo": (special("evil", tarfile.FIFOTYPE), "device or fifo"),
    "char-device": (special("evil", tarfile.CHRTYPE), "device or fifo"),
    "block-device": (special("evil", tarfile.BLKTYPE), "device or fifo"),
}


@pytest.mark.parametrize("case", sorted(UNSAFE_TAR))
def test_unsafe_tar_member_is_refused(dirs: tuple[Path, Path], case: str) -> None:
    indir, dest = dirs
    entry, reason = UNSAFE_TAR[case]
    # A good member first: validation must refuse before writing even that.
    path = put(indir, "evil.tar.gz", tar_bytes([regular("main.tex", MAIN_TEX), entry]))
    message = refused(path, dest, reason, limits=archive.DEFAULT_LIMITS)
    assert repr(entry[0].name) in message


def test_nothing_is_written_before_validation(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    indir, dest = dirs
    calls: list[object] = []
    monkeypatch.setattr(archive, "_write_all", lambda *args: calls.append(args))
    path = put(
        indir, "evil.tar.gz", tar_bytes([regular("main.tex", MAIN_TEX), regular("../evil", b"x")])
    )
    refused(path, dest, "'..'")
    assert calls == []


def test_member_inside_a_file_is_refused(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    path = put(indir, "clash.tar", tar_bytes([regular("a", b"x"), regular("a/b.tex", b"y")], ""))
    refused(path, dest, "'a/b.tex'", "inside")


UNSAFE_ZIP: dict[str, tuple[tuple[str | zipfile.ZipInfo, bytes], str]] = {
    "absolute": (("/etc/evil", b"x"), "absolute path"),
    "dotdot": (("../evil", b"x"), "'..'"),
    "backslash-dotdot": (("..\\evil", b"x"), "'..'"),
    "symlink-etc": (zip_symlink("passwd", "/etc/passwd"), "outside"),
    "symlink-up": (zip_symlink("sub/evil", "../../evil"), "outside"),
}


@pytest.mark.parametrize("case", sorted(UNSAFE_ZIP))
def test_unsafe_zip_member_is_refused(dirs: tuple[Path, Path], case: str) -> None:
    indir, dest = dirs
    entry, reason = UNSAFE_ZIP[case]
    path = put(indir, "evil.zip", zip_bytes([("main.tex", MAIN_TEX), entry]))
    refused(path, dest, reason)


def test_encrypted_zip_member_is_refused(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    data = bytearray(zip_bytes([("secret.tex", b"x")]))
    # zipfile cannot write encrypted members: set the "encrypted" flag bit in both headers.
    data[6] |= 0x1  # local file header
    data[data.index(b"PK\x01\x02") + 8] |= 0x1  # central directory entry
    path = put(indir, "secret.zip", bytes(data))
    refused(path, dest, "'secret.tex'", "encrypted")


def test_data_filter_is_applied_as_defence_in_depth(tmp_path: Path) -> None:
    link = special("link", tarfile.SYMTYPE, "/etc/passwd")[0]
    with pytest.raises(BadInputError, match="unsafe member 'link'"):
        archive._apply_data_filter(tmp_path / "a.tar", link, tmp_path)
    with pytest.raises(BadInputError, match=r"unsafe member '\.\./x'"):
        archive._apply_data_filter(tmp_path / "a.tar", tarfile.TarInfo("../x"), tmp_path)


# --- limits -----------------------------------------------------------------------------------


def test_too_many_files(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    path = put(indir, "many.tar.gz", tar_bytes([regular(f"f{i}.tex", b"x") for i in range(6)]))
    refused(path, dest, "too many members")
    extract_archive(path, dest, ArchiveLimits(max_files=6))
    assert len(list(dest.iterdir())) == 6


def test_too_many_zip_files(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    path = put(indir, "many.zip", zip_bytes([(f"f{i}.tex", b"x") for i in range(6)]))
    refused(path, dest, "too many members")


def test_declared_size_too_big_is_refused_from_the_header(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    info = tarfile.TarInfo("huge.tex")
    info.size = 5 << 30  # a header claiming 5 GiB, with no data behind it
    data = gzip.compress(info.tobuf() + bytes(1024))
    path = put(indir, "huge.tar.gz", data)
    refused(path, dest, "'huge.tex'", "declared", limits=archive.DEFAULT_LIMITS)


def test_member_over_member_limit(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    limits = ArchiveLimits(max_member_bytes=1000)
    path = put(indir, "big.zip", zip_bytes([("a.tex", b"x" * 500), ("b.tex", b"x" * 1001)]))
    refused(path, dest, "'b.tex'", "too large", limits=limits)


def test_total_over_limit(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    limits = ArchiveLimits(max_total_bytes=1000)
    entries = [regular("a.tex", b"x" * 600), regular("b.tex", b"x" * 600)]
    path = put(indir, "total.tar", tar_bytes(entries, ""))
    refused(path, dest, "'b.tex'", "uncompressed size too large", limits=limits)


def test_tar_gz_bomb_is_refused_quickly(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    path = put(indir, "bomb.tar.gz", tar_bytes([regular("zeros.tex", bytes(50_000_000))]))
    start = time.monotonic()
    refused(path, dest, "'zeros.tex'", "too large")
    assert time.monotonic() - start < 2


def spy_on_writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the running total after each chunk the budget lets through to disk."""
    totals: list[int] = []
    spend: Callable[..., None] = archive._Budget.spend

    def recording(self: archive._Budget, name: str, size: int, member_so_far: int) -> None:
        spend(self, name, size, member_so_far)
        totals.append(self.written)

    monkeypatch.setattr(archive._Budget, "spend", recording)
    return totals


def test_single_gzip_bomb_stops_at_the_limit(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    indir, dest = dirs
    totals = spy_on_writes(monkeypatch)
    bomb = gzip.compress(b"\\relax % padding\n" * 3_000_000)  # 51 MB of text, ~120 KB packed
    path = put(indir, "2401.99999.gz", bomb)
    start = time.monotonic()
    refused(path, dest, "too large")
    assert time.monotonic() - start < 2
    assert totals  # some chunks were written before the cap was reached...
    assert max(totals) <= SMALL.max_total_bytes  # ...but never more than the limit


def test_single_gzip_of_zeros_is_refused_as_binary(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    path = put(indir, "zeros.gz", gzip.compress(bytes(50_000_000)))
    refused(path, dest, "binary")


# --- corrupt and non-LaTeX archives -----------------------------------------------------------


def test_truncated_tar_gz(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    noise = random.Random(1).randbytes(200_000)
    data = tar_bytes([regular("main.tex", MAIN_TEX), regular("fig.png", noise)])
    path = put(indir, "cut.tar.gz", data[: len(data) // 2])
    refused(path, dest, "corrupt archive")


def test_bad_gzip_crc(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    data = bytearray(tar_bytes([regular("main.tex", MAIN_TEX)]))
    data[-8] ^= 0xFF  # the CRC32 in the gzip trailer
    path = put(indir, "crc.tar.gz", bytes(data))
    refused(path, dest, "corrupt archive", "CRC")


def test_truncated_plain_tar(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    data = tar_bytes([regular("main.tex", MAIN_TEX), regular("big.tex", b"x" * 5000)], "")
    path = put(indir, "cut.tar", data[:2048])
    refused(path, dest, "corrupt archive")


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("random.tar.gz", b"\x00\x01" + random.Random(2).randbytes(4000)),
        ("random.gz", b"\x1f\x8b" + random.Random(3).randbytes(4000)),
        ("random.tar", b"ustar" + random.Random(4).randbytes(4000)),
    ],
)
def test_random_bytes_are_corrupt(dirs: tuple[Path, Path], name: str, data: bytes) -> None:
    indir, dest = dirs
    refused(put(indir, name, data), dest, "corrupt archive")


def test_corrupt_zip_crc(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("main.tex", MAIN_TEX)
    data = buffer.getvalue().replace(b"documentclass", b"DOCUMENTCLASS")
    refused(put(indir, "crc.zip", data), dest, "corrupt archive")


def test_truncated_zip(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    data = zip_bytes([("main.tex", MAIN_TEX)])
    refused(put(indir, "cut.zip", data[:-30]), dest, "corrupt archive")


def test_pdf_only_submission(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    path = put(indir, "2401.00001", gzip.compress(b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"))
    refused(path, dest, "PDF-only submission, no LaTeX source")


def test_not_an_archive_and_missing(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    refused(put(indir, "paper.tex", b"\\documentclass{article}\n"), dest, "not an archive")
    refused(indir / "missing.tar.gz", dest, "no such file")


def test_destination_must_be_empty(dirs: tuple[Path, Path]) -> None:
    indir, dest = dirs
    (dest / "keep.txt").write_text("mine")
    path = put(indir, "src.tar.gz", tar_bytes(GOOD_ENTRIES))
    with pytest.raises(ValueError, match="empty"):
        extract_archive(path, dest)
    assert tree(dest) == {"keep.txt"}
