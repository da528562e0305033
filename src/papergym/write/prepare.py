"""``papergym write prepare``: training data for the writer from real papers (in the spirit of
Research-14k). Each paper's own bibliography is the input; its outline and sections are the
target (see :mod:`papergym.write.data` for the layout and the leakage rule).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from papergym.errors import BadInputError
from papergym.records import Section, content_hash
from papergym.settings.models import WriteSection
from papergym.sources.archive import extract_archive
from papergym.sources.bib import Reference, references_of
from papergym.sources.discover import PaperSource
from papergym.sources.latex import LatexDocument, read_latex_paper
from papergym.text import split_sentences
from papergym.write.data import PrepareDrop, Split, WriteExample, WritePrompt
from papergym.write.marking import cited, keep_known_cites
from papergym.write.paper_text import kind_of_heading, render_paper
from papergym.write.prompting import bibliography_block, fill, topic_line
from papergym.write.records import Outline, OutlineSection

_WORD = re.compile(r"\w+")
_CAPTIONS = ("Figure:", "Table:", "Algorithm:", "Listing:")


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """Every run of ``n`` words of ``text`` (lower case, punctuation ignored)."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def shared_ngrams(prompt: str, own: set[tuple[str, ...]], n: int) -> list[str]:
    """The n-grams of ``prompt`` that are also in the paper's own text ``own``."""
    return [" ".join(g) for g in sorted(ngrams(prompt, n) & own)]


def _same_title(a: str, b: str) -> bool:
    def norm(text: str) -> str:
        return " ".join(_WORD.findall(text.lower()))

    return bool(norm(a)) and norm(a) == norm(b)


@dataclass(frozen=True)
class Prepared:
    """One paper's rows, or why it was dropped; and how many references the leakage check
    kept out of its prompt."""

    example: WriteExample | None = None
    prompt: WritePrompt | None = None
    drop: PrepareDrop | None = None
    left_out: int = 0


@contextmanager
def _paper_root(source: PaperSource) -> Iterator[tuple[Path, Path | None]]:
    """(root, main file) of a paper source; an archive is extracted into a temporary folder."""
    if source.kind == "tex":
        yield source.path.parent, source.path
    elif source.kind == "folder":
        yield source.path, None
    else:
        with tempfile.TemporaryDirectory(prefix="papergym-") as tmp:
            root = extract_archive(source.path, Path(tmp))
            entries = [p for p in root.iterdir() if not p.name.startswith((".", "__MACOSX"))]
            while len(entries) == 1 and entries[0].is_dir():
                root = entries[0]
                entries = [p for p in root.iterdir() if not p.name.startswith(".")]
            yield root, None


def _body_sections(sections: Sequence[Section]) -> list[tuple[str, str]]:
    """Top-level, non-appendix sections, each with its subsections as ``\\subsection{}``."""
    kept = [s for s in sections if not s.appendix and s.heading]
    if not kept:
        return []
    top = min(s.level for s in kept)
    body: list[tuple[str, list[str]]] = []
    for section in kept:
        if section.level == top:
            body.append((section.heading, [section.text]))
        elif body:
            command = "subsection" if section.level == top + 1 else "subsubsection"
            body[-1][1].append(f"\\{command}{{{section.heading}}}\n{section.text}")
    return [(h, "\n\n".join(p for p in parts if p.strip())) for h, parts in body]


def _purpose(text: str, words: int = 40) -> str:
    """A section's first sentence (citations out), as the outline's purpose."""
    plain = re.sub(r"\s*\\cite\{[^}]*\}", "", text)
    plain = re.sub(r"\\(?:sub)*section\{[^}]*\}", "\n\n", plain)
    paragraphs = [p for p in plain.split("\n\n") if not p.lstrip().startswith(_CAPTIONS)]
    for sentence in split_sentences("\n\n".join(paragraphs)):
        if len(sentence.split()) >= 5:
            cut = sentence.split()
            return " ".join(cut[:words]) + (" ..." if len(cut) > words else "")
    return "(no prose)"


def _split(paper_id: str, test_fraction: float) -> Split:
    return "test" if int(paper_id[:8], 16) / 0xFFFFFFFF < test_fraction else "train"


def _prompt_references(
    doc: LatexDocument, references: Sequence[Reference], own: set[tuple[str, ...]], n: int
) -> tuple[list[Reference], int]:
    """The references a prompt may show, and how many were cut: the paper's own entry is left
    out; an abstract sharing an n-gram with the paper is dropped, and the reference too if its
    title or details still share one."""
    kept: list[Reference] = []
    cut = 0
    for reference in references:
        if _same_title(reference.title, doc.title):
            cut += 1
            continue
        abstract_leaks = bool(reference.abstract and ngrams(reference.abstract, n) & own)
        details = " ".join([reference.key, reference.title, *reference.authors])
        details += f" {reference.year or ''} {reference.venue or ''}"
        if ngrams(details, n) & own:
            cut += 1
            continue
        if abstract_leaks:
            cut += 1
            reference = reference.model_copy(update={"abstract": None})
        kept.append(reference)
    return kept, cut


def _target(
    doc: LatexDocument, body: list[tuple[str, str]], known: set[str]
) -> tuple[Outline, str]:
    """The paper as the writer would write it: its outline (headings, kinds guessed from them,
    first sentences as purposes, the keys each section cites) and its text, citing only
    ``known`` keys (a key the prompt does not offer cannot be the model's to cite)."""
    sections: list[tuple[str, str]] = []
    outline_sections: list[OutlineSection] = []
    for heading, text in body:
        text, _ = keep_known_cites(text, known)
        sections.append((heading, text))
        outline_sections.append(
            OutlineSection(
                heading=heading,
                kind=kind_of_heading(heading),
                purpose=_purpose(text),
                references=tuple(cited(text)),
            )
        )
    abstract, _ = keep_known_cites(doc.abstract, known)
    outline = Outline(
        title=doc.title or "(untitled)",
        abstract_plan=_purpose(abstract),
        sections=tuple(outline_sections),
    )
    return outline, render_paper(outline, abstract, sections)


def _drop(source: str, reason: str, left_out: int = 0) -> Prepared:
    return Prepared(drop=PrepareDrop(source=source, reason=reason), left_out=left_out)


def prepare_paper(source: PaperSource, settings: WriteSection) -> Prepared:
    """One paper's SFT row and prompt row, or the reason it is dropped."""
    name = str(source.path)
    source.check_inside()
    with _paper_root(source) as (root, main):
        doc = read_latex_paper(root, main, cite_keys=True)
        refs = references_of(root, main)
    body = _body_sections(doc.sections)
    if len(body) < 2:
        return _drop(name, f"{len(body)} body section(s); at least 2 are needed")
    n = settings.leakage_ngram
    own_text = "\n".join([doc.title, doc.abstract, *(text for _, text in body)])
    own = ngrams(re.sub(r"\\cite\{[^}]*\}", " ", own_text), n)  # keys are not the paper's text
    offered, left_out = _prompt_references(doc, refs.references, own, n)
    offered = offered[: settings.max_references]
    if len(offered) < settings.min_paper_references:
        why = "; ".join(refs.warnings) or f"{len(refs.references)} cited reference(s) found"
        minimum = settings.min_paper_references
        reason = f"{len(offered)} usable reference(s), fewer than write.min_paper_references"
        return _drop(name, f"{reason}={minimum} ({why})", left_out)
    keys = tuple(r.key for r in offered)
    system = fill("policy_system")
    user = fill(
        "policy_user",
        topic=topic_line(None),
        bibliography=bibliography_block(offered, settings.reference_abstract_words),
    )
    leaked = shared_ngrams(user, own, n)
    if leaked:  # the references were screened one by one; this checks the prompt as a whole
        return _drop(name, f"prompt shares {len(leaked)} {n}-gram(s) with the paper", left_out)
    outline, completion = _target(doc, body, set(keys))
    paper_id = content_hash({"title": doc.title, "abstract": doc.abstract, "body": body})
    split = _split(paper_id, settings.test_fraction)
    common = {"id": paper_id, "source": name, "split": split, "system": system, "prompt": user}
    example = WriteExample(**common, title=outline.title, completion=completion, keys=keys)
    prompt = WritePrompt(**common, keys=keys, references=tuple(offered))
    return Prepared(example=example, prompt=prompt, left_out=left_out)


def prepare_papers(
    sources: Sequence[PaperSource],
    settings: WriteSection,
    on_paper: Callable[[PaperSource], None] | None = None,
) -> list[Prepared]:
    """Every paper prepared; a paper that cannot be read is a drop with the reason."""
    results: list[Prepared] = []
    seen: set[str] = set()
    for source in sources:
        try:
            prepared = prepare_paper(source, settings)
        except BadInputError as error:
            prepared = Prepared(drop=PrepareDrop(source=str(source.path), reason=error.reason))
        if prepared.example is not None and prepared.example.id in seen:
            prepared = Prepared(
                drop=PrepareDrop(source=str(source.path), reason="duplicate of another paper")
            )
        elif prepared.example is not None:
            seen.add(prepared.example.id)
        results.append(prepared)
        if on_paper:
            on_paper(source)
    return results
