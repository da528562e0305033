from __future__ import annotations

import pytest

from papergym.errors import BadInputError
from papergym.fetch.ids import ArxivId, parse_id


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2401.01234", ArxivId("2401.01234")),
        ("2401.01234v2", ArxivId("2401.01234", 2)),
        ("1412.1234", ArxivId("1412.1234")),
        ("hep-th/9901001", ArxivId("hep-th/9901001")),
        ("math.GT/0309136v1", ArxivId("math/0309136", 1)),
        ("arXiv:1706.03762", ArxivId("1706.03762")),
        ("https://arxiv.org/abs/1706.03762v7", ArxivId("1706.03762", 7)),
    ],
)
def test_ids_in_both_styles_parse(text: str, expected: ArxivId) -> None:
    assert parse_id(text) == expected


@pytest.mark.parametrize(
    "text", ["2401.1234", "1412.12345", "2413.01234", "hep-th_9901001", "not-an-id", "2401.01234v0"]
)
def test_a_malformed_id_is_one_line_naming_it(text: str) -> None:
    with pytest.raises(BadInputError) as caught:
        parse_id(text)
    assert repr(text) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_folder_names_hold_no_slash() -> None:
    assert parse_id("hep-th/9901001v3").folder == "hep-th_9901001"
    assert parse_id("2401.01234v3").folder == "2401.01234"
    assert parse_id("2401.01234v3").text == "2401.01234v3"
