"""A loopback server that speaks arXiv's protocols from recorded responses (arxiv_responses/*.xml,
written from the public documentation of the API's Atom feed and OAI-PMH's arXiv format):
``/api/query`` (id_list and search_query), ``/oai2?verb=GetRecord`` and ``/e-print/<id>``.

Each paper's e-print is bytes the test makes; ``faults`` queues answers served before the real
one (a status with a Retry-After, or a body cut short), so retries and failures can be staged.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from string import Template
from xml.sax.saxutils import escape

RESPONSES = Path(__file__).parent / "arxiv_responses"
PAPER_TEX = (
    b"\\documentclass{article}\\title{A Study of Things}\\begin{document}\\maketitle"
    b"\\begin{abstract}We study things.\\end{abstract}\\section{Introduction}Things matter."
    b"\\section{Method}We measure things carefully.\\end{document}\n"
)


def template(name: str) -> Template:
    return Template((RESPONSES / name).read_text(encoding="utf-8"))


def tarball(files: dict[str, bytes], top: str = "") -> bytes:
    """A gzipped tarball of ``files`` (inside a ``top`` folder when given)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@dataclass
class Paper:
    """One paper the server knows: metadata as arXiv would state it, and its e-print."""

    id: str
    version: int = 1
    title: str = "A Study of Things"
    categories: tuple[str, ...] = ("cs.LG", "stat.ML")
    licence: str | None = "http://creativecommons.org/licenses/by/4.0/"
    comment: str = "12 pages"
    summary: str = "We study things."
    published: str = "2024-01-02"
    updated: str = "2024-02-01"
    eprint: bytes = field(default_factory=lambda: gzip.compress(PAPER_TEX))

    def entry(self) -> str:
        cats = "\n".join(
            f'    <category term="{c}" scheme="http://arxiv.org/schemas/atom"/>'
            for c in self.categories
        )
        return template("atom_entry.xml").substitute(
            versioned=f"{self.id}v{self.version}",
            updated=f"{self.updated}T10:00:00Z",
            published=f"{self.published}T09:00:00Z",
            title=escape(self.title),
            summary=escape(self.summary),
            comment=escape(self.comment),
            primary=self.categories[0],
            categories=cats,
        )

    def record(self) -> str:
        licence = f"<license>{self.licence}</license>" if self.licence else ""
        return template("oai_record.xml").substitute(
            id=self.id,
            published=self.published,
            title=escape(self.title),
            categories=" ".join(self.categories),
            comment=escape(self.comment),
            license=licence,
            summary=escape(self.summary),
        )


@dataclass
class Fault:
    """An answer served instead of the real one: a status (with Retry-After), or the real body
    cut after ``cut`` bytes while announcing its full length."""

    status: int = 200
    retry_after: str | None = None
    cut: int | None = None


class ArxivServer:
    """The state a test sets up and reads back: papers, queued faults, requests seen."""

    def __init__(self, papers: list[Paper]) -> None:
        self.papers = {p.id: p for p in papers}
        self.faults: dict[str, list[Fault]] = {}
        self.requests: list[tuple[str, str]] = []  # (path with query, User-Agent)
        self.listing: list[str] = []  # ids a search_query answers, in order
        self.html_eprints: set[str] = set()
        self._server = HTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        state = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                state.requests.append((self.path, self.headers.get("User-Agent", "")))
                state.answer(self)

        return Handler

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        url = urllib.parse.urlsplit(handler.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/api/query":
            self._send(handler, 200, self._feed(query, url.query).encode(), "application/atom+xml")
        elif url.path == "/oai2":
            self._send(handler, 200, self._record(query).encode(), "text/xml")
        elif url.path.startswith("/e-print/"):
            self._eprint(handler, url.path.removeprefix("/e-print/"))
        else:
            self._send(handler, 404, b"not found", "text/plain")

    def _feed(self, query: dict[str, str], raw: str) -> str:
        if "id_list" in query:
            wanted = [i.rsplit("v", 1)[0] if "." in i else i for i in query["id_list"].split(",")]
            found = [self.papers[i] for i in wanted if i in self.papers]
            total, start = len(found), 0
        else:
            start, size = int(query.get("start", 0)), int(query.get("max_results", 10))
            total = len(self.listing)
            found = [self.papers[i] for i in self.listing[start : start + size]]
        return template("atom_feed.xml").substitute(
            query=escape(raw),
            total=total,
            start=start,
            per_page=len(found),
            entries="\n".join(p.entry() for p in found),
        )

    def _record(self, query: dict[str, str]) -> str:
        paper_id = query.get("identifier", "").removeprefix("oai:arXiv.org:")
        if paper_id in self.papers:
            return self.papers[paper_id].record()
        return template("oai_error.xml").substitute(id=escape(paper_id))

    def _eprint(self, handler: BaseHTTPRequestHandler, versioned: str) -> None:
        paper_id = versioned.rsplit("v", 1)[0]
        queued = self.faults.get(paper_id) or []
        fault = queued.pop(0) if queued else None
        if paper_id in self.html_eprints:
            page = b"<!DOCTYPE html><html><body>Service temporarily unavailable</body></html>"
            self._send(handler, 200, page, "text/html")
        elif fault is not None and fault.status != 200:
            extra = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            self._send(handler, fault.status, b"busy", "text/plain", extra)
        elif paper_id not in self.papers:
            self._send(handler, 404, b"not found", "text/plain")
        elif fault is not None and fault.cut is not None:
            body = self.papers[paper_id].eprint
            self._send(
                handler, 200, body[: fault.cut], "application/x-eprint-tar", length=len(body)
            )
        else:
            self._send(handler, 200, self.papers[paper_id].eprint, "application/x-eprint-tar")

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        status: int,
        body: bytes,
        kind: str,
        headers: dict[str, str] | None = None,
        length: int | None = None,
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", kind)
        handler.send_header("Content-Length", str(length if length is not None else len(body)))
        handler.send_header("Connection", "close")
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(body)

    def paths(self, prefix: str) -> list[str]:
        """The request paths seen that start with ``prefix``."""
        return [path for path, _ in self.requests if path.startswith(prefix)]

    def __enter__(self) -> ArxivServer:
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def serving(papers: list[Paper]) -> Iterator[ArxivServer]:
    """A running server for a fixture."""
    with ArxivServer(papers) as server:
        yield server
