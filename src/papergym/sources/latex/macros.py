"""The paper's own simple macros: collecting ``\\newcommand``/``\\def`` definitions and expanding them.

Authors write ``\\newcommand{\\model}{\\textsc{Celerite}}`` or ``\\def\\R{\\mathbb{R}}`` and then
use them everywhere; without expansion those words vanish from the text. Only *simple* macros
are expanded: a body that does TeX programming (conditionals, ``\\csname``, internal ``@``
commands, nested definitions) is left alone, and so are the structural commands we rely on —
which is why a preamble that redefines ``\\section`` does not hide the paper's headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from papergym.sources.latex.blocks import Command, find_commands, read_arguments
from papergym.sources.latex.scan import find_matching, is_escaped

# Commands the pipeline interprets itself; a redefinition of these is never expanded.
PROTECTED = frozenset(
    {
        "part",
        "chapter",
        "section",
        "subsection",
        "subsubsection",
        "paragraph",
        "subparagraph",
        "appendix",
        "begin",
        "end",
        "item",
        "caption",
        "label",
        "title",
        "author",
        "abstract",
        "maketitle",
        "input",
        "include",
        "subfile",
        "import",
        "subimport",
        "bibliography",
        "footnote",
        "cite",
        "ref",
        "documentclass",
        "usepackage",
        "newcommand",
        "renewcommand",
        "def",
        "let",
        "par",
        "relax",
        "thanks",
        "url",
        "href",
        "emph",
        "textbf",
        "textit",
    }
)
_PROGRAMMING = re.compile(
    r"\\(def|gdef|edef|xdef|let|newcommand|renewcommand|providecommand|if[A-Za-z]*|else|fi|"
    r"csname|endcsname|expandafter|futurelet|afterassignment|begingroup|endgroup|makeatletter|"
    r"makeatother|catcode|noexpand|global|setbox|hbox\s*to|vbox|ProcessOptions|"
    r"DeclareOption|RequirePackage|NeedsTeXFormat|[A-Za-z]*@[A-Za-z@]*)(?![A-Za-z])|#[^1-9#]"
)
_NEWCOMMAND = {
    name: "*{[[{"
    for name in ("newcommand", "renewcommand", "providecommand", "DeclareRobustCommand")
}
_MATH_OPERATOR = {"DeclareMathOperator": "*{{"}
_OTHER_DEFINITIONS = {
    "newenvironment": "*{[[{{",
    "renewenvironment": "*{[[{{",
    "newtheorem": "*{[{[",
    "newif": "{",
    "newcounter": "{[",
    "newlength": "{",
}
_DEF = re.compile(r"\\(?:g|e|x)?def\s*\\([A-Za-z@]+)\s*((?:#[1-9])*)\s*\{")
_ENDS_WITH_CONTROL_WORD = re.compile(r"\\[A-Za-z@]+\s*$")
_LET = re.compile(r"\\let\s*\\[A-Za-z@]+\s*=?\s*(\\[A-Za-z@]+|\\.|.)")


@dataclass(frozen=True)
class Macro:
    """A user macro: ``nargs`` arguments, the first optional when ``default`` is set."""

    name: str
    nargs: int
    default: str | None
    body: str

    @property
    def argspec(self) -> str:
        if self.default is not None:
            return "[" + "{" * (self.nargs - 1)
        return "{" * self.nargs

    def apply(self, args: tuple[str | None, ...]) -> str:
        values = [self.default if a is None else a for a in args]

        def substitute(match: re.Match[str]) -> str:
            if match.group(0) == "##":
                return "#"
            index = int(match.group(0)[1]) - 1
            return values[index] or "" if index < len(values) else ""

        return re.sub(r"##|#[1-9]", substitute, self.body)


def is_simple(body: str) -> bool:
    """True when a macro body is plain text/markup that is safe to expand textually."""
    return _PROGRAMMING.search(body) is None


def collect_macros(text: str) -> dict[str, Macro]:
    """Simple macro definitions in ``text``; a later definition replaces an earlier one."""
    macros: dict[str, Macro] = {}
    for command in find_commands(text, {**_NEWCOMMAND, **_MATH_OPERATOR}):
        macro = _from_command(command)
        if macro is not None and macro.name not in PROTECTED and is_simple(macro.body):
            macros[macro.name] = macro
    for match in _DEF.finditer(text):
        if is_escaped(text, match.start()):
            continue
        end = find_matching(text, match.end() - 1)
        name, params = match.group(1), match.group(2)
        body = text[match.end() : end] if end > 0 else ""
        if end > 0 and name not in PROTECTED and is_simple(body):
            macros[name] = Macro(name, len(params) // 2, None, body)
    return macros


def _from_command(command: Command) -> Macro | None:
    if command.name == "DeclareMathOperator":
        _, name_arg, body = command.args
        name = _macro_name(name_arg)
        return Macro(name, 0, None, f"\\operatorname{{{body}}}") if name else None
    _, name_arg, nargs_arg, default, body = command.args
    name = _macro_name(name_arg)
    if name is None or body is None:
        return None
    try:
        nargs = int((nargs_arg or "0").strip())
    except ValueError:
        return None
    if not 0 <= nargs <= 9 or (default is not None and nargs == 0):
        return None
    return Macro(name, nargs, default, body)


def _macro_name(arg: str | None) -> str | None:
    match = re.fullmatch(r"\s*\\([A-Za-z@]+)\s*", arg or "")
    return match.group(1) if match else None


def remove_definitions(text: str) -> str:
    """Drop macro, environment and theorem definitions so their bodies never reach the text."""
    specs = {**_NEWCOMMAND, **_MATH_OPERATOR, **_OTHER_DEFINITIONS}
    pieces: list[str] = []
    last = 0
    for command in find_commands(text, specs):
        pieces.append(text[last : command.start])
        last = command.end
    pieces.append(text[last:])
    text = "".join(pieces)
    text = _remove_defs(text)
    return _LET.sub("", text)


def _remove_defs(text: str) -> str:
    pieces: list[str] = []
    pos = 0
    for match in _DEF.finditer(text):
        if match.start() < pos:
            continue
        end = find_matching(text, match.end() - 1)
        if end < 0:
            continue
        pieces.append(text[pos : match.start()])
        pos = end + 1
    pieces.append(text[pos:])
    return "".join(pieces)


@dataclass
class MacroExpander:
    """Expands user macros in text, with a depth and a total budget against runaway recursion."""

    macros: dict[str, Macro]
    max_depth: int = 12
    budget: int = 100_000

    def __post_init__(self) -> None:
        names = sorted(
            (n for n in self.macros if re.fullmatch(r"[A-Za-z@]+", n)), key=len, reverse=True
        )
        self._pattern = re.compile(r"\\(" + "|".join(names) + r")(?![A-Za-z@])") if names else None

    def expand(self, text: str, depth: int = 0, active: frozenset[str] = frozenset()) -> str:
        """Expand user macros in ``text``.

        ``active`` holds the macros being expanded around this text. A macro met again inside
        its own expansion (``\\newcommand\\a{\\a\\a}``) would loop forever in TeX too, so it is
        left as it is; without this, such a macro multiplied up to the depth cap, took seconds
        and used up the budget, so the paper's other macros were no longer expanded.
        """
        if self._pattern is None or depth > self.max_depth:
            return text
        pieces: list[str] = []
        pos = 0
        while self.budget > 0:
            match = self._pattern.search(text, pos)
            if match is None:
                break
            macro = self.macros[match.group(1)]
            parsed = (
                None
                if is_escaped(text, match.start()) or macro.name in active
                else read_arguments(text, match.end(), macro.argspec)
            )
            if parsed is None:
                pieces.append(text[pos : match.end()])
                pos = match.end()
                continue
            args, end = parsed
            self.budget -= 1
            pieces.append(text[pos : match.start()])
            # Arguments are expanded in the caller's context first, so that a macro nested in its
            # own argument (\set{\set{a}}) is not mistaken for recursion in the body.
            args = tuple(None if a is None else self.expand(a, depth + 1, active) for a in args)
            expansion = self.expand(macro.apply(args), depth + 1, active | {macro.name})
            if _ENDS_WITH_CONTROL_WORD.search(expansion):
                expansion += "{}"  # "\pysr was": the space after must survive the expansion
            pieces.append(expansion)
            pos = end
        pieces.append(text[pos:])
        return "".join(pieces)


def used_packages(text: str) -> list[str]:
    """Package names loaded with ``\\usepackage`` (to find the paper's own ``.sty`` files)."""
    names: list[str] = []
    for command in find_commands(text, {"usepackage": "[{", "RequirePackage": "[{"}):
        names.extend(n.strip() for n in (command.args[1] or "").split(",") if n.strip())
    return names
