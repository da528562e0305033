"""arXiv's two metadata protocols, as URLs to ask and records read from their XML answers.

- The API (Atom 1.0, ``/api/query``): listings by ``search_query`` (``cat:cs.LG AND
  submittedDate:[...]``) and metadata by ``id_list``. Each ``<entry>`` carries the versioned id,
  ``<published>`` (v1) and ``<updated>`` (this version), ``<category term>``,
  ``<arxiv:primary_category term>`` and ``<arxiv:comment>``, but no licence.
- OAI-PMH (``/oai2``, ``metadataPrefix=arXiv``): ``GetRecord`` answers a ``<license>`` element,
  the licence URL as arXiv states it (absent: arXiv's default, non-exclusive distribution).
"""

from __future__ import annotations

import calendar
import re
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from papergym.errors import BadInputError
from papergym.fetch.ids import ArxivId, parse_id

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
OAI = "{http://www.openarchives.org/OAI/2.0/}"
OAI_ARXIV = "{http://arxiv.org/OAI/arXiv/}"
_WITHDRAWN_COMMENT = re.compile(r"\bwithdrawn\b", re.I)
_WITHDRAWN_ABSTRACT = re.compile(
    r"\b(?:paper|article|submission|manuscript) (?:has been|is|was) withdrawn\b"
    r"|\bwithdrawn by (?:the )?authors?\b",
    re.I,
)
"""An abstract may speak of withdrawn drugs or funds: only arXiv's withdrawal phrasing counts."""


@dataclass(frozen=True)
class Entry:
    """One paper as the API describes it."""

    id: ArxivId
    title: str
    categories: tuple[str, ...]
    primary_category: str | None
    submitted: str | None
    updated: str | None
    comment: str
    summary: str

    @property
    def withdrawn(self) -> bool:
        """Whether arXiv's comment (or, for old withdrawals, the abstract) says it was withdrawn."""
        return bool(
            _WITHDRAWN_COMMENT.search(self.comment) or _WITHDRAWN_ABSTRACT.search(self.summary)
        )


@dataclass(frozen=True)
class Page:
    """A page of API entries and how many the query matches in all."""

    entries: tuple[Entry, ...]
    total: int


def listing_query(category: str, start: str, until: str) -> str:
    """The ``search_query`` of papers of ``category`` first submitted in the months
    ``start``..``until`` (``YYYY-MM``), both included."""
    return f"cat:{category} AND submittedDate:[{_stamp(start)}010000 TO {_month_end(until)}2359]"


def query_url(base_url: str, query: str, start: int, size: int) -> str:
    """The API URL of a page of a listing, oldest first (a stable order while paging)."""
    params = {
        "search_query": query,
        "start": start,
        "max_results": size,
        "sortBy": "submittedDate",
        "sortOrder": "ascending",
    }
    return f"{base_url.rstrip('/')}/api/query?{urllib.parse.urlencode(params)}"


def id_list_url(base_url: str, ids: list[ArxivId]) -> str:
    """The API URL of the metadata of ``ids``."""
    params = {"id_list": ",".join(i.text for i in ids), "max_results": len(ids)}
    return f"{base_url.rstrip('/')}/api/query?{urllib.parse.urlencode(params)}"


def record_url(base_url: str, arxiv_id: ArxivId) -> str:
    """The OAI-PMH URL of one paper's record in arXiv's own metadata format."""
    params = {
        "verb": "GetRecord",
        "identifier": f"oai:arXiv.org:{arxiv_id.base}",
        "metadataPrefix": "arXiv",
    }
    return f"{base_url.rstrip('/')}/oai2?{urllib.parse.urlencode(params)}"


def eprint_url(base_url: str, arxiv_id: ArxivId) -> str:
    """Where the e-print source of ``arxiv_id`` (this version, or the latest) is served."""
    return f"{base_url.rstrip('/')}/e-print/{arxiv_id.text}"


def parse_atom(xml: str, url: str) -> Page:
    """The entries of an API answer; an answer that is not a feed, or arXiv's error entry,
    is a :class:`BadInputError` naming ``url``."""
    root = _xml(xml, url)
    if root.tag != f"{ATOM}feed":
        raise BadInputError(url, f"not an Atom feed (root element {root.tag!r})")
    entries: list[Entry] = []
    for node in root.iter(f"{ATOM}entry"):
        raw_id = _text(node, f"{ATOM}id")
        if "/api/errors" in raw_id:
            raise BadInputError(
                url, f"the arXiv API refused the query: {_text(node, f'{ATOM}summary')}"
            )
        if _text(node, f"{ATOM}title"):  # an id arXiv does not know answers an empty entry
            entries.append(_entry(node, raw_id))
    total = _text(root, f"{OPENSEARCH}totalResults")
    return Page(tuple(entries), int(total) if total.isdigit() else len(entries))


def _entry(node: ET.Element, raw_id: str) -> Entry:
    primary = node.find(f"{ARXIV}primary_category")
    return Entry(
        id=parse_id(raw_id.rsplit("/abs/", 1)[-1]),
        title=" ".join(_text(node, f"{ATOM}title").split()),
        categories=tuple(
            c.get("term", "") for c in node.findall(f"{ATOM}category") if c.get("term")
        ),
        primary_category=primary.get("term") if primary is not None else None,
        submitted=_date(_text(node, f"{ATOM}published")),
        updated=_date(_text(node, f"{ATOM}updated")),
        comment=" ".join(_text(node, f"{ARXIV}comment").split()),
        summary=" ".join(_text(node, f"{ATOM}summary").split()),
    )


def parse_licence(xml: str, url: str) -> str | None:
    """The ``<license>`` of an OAI-PMH ``GetRecord`` answer in arXiv format (None: none stated).
    An OAI error (``idDoesNotExist``…) is a :class:`BadInputError` naming ``url``."""
    root = _xml(xml, url)
    error = root.find(f"{OAI}error")
    if error is not None:
        raise BadInputError(url, f"OAI-PMH error {error.get('code')}: {(error.text or '').strip()}")
    record = root.find(f"{OAI}GetRecord/{OAI}record")
    if record is None:
        raise BadInputError(url, "no record in the OAI-PMH answer")
    licence = record.find(f"{OAI}metadata/{OAI_ARXIV}arXiv/{OAI_ARXIV}license")
    return licence.text.strip() if licence is not None and licence.text else None


def _xml(text: str, url: str) -> ET.Element:
    try:
        return ET.fromstring(text)
    except ET.ParseError as error:
        head = " ".join(text[:80].split())
        raise BadInputError(url, f"not XML ({error}); the answer began: {head!r}") from None


def _text(node: ET.Element, tag: str) -> str:
    found = node.find(tag)
    return (found.text or "").strip() if found is not None else ""


def _date(stamp: str) -> str | None:
    """``2024-01-02T10:00:00Z`` → ``2024-01-02``."""
    return stamp[:10] if re.match(r"\d{4}-\d{2}-\d{2}", stamp) else None


def _stamp(month: str) -> str:
    """``2024-01`` → ``202401``; anything else is a :class:`BadInputError`."""
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise BadInputError(None, f"{month!r} is not a month (expected YYYY-MM, e.g. 2024-01)")
    return month.replace("-", "")


def _month_end(month: str) -> str:
    """``2024-02`` → ``20240229``: the last day of the month."""
    stamp = _stamp(month)
    year, number = int(stamp[:4]), int(stamp[4:])
    return f"{stamp}{calendar.monthrange(year, number)[1]:02d}"
