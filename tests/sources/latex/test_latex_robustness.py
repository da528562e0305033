"""Property checks: the LaTeX reader never crashes or hangs on arbitrary text."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from papergym.errors import BadInputError
from papergym.sources.latex import latex_to_text, read_latex_paper
from papergym.sources.latex.blocks import remove_iffalse
from papergym.sources.latex.scan import strip_comments

# Pieces of LaTeX that exercise the reader's parsers: groups, conditionals, inputs, macros.
TOKENS = [
    "\\section", "\\section*", "\\subsection", "\\appendix", "{", "}", "[", "]", "$", "%",
    "\\%", "\\\\", "\\", "\\iffalse", "\\ifx", "\\else", "\\fi", "\\let\\ifa\\iffalse",
    "\\begin{document}", "\\end{document}", "\\documentclass{article}", "\\begin{abstract}",
    "\\end{abstract}", "\\begin{figure}", "\\end{figure}", "\\caption", "\\input", "\\input{a}",
    "\\include{b}", "\\subfile{a}", "\\import{x}", "\\newcommand", "\\newcommand{\\m}[1]{#1\\m}",
    "\\def\\m#1{\\m{#1}}", "\\m", "#1", "#", "\\title", "\\abstract", "\\cite", "\\href",
    "\\begin{comment}", "\\end{comment}", "\\verb|", "\\begin{x}", "\\end{x}", "&", "^", "_",
    " ", "\n", "\n\n", "a", "é", "word", "\\item", "\\label{l}", "\\thanks",
]  # fmt: skip
latexish = st.lists(st.sampled_from(TOKENS), max_size=30).map("".join)
any_text = st.one_of(latexish, st.text(max_size=200))
SETTINGS = settings(max_examples=50, deadline=None)


@SETTINGS
@given(any_text)
def test_latex_to_text_never_raises(text: str) -> None:
    assert isinstance(latex_to_text(text), str)


@SETTINGS
@given(any_text)
def test_strip_comments_terminates_and_leaves_no_comment(text: str) -> None:
    out = strip_comments(text)
    assert len(out) <= len(text)
    assert strip_comments(out) == out  # nothing left that is still a comment


@SETTINGS
@given(any_text)
def test_remove_iffalse_terminates(text: str) -> None:
    assert len(remove_iffalse(text)) <= len(text)


@SETTINGS
@given(main=any_text, other=latexish)
def test_read_latex_paper_raises_only_bad_input(main: str, other: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "main.tex").write_bytes(main.encode("utf-8", "surrogatepass"))
        (root / "a.tex").write_text(other, encoding="utf-8")
        for given_main in (None, root / "main.tex"):
            with contextlib.suppress(BadInputError):
                read_latex_paper(root, main_file=given_main)
