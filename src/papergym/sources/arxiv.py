"""arXiv identifiers and dates, read from the names users give their source files and folders.

``2301.01234v2.tar.gz`` → ``2301.01234v2``, dated 2023-01; old-style ``hep-th_0101001`` →
``hep-th/0101001``, dated 2001-01. Only names are read: an id quoted inside a paper is usually
a citation of another paper.
"""

from __future__ import annotations

import re

_NEW_STYLE = re.compile(r"(?<![\d.])(\d{2})(0[1-9]|1[0-2])\.(\d{4,5})(v\d+)?(?![\d])")
_OLD_STYLE = re.compile(
    r"(?<![A-Za-z])([a-z]+(?:-[a-z]+)?(?:\.[A-Z]{2})?)[/_]?(\d{2})(0[1-9]|1[0-2])(\d{3})(v\d+)?(?!\d)"
)
_OLD_ARCHIVES = frozenset(
    {
        "astro-ph",
        "cond-mat",
        "gr-qc",
        "hep-ex",
        "hep-lat",
        "hep-ph",
        "hep-th",
        "math-ph",
        "nlin",
        "nucl-ex",
        "nucl-th",
        "physics",
        "quant-ph",
        "math",
        "cs",
        "q-bio",
        "q-fin",
        "stat",
        "econ",
        "eess",
        "chao-dyn",
        "solv-int",
        "patt-sol",
        "adap-org",
        "comp-gas",
        "chem-ph",
        "alg-geom",
        "dg-ga",
        "funct-an",
        "q-alg",
        "acc-phys",
        "ao-sci",
        "atom-ph",
        "bayes-an",
        "plasm-ph",
        "supr-con",
        "mtrl-th",
        "cmp-lg",
    }
)


def arxiv_id_from_name(name: str) -> str | None:
    """The arXiv id a file or folder name carries, if any."""
    match = _NEW_STYLE.search(name)
    if match:
        return f"{match.group(1)}{match.group(2)}.{match.group(3)}{match.group(4) or ''}"
    for old in _OLD_STYLE.finditer(name):
        archive = old.group(1)
        if archive.split(".")[0] in _OLD_ARCHIVES:
            return f"{archive}/{old.group(2)}{old.group(3)}{old.group(4)}{old.group(5) or ''}"
    return None


def arxiv_date(arxiv_id: str) -> str | None:
    """The year and month (``YYYY-MM``) an arXiv id was assigned."""
    match = re.search(r"(\d{2})(\d{2})(?:\.\d{4,5}|\d{3})(v\d+)?$", arxiv_id)
    if match is None:
        return None
    year, month = int(match.group(1)), int(match.group(2))
    century = 1900 if "/" in arxiv_id and year >= 91 else 2000
    return f"{century + year:04d}-{month:02d}"
