"""Four kinds of text for the prefilter, and its drop rates on them, rule by rule.

    python tests/recipes/ares/prefilter_corpora.py [-o DIR] [--split dev|held|all]

Kinds (each with good documents and junk the rules exist to drop):

- ``science``: hard-wrapped scientific prose: paragraphs of the ICLR 2022 texts in
  ``../shared/reviews/iclr2022`` (PDF extractions) re-wrapped at 80 characters, runs of their
  blocks as extracted (headings, captions and equations included, the PDF's own wrapping), and
  the sections of the 12 papers in ``../shared/papers`` through papergym's ingestion, wrapped
  at 80;
- ``markdown``: Markdown files found on the machine (package READMEs and docs under
  /usr/share/doc, pyenv's and Rust's docs, the long descriptions of installed packages), cut at
  their top headings; changelogs and licences are left out (lists, not prose);
- ``web``: web text with one paragraph per line: other such Markdown files rendered as a web
  text extractor renders a page (a heading, a paragraph or a list item a line), and the pages
  of :mod:`prefilter_texts`;
- ``email``: the messages of :mod:`prefilter_texts` with headers, signatures, disclaimers and
  quoted replies, hard-wrapped at 72 characters as mail clients send them, and unwrapped.

Junk of each kind: boilerplate notices, navigation menus, lists of links, tables of numbers,
repeated lines, each written in the kind's shape. Every source is split in two by a hash of its
name: ``dev`` (looked at while the rules were changed) and ``held`` (held back: not looked at
until the change was done).

With ``-o DIR`` the corpora are also written as ``DIR/<kind>.jsonl`` (``id``, ``text`` and the
row's ``kind``, ``split``, ``expect``, ``junk`` and ``source`` as metadata), for
``papergym build DIR/<kind>.jsonl --recipe ares -o OUT``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path

from prefilter_texts import (
    BOILERPLATE,
    DISCLAIMER,
    LINK_TITLES,
    MENU,
    MESSAGES,
    REPEATED,
    TABLE_HEADINGS,
    WEB_PAGES,
    Message,
)

from papergym.recipes.ares.prefilter import RULES, prefilter_reason, rule_of
from papergym.settings.models import AresSection

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
KINDS = ("science", "markdown", "web", "email")
JUNK = ("boilerplate", "menu", "link_list", "number_table", "repeated_lines")
MIN_WORDS = 150  # documents are cut to at least this many words (the default minimum is 120)
MAX_WORDS = 1500
PER_SOURCE = 4  # documents per paper or file, so no one source dominates
MARKDOWN_ROOTS = (
    Path("/usr/share/doc"),
    Path("/root/.pyenv"),
    Path("/root/.rustup/toolchains"),
    Path(sys.prefix) / "lib",
)
NOT_PROSE = ("changelog", "changes", "news", "history", "release", "license", "licence", "authors")


@dataclass(frozen=True)
class Row:
    id: str
    kind: str
    split: str  # dev or held
    expect: str  # keep or drop
    junk: str  # the junk class, "" for a good document
    source: str
    text: str


def split_of(name: str) -> str:
    """dev or held, by a hash of the source's name (about 40% held back)."""
    return "held" if int(hashlib.sha256(name.encode()).hexdigest(), 16) % 5 < 2 else "dev"


def words(text: str) -> int:
    return len(text.split())


def wrap(paragraph: str, width: int, prefix: str = "") -> str:
    return textwrap.fill(
        " ".join(paragraph.split()), width, initial_indent=prefix, subsequent_indent=prefix
    )


def runs(blocks: Iterable[str], low: int = MIN_WORDS, high: int = MAX_WORDS) -> Iterator[str]:
    """Consecutive blocks joined by blank lines into texts of ``low``..``high`` words."""
    group: list[str] = []
    for block in blocks:
        group.append(block)
        count = sum(words(b) for b in group)
        if count >= low:
            if count <= high:
                yield "\n\n".join(group)
            group = []


# --- science: hard-wrapped --------------------------------------------------------------------


def _blocks(text: str) -> list[str]:
    return [b.strip("\n") for b in re.split(r"\n\s*\n", text) if b.strip()]


def _is_prose(block: str) -> bool:
    return words(block) >= 40 and not block.lstrip().startswith(("|", "#", "$"))


def iclr_rows(shared: Path, shapes: Sequence[str] = ("iclr-w80", "iclr-pdf")) -> list[Row]:
    """ICLR paragraphs re-wrapped at 80 (``iclr-w80``: groups of prose paragraphs) and runs of
    blocks as the PDF extraction wrapped them (``iclr-pdf``), up to PER_SOURCE of each a paper."""
    rows: list[Row] = []
    for path in sorted((shared / "reviews" / "iclr2022" / "papers").glob("*.txt")):
        blocks = _blocks(path.read_text(encoding="utf-8"))
        split = split_of(path.stem)
        texts: dict[str, list[str]] = {}
        if "iclr-w80" in shapes:
            prose = [" ".join(b.split()) for b in blocks if _is_prose(b)]
            texts["iclr-w80"] = [
                "\n\n".join(wrap(p, 80) for p in t.split("\n\n"))
                for t in islice(runs(prose), PER_SOURCE)
            ]
        if "iclr-pdf" in shapes:
            texts["iclr-pdf"] = list(islice(runs(blocks[2:], 300), PER_SOURCE))
        for shape, found in texts.items():
            for n, text in enumerate(found):
                rows.append(
                    Row(f"{shape}/{path.stem}#{n}", "science", split, "keep", "", shape, text)
                )
    return rows


def science_rows(shared: Path) -> list[Row]:
    return [*iclr_rows(shared), *_shared_paper_rows(shared / "papers")]


def _shared_paper_rows(papers: Path) -> list[Row]:
    from papergym.ingestion import ingest

    rows: list[Row] = []
    index = papers / "index.json"
    if not index.is_file():
        return rows
    for entry in json.loads(index.read_text(encoding="utf-8")):
        name = str(entry["name"])
        (paper,) = ingest(papers / name)
        sections = [s for s in paper.sections if s.words >= 120]
        for n, section in enumerate(sections[: PER_SOURCE * 2]):
            text = "\n\n".join(wrap(p, 80) for p in _blocks(section.text))
            rows.append(
                Row(
                    f"papers-w80/{name}#{n}",
                    "science",
                    split_of(name),
                    "keep",
                    "",
                    "papers-w80",
                    text,
                )
            )
    return rows


# --- Markdown, and web text made from it ---------------------------------------------------------


def markdown_files() -> list[Path]:
    found: set[Path] = set()
    for root in MARKDOWN_ROOTS:
        if not root.is_dir():
            continue
        for path in root.rglob("*"):
            name = path.name.lower()
            if "/test" in str(path).lower() or any(w in name for w in NOT_PROSE):
                continue
            if name.endswith((".md", ".md.gz")) or (
                name == "metadata" and _markdown_metadata(path)
            ):
                found.add(path)
    return sorted(found)


def _markdown_metadata(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return False
    return "Description-Content-Type: text/markdown" in head


def read_markdown(path: Path) -> str:
    raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    if path.name == "METADATA":  # the long description follows the headers
        text = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    return text


def markdown_sections(text: str) -> list[str]:
    """The text cut before each heading of level 1 or 2 (outside code fences), regrouped into
    documents of MIN_WORDS..MAX_WORDS words."""
    parts: list[list[str]] = [[]]
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and re.match(r"#{1,2} ", line) and parts[-1]:
            parts.append([])
        parts[-1].append(line)
    return list(runs("\n".join(p).strip() for p in parts if "".join(p).strip()))


_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"(\*\*|__|`|<[^>]+>)")


def web_lines(markdown: str) -> str:
    """Markdown as a web text extractor gives a page: a heading, a paragraph, a list item or a
    line of code a line; no markup."""
    out: list[str] = []
    fenced = False
    for block in re.split(r"\n\s*\n", markdown):
        lines = block.splitlines()
        if any(line.lstrip().startswith(("```", "~~~")) for line in lines) or fenced:
            for line in lines:
                if line.lstrip().startswith(("```", "~~~")):
                    fenced = not fenced
                elif line.strip():
                    out.append(line.strip())
            continue
        items: list[str] = []
        for line in lines:
            stripped = line.strip()
            if re.match(r"([-*+]|\d+[.)])\s|#+\s|\|", stripped) or not items:
                items.append(re.sub(r"^([-*+]|\d+[.)]|#+)\s+", "", stripped))
            else:
                items[-1] += " " + stripped
        for item in items:
            text = _MARKS.sub("", _LINK.sub(r"\1", item)).strip(" |")
            if text and not re.fullmatch(r"[-:| ]+", text):
                out.append(" ".join(text.split()))
    return "\n".join(out)


def markdown_and_web_rows() -> list[Row]:
    rows: list[Row] = []
    for path in markdown_files():
        try:
            sections = markdown_sections(read_markdown(path))
        except (OSError, EOFError):
            continue
        name = str(path)
        as_web = int(hashlib.sha256(("web" + name).encode()).hexdigest(), 16) % 2 == 1
        for n, text in enumerate(sections[:PER_SOURCE]):
            if as_web:
                rows.append(
                    Row(
                        f"{name}#{n}",
                        "web",
                        split_of(name),
                        "keep",
                        "",
                        "markdown-as-web",
                        web_lines(text),
                    )
                )
            else:
                rows.append(
                    Row(f"{name}#{n}", "markdown", split_of(name), "keep", "", "markdown", text)
                )
    for n, (title, byline, paragraphs, furniture) in enumerate(WEB_PAGES):
        text = "\n".join([title, byline, *paragraphs, *furniture])
        rows.append(Row(f"web-page#{n}", "web", split_of(title), "keep", "", "web-pages", text))
    return rows


# --- e-mail -------------------------------------------------------------------------------------


def _body(message: Message, width: int | None) -> list[str]:
    lines: list[str] = []
    for paragraph in message.paragraphs:
        for part in paragraph.split("\n"):  # "Best,\nMaria": short lines stay lines
            lines.append(wrap(part, width) if width else part)
        lines.append("")
    if message.signature:
        lines.extend(["-- ", *message.signature, ""])
    return lines


def email_text(
    message: Message, quoted: Message | None, width: int | None, disclaimer: bool
) -> str:
    to = quoted.sender if quoted is not None else "team@example.org"
    lines = [
        f"From: {message.sender}",
        f"To: {to}",
        f"Subject: {message.subject}",
        "Date: Tue, 14 Mar 2023 09:41:07 +0100",
        "",
        *_body(message, width),
    ]
    if disclaimer:
        lines.extend([wrap(DISCLAIMER, width) if width else DISCLAIMER, ""])
    if quoted is not None:
        lines.append(f"On Mon, 13 Mar 2023 at 17:02, {quoted.sender} wrote:")
        for line in _body(quoted, (width - 2) if width else None):
            lines.extend(f"> {part}".rstrip() for part in line.split("\n"))
    return "\n".join(lines).strip() + "\n"


def email_rows() -> list[Row]:
    rows: list[Row] = []
    for n, message in enumerate(MESSAGES):
        quoted = MESSAGES[(n + 1) % len(MESSAGES)]
        split = split_of(message.subject)
        variants = {
            "w72": email_text(message, None, 72, n % 3 == 0),
            "w72-reply": email_text(message, quoted, 72, n % 2 == 0),
            "flowed-reply": email_text(message, quoted, None, n % 2 == 1),
        }
        for variant, text in variants.items():
            rows.append(
                Row(f"email-{variant}#{n}", "email", split, "keep", "", f"email-{variant}", text)
            )
    return rows


# --- junk, in each kind's shape -------------------------------------------------------------------


def _until(make: Callable[[], str], low: int = MIN_WORDS) -> list[str]:
    lines: list[str] = []
    while words("\n".join(lines)) < low:
        lines.append(make())
    return lines


def junk_text(kind: str, junk: str, rng: random.Random) -> str:
    """A junk document of class ``junk`` in the shape of ``kind``."""
    url = lambda title: "https://www.example.org/" + re.sub(r"\W+", "-", title.lower())  # noqa: E731
    if junk == "menu":
        entries = _until(lambda: rng.choice(MENU))
        if kind == "markdown":
            return "\n".join(f"- [{e}]({url(e)})" for e in entries)
        if kind == "email":
            return "\n".join(f"{e} <{url(e)}>" for e in entries)
        if kind == "science":  # a table of contents, as PDFs extract it
            return "\n".join(f"{i + 1} {e} {rng.randint(2, 90)}" for i, e in enumerate(entries))
        return "\n".join(entries)
    if junk == "link_list":
        titles = _until(lambda: rng.choice(LINK_TITLES))
        if kind == "markdown":
            return "## Links\n\n" + "\n".join(f"* [{t}]({url(t)})" for t in titles)
        if kind == "science":
            return "\n".join(f"[{i + 1}] {t}. {url(t)}" for i, t in enumerate(titles))
        return "\n".join(f"{t} {url(t)}" for t in titles)
    if junk == "number_table":
        columns = rng.sample(TABLE_HEADINGS, 5)
        rows = [
            [str(2000 + i)] + [f"{rng.uniform(0, 500):.1f}" for _ in columns[1:]]
            for i in range(rng.randint(35, 45))
        ]
        if kind == "markdown":
            head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)
            return head + "\n" + "\n".join("| " + " | ".join(r) + " |" for r in rows)
        lines = [" ".join(columns), *(" ".join(r) for r in rows)]
        if kind == "email":
            lines = ["Hi,", "", "the figures you asked for:", "", *lines, "", "Cheers,", "Bob"]
        if kind == "science":
            lines = ["Table 3: Results per year.", *lines]
        return "\n".join(lines)
    if junk == "repeated_lines":
        lines = []
        while words("\n".join(lines)) < MIN_WORDS:
            lines.append(f"Wooden desk lamp, model {rng.randint(100, 999)}")
            lines.extend(rng.sample(REPEATED, 3))
        if kind == "markdown":
            return "\n\n".join(lines)
        return "\n".join(lines)
    # boilerplate: a teaser line, then notices
    notices = _until(lambda: rng.choice(BOILERPLATE))
    lines = ["Ten ways to save on your energy bill this winter.", *notices]
    if kind in ("science", "email"):
        return "\n\n".join(
            wrap(" ".join(lines[i : i + 3]), 80 if kind == "science" else 72)
            for i in range(0, len(lines), 3)
        )
    if kind == "markdown":
        return "\n\n".join(f"_{line}_" for line in lines)
    return "\n".join(lines)


def junk_rows(per_class: int = 6) -> list[Row]:
    rows = []
    for kind in KINDS:
        for junk in JUNK:
            for n in range(per_class):
                rng = random.Random(f"{kind}/{junk}/{n}")
                text = junk_text(kind, junk, rng)
                split = "held" if n % 3 == 2 else "dev"
                rows.append(Row(f"junk-{kind}-{junk}#{n}", kind, split, "drop", junk, "junk", text))
    return rows


def all_rows(shared: Path = SHARED) -> list[Row]:
    return [*science_rows(shared), *markdown_and_web_rows(), *email_rows(), *junk_rows()]


# --- the measurement ----------------------------------------------------------------------------


def verdicts(rows: Sequence[Row], limits: AresSection) -> dict[str, dict[str, bool]]:
    """Per row id: each rule's verdict on its own (True: the rule drops it), and ``prefilter``
    (the whole prefilter, first failing rule)."""
    out: dict[str, dict[str, bool]] = {}
    for row in rows:
        verdict = {rule.__name__: rule(row.text, limits) is not None for rule in RULES}
        verdict["prefilter"] = prefilter_reason(row.text, limits) is not None
        out[row.id] = verdict
    return out


def table(rows: Sequence[Row], limits: AresSection) -> str:
    """Per kind: documents, then the share each rule drops on its own, then the prefilter's."""
    judged = verdicts(rows, limits)
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        groups[(row.kind, row.junk or "good")].append(row)
    names = [rule.__name__ for rule in RULES] + ["prefilter"]
    lines = ["| kind | documents | n | " + " | ".join(names) + " |"]
    lines.append("|---" * (len(names) + 3) + "|")
    for kind in KINDS:
        for label in ("good", *JUNK):
            group = groups.get((kind, label), [])
            if not group:
                continue
            cells = []
            for name in names:
                dropped = sum(judged[r.id][name] for r in group)
                cells.append(f"{dropped / len(group):.2f}" if dropped else "·")
            lines.append(f"| {kind} | {label} | {len(group)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def reasons(rows: Sequence[Row], limits: AresSection) -> Counter[tuple[str, str, str]]:
    """(kind, source, first failing rule) of every good document the prefilter drops."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for row in rows:
        if row.expect == "keep":
            reason = prefilter_reason(row.text, limits)
            if reason is not None:
                counts[(row.kind, row.source, rule_of(reason))] += 1
    return counts


def write_corpora(rows: Sequence[Row], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for kind in KINDS:
        with (folder / f"{kind}.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                if row.kind == kind:
                    record = asdict(row)
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--out", type=Path, help="write the corpora as DIR/<kind>.jsonl")
    parser.add_argument("--split", choices=("dev", "held", "all"), default="all")
    parser.add_argument("--shared", type=Path, default=SHARED)
    args = parser.parse_args(argv)
    rows = [r for r in all_rows(args.shared) if args.split in ("all", r.split)]
    if args.out is not None:
        write_corpora(rows, args.out)
    limits = AresSection()
    print(f"split: {args.split}; {len(rows)} documents\n")
    print(table(rows, limits))
    print("\ngood documents the prefilter drops, by kind, source and first failing rule:")
    for (kind, source, rule), count in sorted(reasons(rows, limits).items()):
        total = sum(1 for r in rows if r.kind == kind and r.source == source)
        print(f"  {kind:9} {source:18} {rule:22} {count:4} of {total}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main()
