"""Reading the API's Atom feed and OAI-PMH's arXiv records, from the recorded responses."""

from __future__ import annotations

import pytest

from papergym.errors import BadInputError
from papergym.fetch.feeds import listing_query, parse_atom, parse_licence
from papergym.fetch.ids import ArxivId
from support.arxiv_server import Paper, template


def _feed(*papers: Paper, total: int | None = None) -> str:
    return template("atom_feed.xml").substitute(
        query="id_list=x",
        total=len(papers) if total is None else total,
        start=0,
        per_page=len(papers),
        entries="\n".join(p.entry() for p in papers),
    )


def test_an_entry_gives_version_categories_and_dates() -> None:
    page = parse_atom(_feed(Paper("2401.01234", version=3), total=7), "u")
    [entry] = page.entries
    assert page.total == 7
    assert entry.id == ArxivId("2401.01234", 3)
    assert entry.categories == ("cs.LG", "stat.ML") and entry.primary_category == "cs.LG"
    assert (entry.submitted, entry.updated) == ("2024-01-02", "2024-02-01")
    assert entry.summary == "We study things." and not entry.withdrawn


@pytest.mark.parametrize(
    ("comment", "summary", "withdrawn"),
    [
        ("This paper has been withdrawn by the author", "x", True),
        ("12 pages", "This paper has been withdrawn due to an error.", True),
        ("12 pages", "We model drugs withdrawn from the market.", False),
    ],
)
def test_withdrawals_are_read_from_arxivs_wording(
    comment: str, summary: str, withdrawn: bool
) -> None:
    paper = Paper("2401.01234", comment=comment, summary=summary)
    assert parse_atom(_feed(paper), "u").entries[0].withdrawn is withdrawn


def test_the_apis_error_entry_is_an_error_not_a_paper() -> None:
    error = template("atom_error.xml").substitute(
        query="id_list=1234", anchor="incorrect_id_format_for_1234", message="incorrect id format"
    )
    with pytest.raises(BadInputError, match="refused the query: incorrect id format"):
        parse_atom(error, "http://x/api/query")


def test_a_non_feed_is_refused_with_its_start() -> None:
    with pytest.raises(BadInputError, match="Rate exceeded"):
        parse_atom("Rate exceeded.", "http://x/api/query")


def test_the_licence_is_read_from_the_oai_record() -> None:
    cc = "http://creativecommons.org/licenses/by-sa/4.0/"
    assert parse_licence(Paper("2401.01234", licence=cc).record(), "u") == cc
    assert parse_licence(Paper("2401.01234", licence=None).record(), "u") is None
    unknown = template("oai_error.xml").substitute(id="2401.99999")
    with pytest.raises(BadInputError, match="idDoesNotExist"):
        parse_licence(unknown, "u")


def test_a_listing_query_spans_whole_months() -> None:
    assert listing_query("cs.LG", "2024-01", "2024-02") == (
        "cat:cs.LG AND submittedDate:[202401010000 TO 202402292359]"
    )
    with pytest.raises(BadInputError, match="not a month"):
        listing_query("cs.LG", "2024-1", "2024-02")
