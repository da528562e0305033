"""Cutting blocks out of LaTeX source: conditionals, environments and commands with arguments.

Each function takes source text and returns new source text, so the cleaning steps in
:mod:`papergym.sources.latex.document` compose as a plain sequence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from papergym.sources.latex.scan import (
    CONTROL_WORD,
    is_escaped,
    read_group,
    read_optional,
    read_star,
)

# Commands whose names start with "if" but that are macros taking braced arguments, not TeX
# conditionals closed by \fi; counting them would unbalance \iffalse ... \fi.
_NOT_CONDITIONALS = frozenset(
    {
        "ifthenelse",
        "iftoggle",
        "ifbool",
        "ifdef",
        "ifndef",
        "ifundef",
        "ifcsdef",
        "ifcsundef",
        "ifdefempty",
        "ifstrequal",
        "ifstrempty",
        "ifblank",
        "ifnumcomp",
        "ifdimcomp",
        "ifboolexpr",
        "ifdefstring",
        "ifcsstring",
    }
)


def _conditional_tokens(text: str, start: int) -> Iterable[tuple[str, re.Match[str]]]:
    """Yield ("open" | "else" | "fi", match) for TeX conditional tokens from ``start``."""
    previous = ""
    for match in CONTROL_WORD.finditer(text, start):
        name = match.group(1)
        if is_escaped(text, match.start()):
            continue
        if name == "fi":
            yield "fi", match
        elif name == "else":
            yield "else", match
        elif (
            name.startswith("if")
            and name not in _NOT_CONDITIONALS
            and previous
            not in {
                "newif",
                "let",
                "def",
                "gdef",
                "newcommand",
                "renewcommand",
                "providecommand",
            }
        ):
            yield "open", match
        previous = name


_IFFALSE = re.compile(r"\\iffalse(?![A-Za-z@])")
# "\let\ifdraft\iffalse" / "\let\ifdraft=\iffalse": an assignment naming \iffalse, not a block.
_LET_BEFORE = re.compile(r"\\let\s*\\[A-Za-z@]+\s*=?\s*$")


def remove_iffalse(text: str) -> str:
    """Drop ``\\iffalse ... \\fi`` blocks (keeping an ``\\else`` branch), nested ones included.

    An ``\\iffalse`` that is not a block is left alone: the value in ``\\let\\ifdraft\\iffalse``
    and a definition body such as ``\\def\\hide{\\iffalse}`` (whose group closes before any
    ``\\fi``). Treating those as blocks dropped everything up to an unrelated ``\\fi`` or, with
    none, the whole rest of the paper.
    """
    pos = 0
    while True:
        match = next(
            (m for m in _IFFALSE.finditer(text, pos) if not is_escaped(text, m.start())), None
        )
        if match is None:
            return text
        dropped = None
        if not _LET_BEFORE.search(text, max(0, match.start() - 200), match.start()):
            dropped = _drop_false_branch(text, match.start(), match.end())
        if dropped is None:
            pos = match.end()
        else:
            text, pos = dropped, match.start()


def _drop_false_branch(text: str, start: int, after: int) -> str | None:
    """``text`` without the block opened at ``start``; ``None`` when it is not a block."""
    depth = 0
    for kind, token in _conditional_tokens(text, after):
        if kind == "open":
            depth += 1
        elif kind == "fi" and depth > 0:
            depth -= 1
        elif kind == "fi":
            if _closes_group(text, after, token.start()):
                return None
            return text[:start] + text[token.end() :]
        elif kind == "else" and depth == 0:
            if _closes_group(text, after, token.start()):
                return None
            rest = text[token.end() :]
            return text[:start] + _drop_matching_fi(rest)
    if _closes_group(text, after, len(text)):
        return None
    return text[:start]  # never closed: TeX would skip to the end of the file too


def _closes_group(text: str, start: int, end: int) -> bool:
    """True when a ``}`` between ``start`` and ``end`` closes a group opened before ``start``."""
    depth = 0
    for index in range(start, end):
        char = text[index]
        if char in "{}" and not is_escaped(text, index):
            depth += 1 if char == "{" else -1
            if depth < 0:
                return True
    return False


def _drop_matching_fi(text: str) -> str:
    depth = 0
    for kind, token in _conditional_tokens(text, 0):
        if kind == "open":
            depth += 1
        elif kind == "fi" and depth > 0:
            depth -= 1
        elif kind == "fi":
            return text[: token.start()] + text[token.end() :]
    return text


@dataclass(frozen=True)
class Environment:
    """A ``\\begin{name} ... \\end{name}`` block found in the source."""

    name: str
    start: int  # index of "\begin"
    body_start: int
    body_end: int
    end: int  # index after "\end{name}"

    def body(self, text: str) -> str:
        return text[self.body_start : self.body_end]


def _env_pattern(names: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(r"\\(begin|end)\s*\{(" + alternatives + r")\}")


def find_environments(text: str, names: Iterable[str]) -> list[Environment]:
    """Outermost environments with one of ``names``, in order; unclosed ones run to the end."""
    names = list(names)
    if not names:
        return []
    found: list[Environment] = []
    stack: list[re.Match[str]] = []
    for match in _env_pattern(names).finditer(text):
        if is_escaped(text, match.start()):
            continue
        if match.group(1) == "begin":
            stack.append(match)
        elif stack and stack[-1].group(2) == match.group(2):
            opened = stack.pop()
            if not stack:
                found.append(
                    Environment(
                        match.group(2), opened.start(), opened.end(), match.start(), match.end()
                    )
                )
    if stack:
        opened = stack[0]
        found.append(
            Environment(opened.group(2), opened.start(), opened.end(), len(text), len(text))
        )
    return found


def replace_environments(
    text: str, names: Iterable[str], replacement: Callable[[Environment, str], str]
) -> str:
    """Replace each outermost environment named in ``names`` by ``replacement(env, text)``."""
    pieces: list[str] = []
    last = 0
    for env in find_environments(text, names):
        if env.start < last:
            continue
        pieces.append(text[last : env.start])
        pieces.append(replacement(env, text))
        last = env.end
    pieces.append(text[last:])
    return "".join(pieces)


def remove_environments(text: str, names: Iterable[str]) -> str:
    """Drop every environment named in ``names``, content included."""
    return replace_environments(text, names, lambda env, _: "\n")


@dataclass(frozen=True)
class Command:
    """A command found in the source with its arguments (``None`` for an absent optional)."""

    name: str
    start: int
    end: int
    args: tuple[str | None, ...]


def read_arguments(text: str, pos: int, argspec: str) -> tuple[tuple[str | None, ...], int] | None:
    """Read arguments per ``argspec`` (``*`` star, ``[`` optional, ``{`` mandatory) from ``pos``.

    Returns the arguments and the end position, or ``None`` when a mandatory one is missing.
    """
    args: list[str | None] = []
    for kind in argspec:
        if kind == "*":
            star, pos = read_star(text, pos)
            args.append("*" if star else None)
        elif kind == "[":
            optional = read_optional(text, pos)
            args.append(optional.value if optional else None)
            pos = optional.end if optional else pos
        else:
            group = read_group(text, pos)
            if group is None:
                return None
            args.append(group.value)
            pos = group.end
    return tuple(args), pos


def find_commands(text: str, specs: dict[str, str]) -> list[Command]:
    """Every ``\\name`` in ``specs`` with its arguments read per its argspec, in order."""
    found: list[Command] = []
    last_end = 0
    for match in CONTROL_WORD.finditer(text):
        name = match.group(1)
        if name not in specs or match.start() < last_end or is_escaped(text, match.start()):
            continue
        parsed = read_arguments(text, match.end(), specs[name])
        if parsed is None:
            continue
        args, end = parsed
        found.append(Command(name, match.start(), end, args))
        last_end = end
    return found


def replace_commands(
    text: str, specs: dict[str, str], replacement: Callable[[Command], str]
) -> str:
    """Replace each command in ``specs`` (and its arguments) by ``replacement(command)``."""
    pieces: list[str] = []
    last = 0
    for command in find_commands(text, specs):
        pieces.append(text[last : command.start])
        pieces.append(replacement(command))
        last = command.end
    pieces.append(text[last:])
    return "".join(pieces)


def remove_commands(text: str, specs: dict[str, str]) -> str:
    """Drop each command in ``specs`` together with its arguments."""
    return replace_commands(text, specs, lambda _: "")
