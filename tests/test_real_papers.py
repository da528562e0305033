"""Ingestion of the real paper sources in ../shared/papers (skipped when that folder is absent)."""

from __future__ import annotations

import re
import unicodedata

import pytest

import papergym
from papergym.records import Paper
from papergym.sources.latex.totext import inline_text
from support.papers import SHARED_PAPERS


def _norm(heading: str) -> str:
    """Compare headings ignoring LaTeX markup, case, punctuation and spacing."""
    text = inline_text(heading) if "\\" in heading else heading
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[^a-z0-9]+", " ", text).strip()


def _is_subsequence(expected: list[str], actual: list[str]) -> bool:
    remaining = iter(actual)
    return all(any(item == candidate for candidate in remaining) for item in expected)


@pytest.fixture(scope="module")
def real_papers(shared_index: list[dict[str, object]]) -> dict[str, Paper]:
    papers: dict[str, Paper] = {}
    for entry in shared_index:
        name = str(entry["name"])
        [paper] = papergym.ingest(SHARED_PAPERS / name)
        papers[name] = paper
    return papers


def test_every_paper_is_ingested(
    real_papers: dict[str, Paper], shared_index: list[dict[str, object]]
) -> None:
    assert set(real_papers) == {str(e["name"]) for e in shared_index}
    assert len(real_papers) >= 12


def test_main_file_title_and_abstract(
    real_papers: dict[str, Paper], shared_index: list[dict[str, object]]
) -> None:
    for entry in shared_index:
        paper = real_papers[str(entry["name"])]
        assert paper.meta.main_file == entry["main"], entry["name"]
        assert len(paper.title.split()) >= 2, entry["name"]
        assert len(paper.abstract.split()) >= 30, entry["name"]


def test_top_level_sections_in_order(
    real_papers: dict[str, Paper], shared_index: list[dict[str, object]]
) -> None:
    for entry in shared_index:
        paper = real_papers[str(entry["name"])]
        expected = [_norm(str(h)) for h in entry["sections"]]  # type: ignore[attr-defined]
        found = [_norm(h) for h in paper.top_level_headings()]
        assert _is_subsequence(expected, found), f"{entry['name']}: {expected} not in {found}"


def test_appendix_sections_are_flagged(real_papers: dict[str, Paper]) -> None:
    expectations = {
        "celerite-gp-astro": ["Ensuring positive definiteness for celerite models"],
        "nc-skills-compulsory-schooling": [
            "Additional data details",
            "Robustness of main findings",
        ],
        "olg-demographic-change": ["Computation", "Additional figures"],
        "replication-financial-macro": ["Appendix"],
        "automatic-statistician-abcd": ["Guide to the automatically generated reports"],
    }
    for name, headings in expectations.items():
        paper = real_papers[name]
        flags = {s.heading: s.appendix for s in paper.sections if s.level == 1}
        for heading in headings:
            assert flags[heading], f"{name}: {heading} not flagged"
        assert not flags["Introduction"], name


def test_text_is_free_of_latex_markup(real_papers: dict[str, Paper]) -> None:
    for name, paper in real_papers.items():
        tokens = (paper.abstract + " " + " ".join(s.text for s in paper.sections)).split()
        markup = [t for t in tokens if re.search(r"\\[A-Za-z]", t)]
        assert len(markup) / len(tokens) < 0.001, f"{name}: {markup[:10]}"
        assert "\\begin" not in paper.abstract and "documentclass" not in " ".join(
            s.text for s in paper.sections
        ), name


def test_unresolved_inputs_are_reported_as_warnings(
    real_papers: dict[str, Paper], shared_index: list[dict[str, object]]
) -> None:
    for entry in shared_index:
        paper = real_papers[str(entry["name"])]
        warnings = " ".join(paper.meta.warnings)
        for missing in entry["unresolved_inputs"]:  # type: ignore[attr-defined]
            assert str(missing) in warnings, f"{entry['name']}: {missing} not reported"


def test_bibliography_and_preamble_do_not_leak(real_papers: dict[str, Paper]) -> None:
    for name, paper in real_papers.items():
        text = " ".join(s.text for s in paper.sections)
        assert "usepackage" not in text, name
        assert "bibliographystyle" not in text, name
        assert not any(
            s.heading.lower() in {"references", "bibliography"} for s in paper.sections
        ), name
