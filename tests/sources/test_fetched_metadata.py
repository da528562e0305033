"""Ingestion reads a fetched paper's metadata.json: id, date, licence, and the title as a
fallback; a broken one is a one-line error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.ingestion import ingest, ingest_sources
from papergym.sources.fetched import FetchedMetadata, read_fetched_metadata
from support.papers import MINIMAL_MAIN

RECORD = {
    "id": "hep-th/9901001",
    "version": 2,
    "title": "Strings, Briefly",
    "categories": ["hep-th"],
    "primary_category": "hep-th",
    "submitted": "1999-01-05",
    "updated": "1999-03-01",
    "licence": "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
}


def _paper(folder: Path, record: object | None) -> Path:
    folder.mkdir(parents=True)
    (folder / "main.tex").write_text(MINIMAL_MAIN)
    if record is not None:
        (folder / "metadata.json").write_text(json.dumps(record))
    return folder


def test_metadata_json_gives_id_date_and_licence(tmp_path: Path) -> None:
    [paper] = ingest(_paper(tmp_path / "papers" / "hep-th_9901001", RECORD))
    assert paper.meta.arxiv_id == "hep-th/9901001v2"
    assert paper.meta.date == "1999-01-05"
    assert paper.meta.licence == RECORD["licence"]


def test_without_metadata_the_name_still_decides(tmp_path: Path) -> None:
    [paper] = ingest(_paper(tmp_path / "2401.01234v1", None))
    assert (paper.meta.arxiv_id, paper.meta.date, paper.meta.licence) == (
        "2401.01234v1",
        "2024-01",
        None,
    )


def test_a_broken_metadata_json_names_the_file(tmp_path: Path) -> None:
    folder = _paper(tmp_path / "papers" / "p1", {"id": "x", "licence": 3})
    report = ingest_sources([tmp_path / "papers"])
    [failure] = report.failures
    assert "metadata.json" in failure.reason and "licence" in failure.reason
    (folder / "metadata.json").write_text("{not json")
    with pytest.raises(BadInputError, match=r"metadata\.json: not valid JSON"):
        read_fetched_metadata(folder)


def test_the_record_round_trips() -> None:
    record = FetchedMetadata.model_validate(RECORD)
    assert record.versioned_id == "hep-th/9901001v2"
    assert FetchedMetadata.model_validate_json(record.model_dump_json()) == record


def test_a_metadata_json_of_another_tool_is_read_for_what_it_shares(tmp_path: Path) -> None:
    # an arXiv metadata dump spells it "license" and carries more (authors, doi...)
    other = {"id": "2401.01234", "license": "http://creativecommons.org/licenses/by/4.0/"}
    folder = _paper(tmp_path / "p", {**other, "authors": "A. B.", "doi": "10.1/x"})
    record = read_fetched_metadata(folder)
    assert record is not None and record.licence == other["license"]
    assert "licence" in record.model_dump() and "license" not in record.model_dump()


def test_a_metadata_json_without_an_id_is_another_tools_and_not_read(tmp_path: Path) -> None:
    # papergym write leaves its own metadata.json beside each written paper
    folder = _paper(tmp_path / "p", {"name": "attention", "bib": "attention.bib"})
    assert read_fetched_metadata(folder) is None
