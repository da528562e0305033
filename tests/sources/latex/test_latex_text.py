"""LaTeX → clean text: user macros, math, citations, links, unknown commands."""

from __future__ import annotations

import re
import time
from pathlib import Path

from papergym.sources.latex import latex_to_text, read_latex_paper
from papergym.sources.latex.macros import MacroExpander, collect_macros


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def section_text(tmp_path: Path, body: str, preamble: str = "", **files: str) -> str:
    main = (
        f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n"
        f"\\section{{S}}\n{body}\n\\end{{document}}\n"
    )
    doc = read_latex_paper(write(tmp_path, {"main.tex": main, **files}))
    return doc.sections[0].text


def test_newcommand_without_args(tmp_path: Path) -> None:
    text = section_text(tmp_path, "We use \\model.", "\\newcommand{\\model}{Celerite}")
    assert text == "We use Celerite."


def test_macro_followed_by_space_keeps_the_space(tmp_path: Path) -> None:
    text = section_text(tmp_path, "\\pysr was fast.", "\\newcommand{\\pysr}{\\textsc{PySR}}")
    assert text == "PySR was fast."


def test_newcommand_with_args(tmp_path: Path) -> None:
    text = section_text(tmp_path, "Pair \\pair{a}{b}.", "\\newcommand{\\pair}[2]{(#1, #2)}")
    assert text == "Pair (a, b)."


def test_newcommand_optional_default_arg(tmp_path: Path) -> None:
    text = section_text(
        tmp_path, "\\greet{} and \\greet[You].", "\\newcommand{\\greet}[1][World]{Hello #1}"
    )
    assert text == "Hello World and Hello You."


def test_def_without_params(tmp_path: Path) -> None:
    assert section_text(tmp_path, "Say \\foo.", "\\def\\foo{FooText}") == "Say FooText."


def test_def_with_param(tmp_path: Path) -> None:
    assert section_text(tmp_path, "Call \\wrap{x}.", "\\def\\wrap#1{W(#1)}") == "Call W(x)."


def test_declare_math_operator(tmp_path: Path) -> None:
    text = section_text(
        tmp_path, "$\\argmax_x f(x)$", "\\DeclareMathOperator*{\\argmax}{arg\\,max}"
    )
    assert "arg" in text
    assert "max_x f(x)" in text
    assert "\\" not in text


def test_macros_from_local_sty(tmp_path: Path) -> None:
    text = section_text(
        tmp_path,
        "Use \\mymac here.",
        "\\usepackage{amsmath,mymacros}",
        **{"mymacros.sty": "\\ProvidesPackage{mymacros}\n\\newcommand{\\mymac}{MyMacroText}\n"},
    )
    assert text == "Use MyMacroText here."


def test_macros_from_sty_next_to_main_in_subfolder(tmp_path: Path) -> None:
    main = (
        "\\documentclass{article}\n\\usepackage{defs}\n\\begin{document}\n"
        "\\section{S}\n\\thing.\n\\end{document}\n"
    )
    write(tmp_path, {"src/tex/main.tex": main, "src/tex/defs.sty": "\\def\\thing{ThingText}"})
    assert read_latex_paper(tmp_path).sections[0].text == "ThingText."


def test_sty_outside_paper_folder_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, {"evil.sty": "\\def\\thing{LEAKED}"})
    main = (
        "\\documentclass{article}\n\\usepackage{../evil}\n\\begin{document}\n"
        "\\section{S}\n\\thing x\n\\end{document}\n"
    )
    write(tmp_path, {"paper/main.tex": main})
    assert "LEAKED" not in read_latex_paper(tmp_path / "paper").sections[0].text


def test_recursive_macro_does_not_hang(tmp_path: Path) -> None:
    start = time.monotonic()
    text = section_text(tmp_path, "a \\loop b", "\\newcommand\\loop{\\loop}")
    assert text == "a b"
    assert time.monotonic() - start < 5


def test_exploding_recursive_macro_is_fast_and_spares_other_macros() -> None:
    # \a{\a\a\a\a} multiplied to the depth cap, took seconds and spent the expansion budget.
    macros = collect_macros("\\newcommand\\a{\\a\\a\\a\\a}\n\\newcommand\\pysr{PySR}")
    expander = MacroExpander(macros)
    start = time.monotonic()
    out = expander.expand("\\a then \\pysr is here")
    assert time.monotonic() - start < 1
    assert "PySR is here" in out


def test_mutually_recursive_macros_do_not_hang() -> None:
    expander = MacroExpander(collect_macros("\\def\\x{\\y}\\def\\y{\\x}"))
    assert "\\" in expander.expand("\\x")  # left unexpanded at the loop, not an endless loop


def test_macro_nested_in_its_own_argument_expands() -> None:
    expander = MacroExpander(collect_macros("\\newcommand{\\set}[1]{\\{#1\\}}"))
    assert expander.expand("\\set{\\set{a}}") == "\\{\\{a\\}\\}"


def test_inline_math_stays_readable() -> None:
    assert "α_i^2" in latex_to_text("Let $\\alpha_i^2$ be small.")


def test_citations_and_refs() -> None:
    text = latex_to_text("See \\cite{a,b} and \\citep[p.~3]{c}; Fig.~\\ref{f}, Eq.~\\eqref{e}.")
    assert text == "See [cite] and [cite]; Fig. [ref], Eq. [ref]."


def test_href_keeps_link_text() -> None:
    assert latex_to_text("Code at \\href{https://x.org/a}{our repo}.") == "Code at our repo."


def test_hyperref_keeps_text_not_label() -> None:
    assert latex_to_text("See \\hyperref[sec:a]{the appendix}.") == "See the appendix."


def test_newline_separates_words() -> None:
    assert latex_to_text("first\\newline second") == "first second"


def test_unknown_macro_keeps_argument_text() -> None:
    assert latex_to_text("A \\mysterymacro{kept words} here.") == "A kept words here."


def test_unknown_environment_keeps_text() -> None:
    text = latex_to_text("\\begin{strangebox}{arg}inside words\\end{strangebox}")
    assert "inside words" in text


def test_leftover_input_does_not_break_conversion() -> None:
    # pylatexenc's own \input handler raised on a missing argument, so the text fell back to
    # the crude markup stripper.
    assert latex_to_text("$\\alpha$ \\textbf{bold} \\input") == "α bold"


def test_result_has_no_control_words(tmp_path: Path) -> None:
    body = (
        "\\textbf{Bold} and \\emph{em} with \\footnote{a note} \\label{x}\n"
        "\\begin{itemize}\\item one \\item two\\end{itemize}\n"
        "$\\mathbb{R}^n$, $\\frac{a}{b}$, \\vspace{2mm}\\noindent \\unknown{arg} "
        "\\textit{it} \\url{https://e.org} \\S 3 \\eg this \\newline end"
    )
    text = section_text(tmp_path, body)
    assert not re.search(r"\\[A-Za-z@]+", text), text
    for word in ("Bold", "em", "a note", "one", "two", "arg", "it", "https://e.org", "end"):
        assert word in text
