from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from papergym.cli import app
from support.arxiv_server import ArxivServer

runner = CliRunner()


def _fetch(arxiv: ArxivServer, out: Path, *arguments: str) -> tuple[int, str]:
    result = runner.invoke(
        app,
        ["fetch", "-o", str(out), "--base-url", arxiv.base_url, "--delay", "0", *arguments],
    )
    return result.exit_code, result.output


def test_ids_from_a_file_and_the_line_are_fetched_and_summarised(
    arxiv: ArxivServer, tmp_path: Path
) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("# two papers\n2401.01234\n\nhep-th/9901001  # old style\n")
    code, output = _fetch(arxiv, tmp_path / "PAPERS", str(ids), "fetch.backoff_s=0")
    assert code == 0, output
    assert "fetched" in output and "bytes downloaded" in output
    assert sorted(p.name for p in (tmp_path / "PAPERS").iterdir()) == [
        "2401.01234",
        "hep-th_9901001",
    ]


def test_a_malformed_id_is_named_the_rest_go_on_and_the_exit_is_2(
    arxiv: ArxivServer, tmp_path: Path
) -> None:
    code, output = _fetch(arxiv, tmp_path / "PAPERS", "2401.01234", "not-an-id", "--json")
    assert code == 2
    summary = json.loads(output[: output.rindex("}") + 1])
    assert summary["counts"]["fetched"] == 1
    assert summary["counts"]["failed"] == 1
    assert "'not-an-id' is not an arXiv id" in output


def test_a_failed_download_exits_1_with_its_reason(arxiv: ArxivServer, tmp_path: Path) -> None:
    arxiv.html_eprints.add("2401.01234")
    code, output = _fetch(arxiv, tmp_path / "PAPERS", "2401.01234")
    assert code == 1
    assert "HTML" in output


def test_an_empty_listing_exits_2_showing_the_query(arxiv: ArxivServer, tmp_path: Path) -> None:
    code, output = _fetch(
        arxiv, tmp_path / "PAPERS", "--category", "cs.LG", "--from", "2024-01", "--until", "2024-06"
    )
    assert code == 2
    assert "no papers match the query 'cat:cs.LG AND submittedDate:[202401010000 TO" in output


def test_bad_usage_is_one_line_and_exit_2(arxiv: ArxivServer, tmp_path: Path) -> None:
    for arguments in (
        ("--category", "cs.LG", "--from", "2024-01"),
        ("2401.01234", "--category", "cs.LG", "--from", "2024-01", "--until", "2024-02"),
        ("--category", "cs.LG", "--from", "2024-13", "--until", "2024-02"),
        ("2401.01234", "--licence", "gpl"),
    ):
        code, output = _fetch(arxiv, tmp_path / "PAPERS", *arguments)
        assert code == 2, arguments
        assert output.count("error:") == 1, output
    assert arxiv.requests == []
