from __future__ import annotations

import pytest

from papergym.sources.arxiv import arxiv_date, arxiv_id_from_name


@pytest.mark.parametrize(
    ("name", "arxiv_id", "date"),
    [
        ("2301.01234v2.tar.gz", "2301.01234v2", "2023-01"),
        ("arXiv-1706.03762", "1706.03762", "2017-06"),
        ("0704.0001.gz", "0704.0001", "2007-04"),
        ("hep-th_9901001v1.tar.gz", "hep-th/9901001v1", "1999-01"),
        ("math.GT0309136", "math.GT/0309136", "2003-09"),
    ],
)
def test_ids_and_dates_from_names(name: str, arxiv_id: str, date: str) -> None:
    assert arxiv_id_from_name(name) == arxiv_id
    assert arxiv_date(arxiv_id) == date


@pytest.mark.parametrize(
    "name", ["main.tex", "paper-2023", "1234.5678", "v1.2.3", "report_20231301"]
)
def test_names_without_ids(name: str) -> None:
    assert arxiv_id_from_name(name) is None
