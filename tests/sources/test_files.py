"""Tests for papergym.sources.files: lenient decoding, binary and size refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.sources.files import decode_text, looks_binary, read_text

PNG_HEADER = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_utf8_with_accents_cjk_and_math(tmp_path: Path) -> None:
    text = "\\section{Résumé} 漢字 ∀x∈ℝ: x² ≥ 0 — “quoted”\n"
    assert read_text(write(tmp_path, "a.tex", text.encode("utf-8"))) == text


def test_utf8_bom_is_stripped(tmp_path: Path) -> None:
    path = write(tmp_path, "bom.tex", b"\xef\xbb\xbf\\documentclass{article}\n")
    assert read_text(path) == "\\documentclass{article}\n"


def test_latin1_accents_fall_back(tmp_path: Path) -> None:
    # 0xE9 (é) alone is invalid UTF-8; cp1252 and latin-1 agree on it.
    path = write(tmp_path, "l1.tex", "café naïve Zürich\n".encode("latin-1"))
    assert read_text(path) == "café naïve Zürich\n"


def test_latin1_only_bytes_fall_through_cp1252(tmp_path: Path) -> None:
    # 0x81 is undefined in cp1252, so only latin-1 can decode this.
    assert decode_text(b"a\x81b \xe9", "x.tex") == "a\x81b é"


def test_cp1252_smart_quotes(tmp_path: Path) -> None:
    data = b"\x93smart\x94 \x91quotes\x92 \x96 dash \x80\n"
    assert read_text(write(tmp_path, "w.tex", data)) == "“smart” ‘quotes’ – dash €\n"


def test_empty_file_is_text(tmp_path: Path) -> None:
    assert read_text(write(tmp_path, "empty.tex", b"")) == ""


@pytest.mark.parametrize(
    "data",
    [
        PNG_HEADER + bytes(range(256)) * 4,
        b"text\x00with a NUL",
        bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 100,
    ],
    ids=["png", "nul", "controls"],
)
def test_binary_is_refused(tmp_path: Path, data: bytes) -> None:
    path = write(tmp_path, "fig.tex", data)
    with pytest.raises(BadInputError) as info:
        read_text(path)
    assert str(info.value) == f"{path}: binary file, not text"


def test_looks_binary() -> None:
    assert looks_binary(PNG_HEADER)
    assert looks_binary(b"\x00")
    assert not looks_binary(b"")
    assert not looks_binary("x\t\f\r\n é 漢字 ∑ ≤ 𝔽".encode() * 100)
    assert not looks_binary(b"\x1b[1mfew escapes\x1b[0m in a long enough line of text")
    assert looks_binary(b"\x01\x02\x03abc")  # 3 controls in 6 bytes: 50%
    # Only the first 8 KiB count: a NUL after them is not seen.
    assert not looks_binary(b"a" * 8192 + b"\x00")


def test_decode_text_names_member_in_error() -> None:
    with pytest.raises(BadInputError, match=r"^paper\.tar\.gz/fig\.pdf: binary file"):
        decode_text(b"%PDF\x00\x01", "paper.tar.gz/fig.pdf")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.tex"
    with pytest.raises(BadInputError) as info:
        read_text(path)
    assert str(info.value) == f"{path}: no such file"


def test_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="folder"):
        read_text(tmp_path)


def test_too_large(tmp_path: Path) -> None:
    path = write(tmp_path, "big.tex", b"x" * 101)
    assert read_text(path, max_bytes=101) == "x" * 101
    with pytest.raises(BadInputError) as info:
        read_text(path, max_bytes=100)
    assert str(info.value).startswith(f"{path}: file too large")
    assert "100" in info.value.reason
