"""What the ARES corpus reader refuses to open: links leading out of a corpus folder, FIFOs and
devices (issue 20, items 9 and 10). Each is one line naming the file, exit 2, nothing written."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from ares_texts import SCIENCE, wrapped
from typer.testing import CliRunner

from papergym.cli import app

runner = CliRunner()
PROSE = wrapped(SCIENCE, 80)


def build(corpus: Path, out: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["build", str(corpus), "--recipe", "ares", "-o", str(out)])
    return result.exit_code, result.stderr


@contextmanager
def unblocked(fifo: Path) -> Iterator[None]:
    """Opens ``fifo`` for writing, then closes it, whenever a reader waits on it: a reader that
    opened it (the bug) then reads an empty file instead of hanging the test for ever."""
    done = threading.Event()

    def release() -> None:
        while not done.is_set():
            with suppress(OSError):  # no reader yet (ENXIO)
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            time.sleep(0.05)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["pipe.txt", "pipe.jsonl", "pipe.md"])
@pytest.mark.parametrize("inside", [False, True], ids=["given", "in-a-folder"])
def test_a_fifo_is_refused_before_anything_is_written(
    tmp_path: Path, name: str, inside: bool
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "good.md").write_text(PROSE, encoding="utf-8")
    fifo = folder / name
    os.mkfifo(fifo)
    out = tmp_path / "out"
    with unblocked(fifo):
        code, stderr = build(folder if inside else fifo, out)
    assert code == 2, stderr
    assert stderr.strip().splitlines() == [f"error: {fifo}: not a regular file"]
    assert not out.exists()


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_link_to_a_device_is_refused(tmp_path: Path, device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    link = tmp_path / "zero.txt"
    link.symlink_to(device)
    code, stderr = build(link, tmp_path / "out")
    assert code == 2, stderr
    assert stderr.strip().splitlines() == [f"error: {link}: not a regular file"]
    assert not (tmp_path / "out").exists()


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A file outside the corpus folder (as /etc/passwd is)."""
    path = tmp_path / "elsewhere" / "secret.txt"
    path.parent.mkdir()
    path.write_text("A secret, short enough for the prefilter to drop.", encoding="utf-8")
    return path


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_link_leading_out_of_a_corpus_folder_is_not_followed(
    tmp_path: Path, secret: Path, what: str
) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "good.md").write_text(PROSE, encoding="utf-8")
    link = folder / ("leak.txt" if what == "file" else "more")
    link.symlink_to(secret if what == "file" else secret.parent)
    out = tmp_path / "out"
    code, stderr = build(folder, out)
    assert code == 2, stderr
    target = secret if what == "file" else secret.parent
    assert stderr.strip().splitlines() == [
        f"error: {link}: a link leading out of the corpus folder (to {target.resolve()}); "
        "not followed: pass the target itself to read it"
    ]
    assert not out.exists()


def test_links_inside_the_folder_and_links_given_by_name_are_read(
    tmp_path: Path, secret: Path
) -> None:
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "good.md").write_text("Short: the prefilter drops it.", encoding="utf-8")
    (folder / "alias.md").symlink_to(folder / "sub" / "good.md")  # inside: read (a duplicate)
    named = tmp_path / "named.txt"
    named.symlink_to(secret)  # named on the command line: the user's choice
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["build", str(folder), str(named), "--recipe", "ares", "-o", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    assert '"documents": 3' in result.stdout
