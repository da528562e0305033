from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.fetch import run as fetch_run
from papergym.fetch.run import FetchOptions, Listing, fetch_papers
from papergym.fetch.settings import FetchSection
from papergym.ingestion import ingest_sources
from support.arxiv_server import PAPER_TEX, ArxivServer, Fault, Paper, tarball


def _statuses(report: fetch_run.FetchReport) -> dict[str, str]:
    return {o.id: o.status for o in report.outcomes}


def test_both_id_styles_land_with_their_metadata(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    arxiv.papers["2401.01234"].eprint = tarball({"main.tex": PAPER_TEX}, top="paper")
    report = fetch_papers(["2401.01234", "hep-th/9901001"], tmp_path, quick)
    assert _statuses(report) == {"2401.01234v2": "fetched", "hep-th/9901001v1": "fetched"}
    new = json.loads((tmp_path / "2401.01234" / "metadata.json").read_text())
    assert new == {
        "id": "2401.01234",
        "version": 2,
        "title": "A Study of Things",
        "categories": ["cs.LG", "stat.ML"],
        "primary_category": "cs.LG",
        "submitted": "2024-01-02",
        "updated": "2024-02-01",
        "licence": "http://creativecommons.org/licenses/by/4.0/",
    }
    assert (tmp_path / "2401.01234" / "main.tex").read_bytes() == PAPER_TEX
    assert b"Strings" in (tmp_path / "hep-th_9901001" / "main.tex").read_bytes()
    assert report.bytes == sum(len(p.eprint) for p in arxiv.papers.values())
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_ingestion_reads_what_fetch_wrote(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    fetch_papers(["2401.01234", "hep-th/9901001"], tmp_path, quick)
    papers = {p.meta.arxiv_id: p for p in ingest_sources([tmp_path]).papers}
    assert set(papers) == {"2401.01234v2", "hep-th/9901001v1"}
    assert papers["2401.01234v2"].meta.licence == "http://creativecommons.org/licenses/by/4.0/"
    assert papers["2401.01234v2"].meta.date == "2024-01-02"
    assert papers["hep-th/9901001v1"].meta.licence is None


def test_a_malformed_id_fails_alone(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    report = fetch_papers(["24x1.0001", "2401.01234", "2312.99999"], tmp_path, quick)
    assert _statuses(report) == {
        "24x1.0001": "failed",
        "2401.01234v2": "fetched",
        "2312.99999": "failed",
    }
    reasons = {o.id: o.reason for o in report.outcomes}
    assert "'24x1.0001' is not an arXiv id" in reasons["24x1.0001"]
    assert "not found" in reasons["2312.99999"]
    assert not any("24x1" in path for path, _ in arxiv.requests)


def test_a_second_run_skips_without_asking(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    fetch_papers(["2401.01234"], tmp_path, quick)
    asked = len(arxiv.requests)
    report = fetch_papers(["2401.01234v2", "2401.01234"], tmp_path, quick)
    assert {o.status for o in report.outcomes} == {"skipped"}
    assert len(arxiv.requests) == asked


def test_a_killed_runs_leftovers_are_neither_complete_nor_kept(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    leftover = tmp_path / ".partial-2401.01234-abc" / "paper"
    leftover.mkdir(parents=True)
    (leftover / "metadata.json").write_text("{}")
    report = fetch_papers(["2401.01234"], tmp_path, quick)
    assert _statuses(report) == {"2401.01234v2": "fetched"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["2401.01234"]


def test_an_interrupted_download_leaves_nothing(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("papergym.fetch.http._copy", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fetch_papers(["2401.01234"], tmp_path, quick)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_stops_the_run_with_the_reason(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = Path.open

    def full_disk(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        handle = real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]
        if self.name != "eprint":
            return handle

        class Full:
            def __enter__(self) -> Full:
                return self

            def __exit__(self, *exc: object) -> None:
                handle.close()

            def write(self, data: bytes) -> int:
                handle.write(data[:3])
                raise OSError(errno.ENOSPC, "No space left on device")

        return Full()

    monkeypatch.setattr(Path, "open", full_disk)
    report = fetch_papers(["2401.01234", "hep-th/9901001"], tmp_path, quick)
    assert report.aborted is not None and "No space left on device" in report.aborted
    assert report.outcomes == []  # it stopped at the first paper
    assert list(tmp_path.iterdir()) == []


def test_a_cut_download_is_a_failure_and_the_rest_go_on(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    arxiv.faults["2401.01234"] = [Fault(cut=5)] * 3
    report = fetch_papers(["2401.01234", "hep-th/9901001"], tmp_path, quick)
    assert _statuses(report) == {"2401.01234v2": "failed", "hep-th/9901001v1": "fetched"}
    assert "closed early" in report.outcomes[0].reason
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hep-th_9901001"]


def test_html_pdf_and_withdrawn_are_reported_as_such(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    arxiv.papers.update(
        {
            "2402.00001": Paper("2402.00001", eprint=b"%PDF-1.5\n..."),
            "2402.00002": Paper("2402.00002", comment="This paper has been withdrawn"),
            "2402.00003": Paper("2402.00003"),
        }
    )
    arxiv.html_eprints.add("2402.00003")
    report = fetch_papers(["2402.00001", "2402.00002", "2402.00003"], tmp_path, quick)
    assert _statuses(report) == {
        "2402.00001v1": "pdf_only",
        "2402.00002v1": "withdrawn",
        "2402.00003v1": "failed",
    }
    assert report.outcomes[0].reason == "pdf only, no source"
    assert "HTML" in report.outcomes[2].reason
    assert not arxiv.paths("/e-print/2402.00002")  # withdrawn: nothing to download
    assert list(tmp_path.iterdir()) == []


def test_the_licence_filter_keeps_its_family_only(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    arxiv.papers["2402.00004"] = Paper(
        "2402.00004", licence="http://creativecommons.org/licenses/by-nc-sa/4.0/"
    )
    options = FetchOptions(licences=("cc-by",))
    report = fetch_papers(["2401.01234", "2402.00004", "hep-th/9901001"], tmp_path, quick, options)
    assert _statuses(report) == {
        "2401.01234v2": "fetched",
        "2402.00004v1": "filtered",
        "hep-th/9901001v1": "filtered",
    }
    assert not arxiv.paths("/e-print/2402.00004")


def test_a_listing_pages_up_to_its_limit(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    ids = [f"2403.0000{n}" for n in range(1, 6)]
    arxiv.papers.update({i: Paper(i) for i in ids})
    arxiv.listing = ids
    settings = quick.model_copy(update={"page_size": 2})
    report = fetch_papers(Listing("cs.LG", "2024-01", "2024-06", limit=3), tmp_path, settings)
    assert [o.id for o in report.outcomes] == [f"{i}v1" for i in ids[:3]]
    queries = arxiv.paths("/api/query")
    assert len(queries) == 2
    assert (
        "search_query=cat%3Acs.LG+AND+submittedDate%3A%5B202401010000+TO+202406302359%5D"
        in (queries[0])
    )


def test_a_listing_with_no_results_shows_its_query(
    arxiv: ArxivServer, quick: FetchSection, tmp_path: Path
) -> None:
    with pytest.raises(BadInputError, match=r"cat:cs.LG AND submittedDate:\[202402010000"):
        fetch_papers(Listing("cs.LG", "2024-02", "2024-02"), tmp_path, quick)
