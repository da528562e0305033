"""Licence families for ``--licence``: a short name stands for the prefix of the licence URLs
arXiv states (``cc-by`` → ``creativecommons.org/licenses/by/``, any version). Pure functions."""

from __future__ import annotations

from collections.abc import Sequence

from papergym.errors import BadInputError

FAMILIES: dict[str, str] = {
    "cc-by": "creativecommons.org/licenses/by/",
    "cc-by-sa": "creativecommons.org/licenses/by-sa/",
    "cc-by-nc": "creativecommons.org/licenses/by-nc/",
    "cc-by-nd": "creativecommons.org/licenses/by-nd/",
    "cc-by-nc-sa": "creativecommons.org/licenses/by-nc-sa/",
    "cc-by-nc-nd": "creativecommons.org/licenses/by-nc-nd/",
    "cc0": "creativecommons.org/publicdomain/zero/",
    "arxiv": "arxiv.org/licenses/nonexclusive-distrib/",
    "arxiv-assumed": "arxiv.org/licenses/assumed-1991-2003/",
}
"""Each family's URL prefix, without the scheme (arXiv writes http://, some mirrors https://)."""
NONE_STATED = "none"
"""The family of a paper whose metadata states no licence."""


def check_families(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` as families; an unknown one is a :class:`BadInputError` listing the known."""
    known = (*FAMILIES, NONE_STATED)
    for name in names:
        if name.lower() not in known:
            raise BadInputError(
                None, f"unknown licence family {name!r} (known: {', '.join(known)})"
            )
    return tuple(name.lower() for name in names)


def licence_family(url: str | None) -> str:
    """The family of a licence URL (``none`` when absent; the URL itself when unknown)."""
    if not url:
        return NONE_STATED
    bare = _without_scheme(url)
    for name, prefix in FAMILIES.items():
        if bare.startswith(prefix):
            return name
    return url


def licence_allowed(url: str | None, families: Sequence[str]) -> bool:
    """Whether ``url`` is in one of ``families`` (no families: every licence is)."""
    return not families or licence_family(url) in families


def _without_scheme(url: str) -> str:
    bare = url.strip().lower().split("://", 1)[-1]
    return bare.removeprefix("www.")
