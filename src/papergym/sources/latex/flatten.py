"""Finding a paper's main ``.tex`` file and inlining everything it inputs.

``\\input``, ``\\include``, ``\\subfile``, ``\\import`` and ``\\subimport`` are resolved the way
authors' build setups usually resolve them (the main file's folder first, then the including
file's folder), with or without the ``.tex`` extension, nested, with cycle detection and a depth
cap. What cannot be resolved becomes a warning on the paper, never a failure.
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


@dataclass
class _Flattener:
    root: Path
    main_dir: Path
    max_depth: int
    result: Flattened

    def expand(self, path: Path, import_dir: Path, stack: tuple[Path, ...]) -> str:
        text = read_source(path)
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
        where = self.relative(parent)
        if folder is not None:  # \import{dir}{file} and relatives change the search folder
            base = parent.parent if command.startswith("sub") else self.main_dir
            import_dir = (base / folder).resolve()
        target = self.resolve(name, [import_dir, parent.parent, self.main_dir, self.root])
        if target is None:
            self.warn(f"unresolved \\{command}{{{name}}} in {where}")
            return ""
        if not _inside(target, self.root):
            self.warn(f"\\{command}{{{name}}} in {where} points outside the paper folder; skipped")
            return ""
        if target in stack:
            chain = " -> ".join(self.relative(p) for p in (*stack, target))
            self.warn(f"input cycle skipped: {chain}")
            return ""
        if len(stack) > self.max_depth:
            self.warn(
                f"\\{command}{{{name}}} in {where} nested deeper than {self.max_depth}; skipped"
            )
            return ""
        try:
            body = self.expand(target, import_dir, (*stack, target))
        except BadInputError as error:
            self.warn(f"\\{command}{{{name}}} in {where} skipped: {error.reason}")
            return ""
        return f"\n{body}\n"

    def resolve(self, name: str, folders: list[Path]) -> Path | None:
        names = [name] if name.endswith(".tex") else [f"{name}.tex", name]
        for folder in dict.fromkeys(folders):
            for candidate_name in names:
                candidate = (folder / candidate_name).resolve()
                if candidate.is_file():
                    return candidate
        return None

    def relative(self, path: Path) -> str:
        try:
            return PurePosixPath(path.resolve().relative_to(self.root)).as_posix()
        except ValueError:
            return str(path)

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


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
        return True
    except ValueError:
        return False


def document_body(text: str) -> str:
    """The text between ``\\begin{document}`` and ``\\end{document}`` (or to the end)."""
    begin = _BEGIN_DOCUMENT.search(text)
    if begin is None:
        return text
    end = _END_DOCUMENT.search(text, begin.end())
    return text[begin.end() : end.start() if end else len(text)]


def flatten(root: Path, main: Path, max_depth: int = MAX_INPUT_DEPTH) -> Flattened:
    """Inline every input reachable from ``main``; paths are resolved inside ``root``."""
    root = root.resolve()
    main = main.resolve()
    result = Flattened(text="")
    flattener = _Flattener(root=root, main_dir=main.parent, max_depth=max_depth, result=result)
    result.text = flattener.expand(main, main.parent, (main,))
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
    candidates: list[Path] = []
    unreadable: list[str] = []
    for path in tex_files:
        try:
            if _is_candidate(read_source(path)):
                candidates.append(path)
        except BadInputError as error:
            # Said, not silently dropped: a binary file named .tex is a question for the user.
            unreadable.append(f"{path.resolve().relative_to(root).as_posix()}: {error.reason}")
    if not candidates:
        return _fallback_main(root, tex_files, unreadable)
    scored = []
    for path in candidates:
        flat = flatten(root, path)
        stale = any(
            part.lower() in _STALE_DIRS for part in path.resolve().relative_to(root).parts[:-1]
        )
        conventional = path.stem.lower() in _CONVENTIONAL_MAIN_NAMES
        scored.append(((not stale, len(flat.text), conventional), path, flat))
    scored.sort(key=lambda item: item[0], reverse=True)
    _, best, flat = scored[0]
    rel = best.resolve().relative_to(root).as_posix()
    if len(scored) == 1:
        reason = "the only file with \\documentclass and \\begin{document}"
    else:
        # A candidate in a drafts folder loses whatever its size, so the reason says so rather
        # than claiming the winner reaches the most content when a draft reaches more.
        best_fresh = scored[0][0][0]
        others = ", ".join(
            f"{p.resolve().relative_to(root).as_posix()} ({len(f.text):,} chars"
            f"{', in a drafts folder' if best_fresh and not key[0] else ''})"
            for key, p, f in scored[1:4]
        )
        beaten_drafts = best_fresh and any(not key[0] for key, _, _ in scored[1:])
        reason = (
            f"{len(scored)} files have \\documentclass and \\begin{{document}}; {rel} reaches the "
            f"most content through its inputs{' outside drafts folders' if beaten_drafts else ''} "
            f"({len(flat.text):,} chars{'' if best_fresh else ', though in a drafts folder'}) "
            f"vs {others}"
        )
    for message in unreadable:
        flat.warnings.append(f"skipped {message}")
    return MainFile(best, reason, flat)


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
