"""Reading JSONL written by other tools: BOMs, bad bytes, folders — one-line errors."""

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.jsonl import iter_json_lines


def test_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n\n{"a": 2}\n')
    assert list(iter_json_lines(path)) == [(1, {"a": 1}), (3, {"a": 2})]


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": "\xff\xfe"}\n')
    with pytest.raises(BadInputError, match=r"a\.jsonl:2.*not UTF-8"):
        list(iter_json_lines(path))


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(BadInputError, match=r"a\.jsonl:2.*not valid JSON"):
        list(iter_json_lines(path))


def test_folder_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="is a folder"):
        list(iter_json_lines(tmp_path))
    with pytest.raises(BadInputError, match="no such file"):
        list(iter_json_lines(tmp_path / "missing.jsonl"))
