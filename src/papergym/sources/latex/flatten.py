"""Finding a paper's main ``.tex`` file and inlining everything it inputs.

``\\input``, ``\\include``, ``\\subfile``, ``\\import`` and ``\\subimport`` are resolved the way
authors' build setups usually resolve them (the main file's folder first, then the including
file's folder), with or without the ``.tex`` extension, nested, with cycle detection and a depth
cap. What cannot be resolved becomes a warning on the paper, never a failure.

The inlined text is bounded too: a file that inputs the next file ten times, eight levels deep,
passes the cycle check and the depth cap yet expands 10^8 times from a few hundred bytes. Past
:data:`MAX_INCLUSIONS` inputs or :data:`MAX_FLATTENED_CHARS` characters, further inputs are
skipped with one warning on the paper (the limits are far above what real papers reach).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from papergym.errors import BadInputError
from papergym.sources.files import read_text
from papergym.sources.latex.blocks import remove_environments, remove_iffalse
from papergym.sources.latex.scan import is_escaped, read_group, skip_space, strip_comments

MAX_INPUT_DEPTH = 16
#: Inputs inlined per flattening. Real papers input tens of files; a long thesis a few hundred.
MAX_INCLUSIONS = 2_000
#: Characters of source per flattening, main file included: a long thesis has 1-3 million.
#: The text is read at about 200,000 chars a second, so this also bounds the time a paper takes.
MAX_FLATTENED_CHARS = 5_000_000
#: Inputs and characters inlined across every candidate while the main file is chosen: a
#: folder of thousands of candidate main files, each inputting a fan-out, is bounded too.
MAX_SEARCH_INCLUSIONS = 5 * MAX_INCLUSIONS
MAX_SEARCH_CHARS = 4 * MAX_FLATTENED_CHARS
# Folders whose .tex files are old copies, not the paper being built.
_STALE_DIRS = frozenset(
    {"draft", "drafts", "old", "backup", "backups", "archive", "unused", "trash"}
)
_CONVENTIONAL_MAIN_NAMES = ("main", "ms", "paper", "manuscript", "article", "root")
_INPUT_COMMAND = re.compile(
    r"\\(input|include|subfile|import|subimport|inputfrom|includefrom|subinputfrom|subincludefrom)"
    r"(?![A-Za-z@])"
)
_DOCUMENTCLASS = re.compile(r"\\documentclass\s*(\[[^\]]*\])?\s*\{\s*([^}]*)\}")
_BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_END_DOCUMENT = re.compile(r"\\end\s*\{document\}")


def read_source(path: Path) -> str:
    """A source file's text with comments, ``\\iffalse`` blocks and comment environments gone."""
    text = strip_comments(read_text(path))
    text = remove_environments(text, ["comment"])
    return remove_iffalse(text)


@dataclass
class Flattened:
    """The main file with every resolvable input inlined."""

    text: str
    files: list[str] = field(default_factory=list)  # relative to the root, in reading order
    warnings: list[str] = field(default_factory=list)
    inclusions: int = 0  # inputs inlined


@dataclass(frozen=True)
class FlattenLimits:
    """Bounds on one flattening: nesting depth, inputs inlined, characters inlined."""

    max_depth: int = MAX_INPUT_DEPTH
    max_inclusions: int = MAX_INCLUSIONS
    max_chars: int = MAX_FLATTENED_CHARS


@dataclass
class _Flattener:
    root: Path
    main_dir: Path
    limits: FlattenLimits
    result: Flattened
    # A file input many times (or by several candidate main files) is read and cleaned once.
    sources: dict[Path, str]
    found: dict[tuple[str | Path, ...], Path | None] = field(default_factory=dict)
    names: dict[Path, str] = field(default_factory=dict)
    inclusions: int = 0
    chars: int = 0
    over_limit: int = 0  # inputs skipped because a limit was reached

    def source(self, path: Path) -> str:
        text = self.sources.get(path)
        if text is None:
            text = self.sources[path] = read_source(path)
        return text

    def expand(self, text: str, path: Path, import_dir: Path, stack: tuple[Path, ...]) -> str:
        # Listed only once read: a binary or unreadable input is skipped with a warning, and
        # ``files`` names the files whose text went into the paper.
        self.result.files.append(self.relative(path))
        if path != stack[0] and _BEGIN_DOCUMENT.search(text):
            text = document_body(text)  # a \subfile is a complete document of its own
        pieces: list[str] = []
        last = 0
        for match in _INPUT_COMMAND.finditer(text):
            if match.start() < last or is_escaped(text, match.start()):
                continue
            parsed = _input_arguments(text, match)
            if parsed is None:
                continue
            folder, name, end = parsed
            pieces.append(text[last : match.start()])
            pieces.append(self.inline(match.group(1), folder, name, path, import_dir, stack))
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def inline(
        self,
        command: str,
        folder: str | None,
        name: str,
        parent: Path,
        import_dir: Path,
        stack: tuple[Path, ...],
    ) -> str:
        if self.inclusions >= self.limits.max_inclusions:
            self.over_limit += 1  # counted, not even resolved: the rest of a fan-out is cheap
            return ""
        where = self.relative(parent)
        if folder is not None:  # \import{dir}{file} and relatives change the search folder
            base = parent.parent if command.startswith("sub") else self.main_dir
            import_dir = (base / folder).resolve()
        target = self.resolve(name, [import_dir, parent.parent, self.main_dir, self.root])
        if target is None:
            self.warn(f"unresolved \\{command}{{{name}}} in {where}")
            return ""
        if not target.is_relative_to(self.root):  # both already resolved
            self.warn(f"\\{command}{{{name}}} in {where} points outside the paper folder; skipped")
            return ""
        if target in stack:
            chain = " -> ".join(self.relative(p) for p in (*stack, target))
            self.warn(f"input cycle skipped: {chain}")
            return ""
        if len(stack) > self.limits.max_depth:
            self.warn(
                f"\\{command}{{{name}}} in {where} nested deeper than {self.limits.max_depth}; "
                "skipped"
            )
            return ""
        try:
            text = self.source(target)
        except BadInputError as error:
            self.warn(f"\\{command}{{{name}}} in {where} skipped: {error.reason}")
            return ""
        if self.chars + len(text) > self.limits.max_chars:
            self.over_limit += 1
            return ""
        self.inclusions += 1
        self.chars += len(text)
        body = self.expand(text, target, import_dir, (*stack, target))
        return f"\n{body}\n"

    def resolve(self, name: str, folders: list[Path]) -> Path | None:
        # A file input many times from one folder is looked up once (each lookup resolves
        # paths on disk, the bulk of the time in a long fan-out).
        key: tuple[str | Path, ...] = (name, *folders)
        if key not in self.found:
            self.found[key] = self.lookup(name, folders)
        return self.found[key]

    def lookup(self, name: str, folders: list[Path]) -> Path | None:
        names = [name] if name.endswith(".tex") else [f"{name}.tex", name]
        for folder in dict.fromkeys(folders):
            for candidate_name in names:
                candidate = (folder / candidate_name).resolve()
                if candidate.is_file():
                    return candidate
        return None

    def relative(self, path: Path) -> str:
        if path not in self.names:
            try:
                self.names[path] = PurePosixPath(path.resolve().relative_to(self.root)).as_posix()
            except ValueError:
                self.names[path] = str(path)
        return self.names[path]

    def warn(self, message: str) -> None:
        if message not in self.result.warnings:
            self.result.warnings.append(message)


def _input_arguments(text: str, match: re.Match[str]) -> tuple[str | None, str, int] | None:
    """(folder, file name, end) of an input command, or None when it is not a literal input."""
    command = match.group(1)
    pos = match.end()
    folder: str | None = None
    if command in {
        "import",
        "subimport",
        "inputfrom",
        "includefrom",
        "subinputfrom",
        "subincludefrom",
    }:
        first = read_group(text, pos)
        if first is None:
            return None
        folder, pos = first.value.strip(), first.end
    start = skip_space(text, pos)
    if command == "input" and start < len(text) and text[start] not in "{\\":
        # TeX's own syntax: \input file-name, ended by white space
        bare = re.match(r"[^\s{}\\%]+", text[start:])
        if bare is None:
            return None
        name, end = bare.group(0), start + bare.end()
    else:
        group = read_group(text, pos)
        if group is None or group.value.startswith("\\"):
            return None
        name, end = group.value.strip(), group.end
    if not name or "#" in name or (folder is not None and "#" in folder):
        return None  # part of a macro definition, not a file of this paper
    return folder, name, end


def document_body(text: str) -> str:
    """The text between ``\\begin{document}`` and ``\\end{document}`` (or to the end)."""
    begin = _BEGIN_DOCUMENT.search(text)
    if begin is None:
        return text
    end = _END_DOCUMENT.search(text, begin.end())
    return text[begin.end() : end.start() if end else len(text)]


def flatten(
    root: Path,
    main: Path,
    limits: FlattenLimits | None = None,
    *,
    sources: dict[Path, str] | None = None,
) -> Flattened:
    """Inline every input reachable from ``main``; paths are resolved inside ``root``.

    Past the limits, further inputs are skipped and one warning on the result says how many.
    ``sources`` caches cleaned file texts by resolved path, to share between flattenings.
    """
    limits = limits or FlattenLimits()
    root = root.resolve()
    main = main.resolve()
    result = Flattened(text="")
    flattener = _Flattener(
        root=root,
        main_dir=main.parent,
        limits=limits,
        result=result,
        sources={} if sources is None else sources,
    )
    main_text = flattener.source(main)
    flattener.chars = len(main_text)
    result.text = flattener.expand(main_text, main, main.parent, (main,))
    result.inclusions = flattener.inclusions
    if flattener.over_limit:
        result.warnings.append(
            f"inputs limited: {flattener.over_limit:,} further input(s) not inlined after "
            f"{flattener.inclusions:,} inlined ({flattener.chars:,} chars; limits "
            f"{limits.max_inclusions:,} inputs, {limits.max_chars:,} chars)"
        )
    return result


@dataclass(frozen=True)
class MainFile:
    """The chosen main file, its flattened text, and why it was chosen."""

    path: Path
    reason: str
    flattened: Flattened


def _is_candidate(text: str) -> bool:
    match = _DOCUMENTCLASS.search(text)
    if match is None or _BEGIN_DOCUMENT.search(text) is None:
        return False
    return match.group(2).strip() not in {"subfiles", "standalone"}


def find_main_file(root: Path, tex_files: list[Path]) -> MainFile:
    """Choose the main file among ``tex_files`` and flatten it.

    A candidate has ``\\documentclass`` and ``\\begin{document}``; among several, the one that
    is not in a drafts/old folder and reaches the most content through its inputs wins.
    """
    root = root.resolve()
    sources, candidates, unreadable = _read_candidates(root, tex_files)
    if not candidates:
        return _fallback_main(root, tex_files, unreadable)
    scored, flat = _score_candidates(root, candidates, sources)
    main = scored[0][1]
    flat.warnings.extend(f"skipped {message}" for message in unreadable)
    return MainFile(main, _choice_reason(root, scored, len(flat.text)), flat)


_Key = tuple[bool, int, bool]
"""A candidate's rank: not in a drafts folder, characters reached, conventional name."""


def _read_candidates(
    root: Path, tex_files: list[Path]
) -> tuple[dict[Path, str], list[Path], list[str]]:
    """Every file's text (read once), the complete documents, and the unreadable files."""
    sources: dict[Path, str] = {}
    candidates: list[Path] = []
    unreadable: list[str] = []
    for path in tex_files:
        try:
            resolved = path.resolve()
            if resolved not in sources:
                sources[resolved] = read_source(resolved)
            if _is_candidate(sources[resolved]):
                candidates.append(path)
        except BadInputError as error:
            # Said, not silently dropped: a binary file named .tex is a question for the user.
            unreadable.append(f"{path.resolve().relative_to(root).as_posix()}: {error.reason}")
    return sources, candidates, unreadable


def _score_candidates(
    root: Path, candidates: list[Path], sources: dict[Path, str]
) -> tuple[list[tuple[_Key, Path, int]], Flattened]:
    """Each candidate ranked, best first (the first of equals leads), and the winner flattened.

    Only the winning flattening is kept: each can be up to MAX_FLATTENED_CHARS long, and the
    others are only needed for their lengths.
    """
    scored: list[tuple[_Key, Path, int]] = []
    best: tuple[_Key, Flattened] | None = None
    inclusions = chars = 0
    for path in candidates:
        # Each candidate gets the per-flattening limits, or what is left of the search's.
        limits = FlattenLimits(
            max_inclusions=max(0, min(MAX_INCLUSIONS, MAX_SEARCH_INCLUSIONS - inclusions)),
            max_chars=max(0, min(MAX_FLATTENED_CHARS, MAX_SEARCH_CHARS - chars)),
        )
        flat = flatten(root, path, limits, sources=sources)
        inclusions, chars = inclusions + flat.inclusions, chars + len(flat.text)
        stale = any(
            part.lower() in _STALE_DIRS for part in path.resolve().relative_to(root).parts[:-1]
        )
        conventional = path.stem.lower() in _CONVENTIONAL_MAIN_NAMES
        key = (not stale, len(flat.text), conventional)
        if best is None or key > best[0]:  # the first of equal keys wins, as in the sort below
            best = (key, flat)
        scored.append((key, path, len(flat.text)))
    assert best is not None
    scored.sort(key=lambda item: item[0], reverse=True)  # stable: the first of equals leads
    return scored, best[1]


def _choice_reason(root: Path, scored: list[tuple[_Key, Path, int]], length: int) -> str:
    """Why the first of ``scored`` is the main file, naming up to three runners-up."""
    if len(scored) == 1:
        return "the only file with \\documentclass and \\begin{document}"
    rel = scored[0][1].resolve().relative_to(root).as_posix()
    # A candidate in a drafts folder loses whatever its size, so the reason says so rather
    # than claiming the winner reaches the most content when a draft reaches more.
    best_fresh = scored[0][0][0]
    others = ", ".join(
        f"{p.resolve().relative_to(root).as_posix()} ({chars:,} chars"
        f"{', in a drafts folder' if best_fresh and not key[0] else ''})"
        for key, p, chars in scored[1:4]
    )
    beaten_drafts = best_fresh and any(not key[0] for key, _, _ in scored[1:])
    return (
        f"{len(scored)} files have \\documentclass and \\begin{{document}}; {rel} reaches the "
        f"most content through its inputs{' outside drafts folders' if beaten_drafts else ''} "
        f"({length:,} chars{'' if best_fresh else ', though in a drafts folder'}) "
        f"vs {others}"
    )


def _fallback_main(root: Path, tex_files: list[Path], unreadable: list[str]) -> MainFile:
    """No complete document: accept a lone fragment with sections, or say there is no LaTeX."""
    readable: list[tuple[Path, str]] = []
    for path in tex_files:
        try:
            readable.append((path, read_source(path)))
        except BadInputError:
            continue
    latexish = [
        (p, t) for p, t in readable if re.search(r"\\(section|begin\s*\{document\}|title)\b", t)
    ]
    if not latexish:
        # Name the .tex files that could not be read (a binary file named .tex), which is
        # otherwise a puzzling "no LaTeX" for a folder that plainly has a .tex file.
        skipped = f"; skipped {'; '.join(unreadable)}" if unreadable else ""
        raise BadInputError(
            root,
            "no LaTeX document found (no .tex file with \\documentclass, "
            f"\\begin{{document}} or \\section){skipped}",
        )
    path, _ = max(latexish, key=lambda item: len(item[1]))
    flat = flatten(root, path)
    flat.warnings.insert(
        0, "no file has both \\documentclass and \\begin{document}; read as a document fragment"
    )
    flat.warnings.extend(f"skipped {message}" for message in unreadable)
    return MainFile(
        path, "largest .tex fragment with LaTeX structure (no complete document found)", flat
    )
