"""LaTeX → readable plain text with pylatexenc, configured for research papers.

Citations and cross-references become ``[cite]`` and ``[ref]`` (with ``cite_keys=True`` a
citation keeps its keys as ``\\cite{a,b}``, for the writer's training targets), footnotes go in
parentheses, formatting commands keep their text, layout commands vanish, and inline math stays readable
(``$\\alpha_i^2$`` → ``α_i^2``). Conversion never raises: a piece pylatexenc cannot handle is
converted paragraph by paragraph, and as a last resort with a plain markup stripper.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pylatexenc import latex2text, latexwalker, macrospec

_CITE = (
    "cite",
    "citep",
    "citet",
    "citealp",
    "citealt",
    "citeauthor",
    "citeyear",
    "citeyearpar",
    "parencite",
    "textcite",
    "autocite",
    "footcite",
    "Cite",
    "Citet",
    "Citep",
    "citenum",
    "smartcite",
    "supercite",
)
CITE_COMMANDS: tuple[str, ...] = _CITE
"""Every citation command the text conversion knows (bibliography reading finds keys by them)."""
_REF = (
    "ref",
    "eqref",
    "autoref",
    "cref",
    "Cref",
    "pageref",
    "nameref",
    "vref",
    "subref",
    "Autoref",
    "crefrange",
    "Crefrange",
    "fullref",
)
_KEEP_TEXT = (
    "texttt",
    "textsc",
    "textsf",
    "textrm",
    "textup",
    "textmd",
    "textnormal",
    "textsl",
    "mbox",
    "fbox",
    "underline",
    "uline",
    "hl",
    "text",
    "textsubscript",
    "textsuperscript",
    "mathrm",
    "mathsf",
    "mathtt",
    "mathit",
    "mathbf",
    "boldsymbol",
    "bm",
    "mathnormal",
    "ensuremath",
    "nolinkurl",
    "path",
    "acro",
    "ac",
    "acs",
    "acl",
    "acf",
    "gls",
    "glspl",
    "Gls",
    "keyword",
    "code",
    "pkg",
    "proglang",
    "software",
    "mintinline",
    "lstinline",
    "textls",
    "uppercase",
    "MakeUppercase",
    "MakeLowercase",
)
# Commands that stand for one of their arguments (or for nothing): each one's argument spec, as
# the walker reads it, beside the text it becomes (``%(n)s``: its n-th argument), so the two stay
# in step.
_ARGUMENT_TEXT = {
    "href": ("{{", "%(2)s"),
    "hyperref": ("[{", "%(2)s"),  # \hyperref[label]{text}: the text, not the label
    "url": ("{", "%(1)s"),
    "footnote": ("[{", " (%(2)s)"),
    "footnotetext": ("[{", ""),
    "textcolor": ("[{{", "%(3)s"),
    "colorbox": ("[{{", "%(3)s"),
    "operatorname": ("*{", "%(2)s"),
    "caption": ("[{", "%(2)s"),
    "makebox": ("[[{", "%(3)s"),
    "parbox": ("[[[{{", "%(5)s"),
    "raisebox": ("{[[{", "%(4)s"),
}
# Commands whose arguments are layout or bookkeeping, never reader-visible text.
_DROP = {
    "label": "{",
    "includegraphics": "*[[{",
    "vspace": "*{",
    "hspace": "*{",
    "setlength": "{{",
    "addtolength": "{{",
    "setcounter": "{{",
    "addtocounter": "{{",
    "stepcounter": "{",
    "refstepcounter": "{",
    "pagestyle": "{",
    "thispagestyle": "{",
    "pagenumbering": "{",
    "graphicspath": "{",
    "hypersetup": "{",
    "captionsetup": "[{",
    "definecolor": "{{{",
    "color": "[{",
    "bibliographystyle": "{",
    "nocite": "{",
    "thanks": "{",
    "footnotemark": "[",
    "linenumbers": "",
    "newpage": "",
    "clearpage": "",
    "cleardoublepage": "",
    "pagebreak": "[",
    "nopagebreak": "[",
    "linebreak": "[",
    "vfill": "",
    "hfill": "",
    "centering": "",
    "raggedright": "",
    "raggedleft": "",
    "noindent": "",
    "indent": "",
    "maketitle": "",
    "tableofcontents": "",
    "listoffigures": "",
    "listoftables": "",
    "vskip": "",
    "hskip": "",
    "phantom": "{",
    "hphantom": "{",
    "vphantom": "{",
    "resizebox": "{{",
    "scalebox": "{",
    "rule": "[{{",
    "addcontentsline": "{{{",
    "markboth": "{{",
    "markright": "{",
    "balance": "",
    "twocolumn": "[",
    "onecolumn": "",
    "sloppy": "",
    "fussy": "",
    "allowdisplaybreaks": "[",
    "FloatBarrier": "",
    "bigskip": "",
    "medskip": "",
    "smallskip": "",
    "affiliation": "{",
    "affil": "[{",
    "email": "{",
    "keywords": "{",
    "orcid": "{",
    "correspondingauthor": "{",
    "altaffiliation": "{",
    "received": "{",
    "accepted": "{",
    "published": "{",
    "submitjournal": "{",
    "shorttitle": "{",
    "shortauthors": "{",
    "titlehead": "{",
    "date": "{",
    "icmlsetsymbol": "{{",
    "icmlauthor": "{{",
    "icmlaffiliation": "{{",
    "icmlcorrespondingauthor": "{{",
    "icmlkeywords": "{",
    "printAffiliationsAndNotice": "{",
    "vcentcolon": "",
    "protect": "",
    "xspace": "",
    "nobreak": "",
    "ignorespaces": "",
    "leavevmode": "",
    "null": "",
    "strut": "",
    # Inputs are resolved before conversion; one left here (its name was a macro) must not reach
    # pylatexenc's own \input handler, which logs to stderr and raises on a missing argument.
    "input": "{",
    "include": "{",
}
_SYMBOLS = {
    "LaTeX": "LaTeX",
    "TeX": "TeX",
    "LaTeXe": "LaTeX2e",
    "BibTeX": "BibTeX",
    "S": "§",
    "P": "¶",
    "eg": "e.g.",
    "ie": "i.e.",
    "etal": "et al.",
    "cf": "cf.",
    "etc": "etc.",
    "wrt": "w.r.t.",
    "vs": "vs.",
    "textbackslash": "\\",
}


def _cite_with_keys(node: Any) -> str:
    """``\\citep[p.~3]{a, b}`` → ``\\cite{a,b}``: the keys, without the citation's style."""
    args = node.nodeargd.argnlist if node.nodeargd else []
    group = args[-1] if args else None
    keys = group.latex_verbatim().strip("{} \n") if group is not None else ""
    keys = ",".join(k.strip() for k in keys.split(",") if k.strip())
    return f"\\cite{{{keys}}}" if keys else "[cite]"


@functools.cache
def _contexts(cite_keys: bool = False) -> tuple[Any, Any]:
    walker_db = latexwalker.get_default_latex_context_db()
    text_db = latex2text.get_default_latex_context_db()
    walker_specs = [macrospec.MacroSpec(n, "*[[{") for n in _CITE]
    walker_specs += [macrospec.MacroSpec(n, "*{") for n in _REF]
    walker_specs += [macrospec.MacroSpec(n, "{") for n in _KEEP_TEXT]
    walker_specs += [macrospec.MacroSpec(n, spec) for n, spec in _DROP.items()]
    walker_specs += [macrospec.MacroSpec(n, spec) for n, (spec, _) in _ARGUMENT_TEXT.items()]
    walker_db.add_context_category("papergym", macros=walker_specs, prepend=True)
    T = latex2text.MacroTextSpec
    cite: Any = _cite_with_keys if cite_keys else "[cite]"
    text_specs = [T(n, cite) for n in _CITE] + [T(n, "[ref]") for n in _REF]
    text_specs += [T(n, "%(1)s") for n in _KEEP_TEXT]
    text_specs += [T(n, "") for n in _DROP]
    text_specs += [T(n, value) for n, value in _SYMBOLS.items()]
    text_specs += [T(n, text) for n, (_, text) in _ARGUMENT_TEXT.items()]
    # A line break is a word break, not nothing ("a\newline b").
    text_specs.append(T("newline", " "))
    text_db.add_context_category("papergym", macros=text_specs, prepend=True)
    return walker_db, text_db


def _convert(latex: str, cite_keys: bool = False) -> str:
    walker_db, text_db = _contexts(cite_keys)
    walker = latexwalker.LatexWalker(latex, latex_context=walker_db, tolerant_parsing=True)
    nodes, _, _ = walker.get_latex_nodes()
    converter = latex2text.LatexNodes2Text(latex_context=text_db, math_mode="text")
    return str(converter.nodelist_to_text(nodes))


_MARKUP = re.compile(r"\\[A-Za-z@]+\*?(\[[^\]]*\])?|[{}$]")


def strip_markup(latex: str) -> str:
    """Last-resort conversion: drop control words, braces and math shifts."""
    return _MARKUP.sub(" ", latex)


def latex_to_text(latex: str, *, cite_keys: bool = False) -> str:
    """Readable plain text from a LaTeX fragment; never raises.

    ``cite_keys``: citations become ``\\cite{keys}`` instead of ``[cite]``.
    """
    try:
        return normalize_text(_convert(latex, cite_keys))
    except Exception:  # pylatexenc raises assorted errors on odd input; degrade per paragraph
        pieces = []
        for paragraph in re.split(r"\n\s*\n", latex):
            try:
                pieces.append(_convert(paragraph, cite_keys))
            except Exception:
                pieces.append(strip_markup(paragraph))
        return normalize_text("\n\n".join(pieces))


def normalize_text(text: str) -> str:
    """Collapse white space inside lines, keep paragraph breaks, drop empty lines' padding."""
    text = text.replace("\xa0", " ").replace("\u200b", "")
    # Source line breaks inside a paragraph are not meaningful; indented lines (display math,
    # list items as pylatexenc lays them out) keep theirs.
    text = re.sub(r"(?<=\S)[ \t]*\n(?:\t+| {0,3})(?=[^\s*])", " ", text)
    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.splitlines()]
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    text = re.sub(r" +([,.;:!?)])", r"\1", text)  # "word ." left where a macro vanished
    return text.strip()


def inline_text(latex: str) -> str:
    """Text for a one-line field such as a title or a heading."""
    return re.sub(r"\s+", " ", latex_to_text(latex.replace("\\\\", " "))).strip()
