from __future__ import annotations

import pytest

from papergym.errors import BadInputError
from papergym.fetch.licences import check_families, licence_allowed, licence_family


@pytest.mark.parametrize(
    ("url", "family"),
    [
        ("http://creativecommons.org/licenses/by/4.0/", "cc-by"),
        ("https://creativecommons.org/licenses/by/3.0/", "cc-by"),
        ("http://creativecommons.org/licenses/by-sa/4.0/", "cc-by-sa"),
        ("http://creativecommons.org/licenses/by-nc-nd/4.0/", "cc-by-nc-nd"),
        ("http://creativecommons.org/publicdomain/zero/1.0/", "cc0"),
        ("http://arxiv.org/licenses/nonexclusive-distrib/1.0/", "arxiv"),
        (None, "none"),
        ("http://example.org/odd-licence", "http://example.org/odd-licence"),
    ],
)
def test_licence_urls_fall_in_their_family(url: str | None, family: str) -> None:
    assert licence_family(url) == family


def test_cc_by_keeps_only_cc_by() -> None:
    assert licence_allowed("http://creativecommons.org/licenses/by/4.0/", ["cc-by"])
    assert not licence_allowed("http://creativecommons.org/licenses/by-nc-sa/4.0/", ["cc-by"])
    assert not licence_allowed(None, ["cc-by"])
    assert licence_allowed(None, [])


def test_an_unknown_family_is_refused_listing_the_known() -> None:
    with pytest.raises(BadInputError, match="cc-by-sa"):
        check_families(["cc-by", "gpl"])
    assert check_families(["CC-BY"]) == ("cc-by",)
