"""``papergym fetch`` as a function: :func:`fetch_papers`.

Ids (or a listing) → metadata from the API → licence from OAI-PMH → the e-print, unpacked into
a hidden work folder under PAPERS/, with ``metadata.json`` written last; only then is the folder
renamed to ``PAPERS/<id>/``. A finished id is skipped before any request is made; whatever an
interrupted run leaves is a ``.partial-*`` folder, removed by the next run and never read by
ingestion (it skips hidden names).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from papergym.errors import BadInputError
from papergym.fetch.eprint import NotASource, unpack
from papergym.fetch.feeds import (
    Entry,
    eprint_url,
    id_list_url,
    listing_query,
    parse_atom,
    parse_licence,
    query_url,
    record_url,
)
from papergym.fetch.http import DiskError, FetchError, PoliteClient
from papergym.fetch.ids import ArxivId, parse_id
from papergym.fetch.licences import licence_allowed, licence_family
from papergym.fetch.settings import FetchSection
from papergym.jsonl import write_text_atomic
from papergym.sources.archive import DEFAULT_LIMITS, ArchiveLimits
from papergym.sources.fetched import METADATA_FILE, FetchedMetadata

Status = Literal["fetched", "skipped", "filtered", "withdrawn", "pdf_only", "failed"]
STATUSES: tuple[Status, ...] = ("fetched", "skipped", "filtered", "withdrawn", "pdf_only", "failed")
PARTIAL_PREFIX = ".partial-"


@dataclass(frozen=True)
class Listing:
    """Papers of ``category`` first submitted in the months ``start``..``until`` (YYYY-MM)."""

    category: str
    start: str
    until: str
    limit: int | None = None

    def __post_init__(self) -> None:
        listing_query(self.category, self.start, self.until)  # bad months refused up front

    @property
    def query(self) -> str:
        """The API's ``search_query`` for it."""
        return listing_query(self.category, self.start, self.until)


@dataclass(frozen=True)
class Outcome:
    """What became of one id: its status, why (for all but fetched and skipped), bytes loaded."""

    id: str
    status: Status
    reason: str = ""
    bytes: int = 0
    bad_input: bool = False
    """The id itself was wrong (malformed): the user's mistake, not arXiv's or the network's."""


@dataclass
class FetchReport:
    """Every id's outcome in order, the requests made, and why the run stopped early (if it did)."""

    outcomes: list[Outcome] = field(default_factory=list)
    requests: int = 0
    aborted: str | None = None

    def count(self, status: Status) -> int:
        """How many ids ended with ``status``."""
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def bytes(self) -> int:
        """Bytes downloaded (e-prints only)."""
        return sum(o.bytes for o in self.outcomes)


@dataclass(frozen=True)
class FetchOptions:
    """How a run treats what it finds: licence families kept, unpacking limits, progress hooks."""

    licences: tuple[str, ...] = ()
    limits: ArchiveLimits = DEFAULT_LIMITS
    on_total: Callable[[int], None] | None = None
    on_outcome: Callable[[Outcome], None] | None = None


class _Aborted(Exception):
    """The run cannot go on (a write failed): stop, keeping what is finished."""


def fetch_papers(
    wanted: Sequence[str] | Listing,
    out: Path,
    section: FetchSection,
    options: FetchOptions = FetchOptions(),
    client: PoliteClient | None = None,
) -> FetchReport:
    """Fetch the ids of ``wanted`` (or the papers of a listing) into ``out``.

    Bad ids, papers arXiv does not know, withdrawn and PDF-only papers are outcomes, and the
    rest go on. A listing that matches nothing is a :class:`BadInputError` showing the query;
    a write that fails (a full disk) stops the run with ``aborted`` set.
    """
    client = client or PoliteClient(section)
    report = FetchReport()
    out.mkdir(parents=True, exist_ok=True)
    _remove_partials(out)
    try:
        _fetch_all(wanted, out, section, options, client, report)
    except _Aborted as error:
        report.aborted = str(error)
    report.requests = client.requests
    return report


def _fetch_all(
    wanted: Sequence[str] | Listing,
    out: Path,
    section: FetchSection,
    options: FetchOptions,
    client: PoliteClient,
    report: FetchReport,
) -> None:
    def record(outcome: Outcome) -> None:
        report.outcomes.append(outcome)
        if options.on_outcome:
            options.on_outcome(outcome)

    if isinstance(wanted, Listing):
        entries: list[Entry | Outcome] = list(_list(wanted, section, client))
    else:
        entries = _entries_for_ids(wanted, out, section, client)
    if options.on_total:
        options.on_total(len(entries))
    for item in entries:
        if isinstance(item, Outcome):
            record(item)
        elif _is_complete(out, item.id):
            record(Outcome(item.id.text, "skipped", "already fetched"))
        else:
            record(_fetch_one(item, out, section, options, client))


def _entries_for_ids(
    texts: Sequence[str], out: Path, section: FetchSection, client: PoliteClient
) -> list[Entry | Outcome]:
    """Each id's API entry, in the order given; bad ids, unknown ids and those already
    fetched (asked nothing) as outcomes."""
    parsed: list[ArxivId | Outcome] = []
    for text in dict.fromkeys(t.strip() for t in texts if t.strip()):
        try:
            arxiv_id = parse_id(text)
        except BadInputError as error:
            parsed.append(Outcome(text, "failed", error.reason, bad_input=True))
            continue
        done = _is_complete(out, arxiv_id)
        parsed.append(Outcome(arxiv_id.text, "skipped", "already fetched") if done else arxiv_id)
    asked = [p for p in parsed if isinstance(p, ArxivId)]
    known = _metadata(asked, section, client)
    result: list[Entry | Outcome] = []
    for item in parsed:
        if isinstance(item, Outcome):
            result.append(item)
        else:
            found = known[item.base]
            result.append(
                found if isinstance(found, Entry) else Outcome(item.text, "failed", found)
            )
    return result


def _metadata(
    ids: list[ArxivId], section: FetchSection, client: PoliteClient
) -> dict[str, Entry | str]:
    """The API entries of ``ids`` by base id, a page at a time; an id the API did not describe
    maps to the reason."""
    found: dict[str, Entry | str] = {}
    for start in range(0, len(ids), section.page_size):
        batch = ids[start : start + section.page_size]
        url = id_list_url(section.base_url, batch)
        try:
            page = parse_atom(client.get_text(url), url)
        except (FetchError, BadInputError) as error:
            found.update({i.base: f"metadata: {_reason(error)}" for i in batch})
            continue
        found.update({entry.id.base: entry for entry in page.entries})
        for arxiv_id in batch:
            found.setdefault(arxiv_id.base, "not found by the arXiv API")
    return found


def _list(listing: Listing, section: FetchSection, client: PoliteClient) -> list[Entry]:
    """The entries of a listing, page by page, up to its limit."""
    entries: list[Entry] = []
    wanted = listing.limit
    while wanted is None or len(entries) < wanted:
        size = (
            section.page_size if wanted is None else min(section.page_size, wanted - len(entries))
        )
        url = query_url(section.base_url, listing.query, len(entries), size)
        try:
            page = parse_atom(client.get_text(url), url)
        except FetchError as error:
            raise BadInputError(None, f"listing {listing.query!r}: {error.reason}") from None
        entries.extend(page.entries)
        if not page.entries or len(entries) >= page.total:
            break
    if not entries:
        raise BadInputError(None, f"no papers match the query {listing.query!r}")
    return entries[:wanted] if wanted is not None else entries


def _fetch_one(
    entry: Entry, out: Path, section: FetchSection, options: FetchOptions, client: PoliteClient
) -> Outcome:
    name = entry.id.text
    if entry.withdrawn:
        return Outcome(name, "withdrawn", f"withdrawn: {entry.comment or entry.summary[:120]}")
    url = record_url(section.base_url, entry.id)
    try:
        licence = parse_licence(client.get_text(url), url)
    except (FetchError, BadInputError) as error:
        return Outcome(name, "failed", f"licence record: {_reason(error)}")
    if not licence_allowed(licence, options.licences):
        return Outcome(name, "filtered", f"licence {licence_family(licence)} not asked for")
    work = Path(tempfile.mkdtemp(prefix=f"{PARTIAL_PREFIX}{entry.id.folder}-", dir=out))
    try:
        return _download(entry, licence, work, out, section, options, client)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _download(
    entry: Entry,
    licence: str | None,
    work: Path,
    out: Path,
    section: FetchSection,
    options: FetchOptions,
    client: PoliteClient,
) -> Outcome:
    """The e-print into ``work``, unpacked, with its metadata; then renamed into place."""
    name = entry.id.text
    download, unpacked = work / "eprint", work / "paper"
    try:
        size = client.download(eprint_url(section.base_url, entry.id), download).size
        unpacked.mkdir()
        root = unpack(download, unpacked, options.limits)
        write_text_atomic(
            root / METADATA_FILE, _metadata_record(entry, licence).model_dump_json(indent=2)
        )
        root.rename(out / entry.id.folder)
    except NotASource as error:
        return Outcome(name, error.status, error.reason)
    except FetchError as error:
        return Outcome(name, "failed", error.reason)
    except (DiskError, OSError) as error:
        raise _Aborted(f"{name}: {error}") from error
    return Outcome(name, "fetched", bytes=size)


def _metadata_record(entry: Entry, licence: str | None) -> FetchedMetadata:
    return FetchedMetadata(
        id=entry.id.base,
        version=entry.id.version,
        title=entry.title,
        categories=entry.categories,
        primary_category=entry.primary_category,
        submitted=entry.submitted,
        updated=entry.updated,
        licence=licence,
    )


def _is_complete(out: Path, arxiv_id: ArxivId) -> bool:
    """A paper is finished once its folder is in place: the rename is the last step, and
    ``metadata.json`` is written before it."""
    return (out / arxiv_id.folder / METADATA_FILE).is_file()


def _remove_partials(out: Path) -> None:
    """Work folders an interrupted run left behind (never a finished paper's folder)."""
    for leftover in out.glob(f"{PARTIAL_PREFIX}*"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)


def _reason(error: FetchError | BadInputError) -> str:
    return error.reason
