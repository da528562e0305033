"""What never reaches the text: comments, \\iffalse blocks, preamble, bibliography, float bodies."""

from __future__ import annotations

from pathlib import Path

from papergym.sources.latex import read_latex_paper
from papergym.sources.latex.blocks import remove_iffalse
from papergym.sources.latex.scan import strip_comments


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def section_text(tmp_path: Path, body: str, preamble: str = "") -> str:
    """The text of the one section of a paper whose body is ``\\section{S}`` + ``body``."""
    main = (
        f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n"
        f"\\section{{S}}\n{body}\n\\end{{document}}\n"
    )
    doc = read_latex_paper(write(tmp_path, {"main.tex": main}))
    assert [s.heading for s in doc.sections] == ["S"]
    return doc.sections[0].text


def test_comment_dropped_to_end_of_line(tmp_path: Path) -> None:
    assert section_text(tmp_path, "kept % dropped words\nnext line") == "kept next line"


def test_escaped_percent_is_a_percent_sign(tmp_path: Path) -> None:
    assert section_text(tmp_path, "50\\% of runs % a comment") == "50% of runs"


def test_escaped_backslash_before_percent_still_starts_comment() -> None:
    assert strip_comments("a\\\\% gone\nb") == "a\\\\\nb"


def test_whole_line_comment_vanishes() -> None:
    assert strip_comments("a\n% only a comment\nb\n") == "a\nb\n"


def test_iffalse_block_dropped(tmp_path: Path) -> None:
    assert section_text(tmp_path, "before \\iffalse HIDDEN \\fi after") == "before after"


def test_iffalse_with_nested_conditional_dropped_whole(tmp_path: Path) -> None:
    text = section_text(tmp_path, "a \\iffalse X \\ifnum1=1 Y \\fi Z \\fi b")
    assert text == "a b"


def test_iffalse_else_keeps_else_branch(tmp_path: Path) -> None:
    assert section_text(tmp_path, "a \\iffalse DROP \\else KEEP \\fi b") == "a KEEP b"


def test_let_to_iffalse_is_not_a_block(tmp_path: Path) -> None:
    # "\let\ifdraft\iffalse" used to open a block that swallowed the rest of the paper.
    text = section_text(
        tmp_path, "Visible body text.", preamble="\\newif\\ifdraft\n\\let\\ifdraft\\iffalse"
    )
    assert text == "Visible body text."


def test_iffalse_inside_definition_is_not_a_block() -> None:
    text = "\\def\\hide{\\iffalse}\nbody text\n\\section{Next}\nmore"
    assert remove_iffalse(text) == text


def test_unclosed_iffalse_drops_to_end() -> None:
    assert remove_iffalse("keep \\iffalse gone") == "keep "


def test_comment_environment_dropped(tmp_path: Path) -> None:
    body = "before\n\\begin{comment}\nHIDDEN\n\\end{comment}\nafter"
    assert section_text(tmp_path, body).split() == ["before", "after"]


def test_preamble_text_never_in_sections(tmp_path: Path) -> None:
    main = (
        "\\documentclass{article}\nPREAMBLEWORDS here\n\\begin{document}\nLead text.\n"
        "\\section{S}\nbody\n\\end{document}\n"
    )
    doc = read_latex_paper(write(tmp_path, {"main.tex": main}))
    assert all("PREAMBLEWORDS" not in s.text for s in doc.sections)
    assert "PREAMBLEWORDS" not in doc.abstract


def test_thebibliography_dropped(tmp_path: Path) -> None:
    body = (
        "text \\cite{a}\n\\begin{thebibliography}{9}\n"
        "\\bibitem{a} Author, BIBENTRY title, 1999.\n\\end{thebibliography}"
    )
    assert section_text(tmp_path, body) == "text [cite]"


def test_bibtex_bibliography_commands_dropped(tmp_path: Path) -> None:
    body = "text\n\\bibliographystyle{plainnat}\n\\bibliography{refs,more}"
    assert section_text(tmp_path, body) == "text"


def test_biblatex_printbibliography_dropped(tmp_path: Path) -> None:
    body = "text\n\\printbibliography[heading=bibintoc]"
    text = section_text(
        tmp_path, body, preamble="\\usepackage{biblatex}\n\\addbibresource{refs.bib}"
    )
    assert text == "text"


def test_figure_keeps_caption_only(tmp_path: Path) -> None:
    body = (
        "\\begin{figure}\n\\centering\n\\includegraphics[width=\\linewidth]{plot.pdf}\n"
        "\\caption{Loss falls with scale.}\n\\label{fig:loss}\n\\end{figure}"
    )
    assert section_text(tmp_path, body) == "Figure: Loss falls with scale."


def test_starred_figure_keeps_caption(tmp_path: Path) -> None:
    body = "\\begin{figure*}\\includegraphics{a}\\caption{Wide figure.}\\end{figure*}"
    assert section_text(tmp_path, body) == "Figure: Wide figure."


def test_table_caption_kept_numbers_dropped(tmp_path: Path) -> None:
    body = (
        "\\begin{table}\n\\caption{Accuracy by model.}\n\\begin{tabular}{lr}\n"
        "Model & 98765 \\\\\nOther & 43210\n\\end{tabular}\n\\end{table}"
    )
    text = section_text(tmp_path, body)
    assert text == "Table: Accuracy by model."
    assert "98765" not in text


def test_algorithm_caption_kept_body_dropped(tmp_path: Path) -> None:
    body = (
        "\\begin{algorithm}\n\\caption{Greedy search.}\n\\begin{algorithmic}\n"
        "\\STATE STEPWORD $x \\gets 1$\n\\end{algorithmic}\n\\end{algorithm}"
    )
    assert section_text(tmp_path, body) == "Algorithm: Greedy search."


def test_float_without_caption_leaves_nothing(tmp_path: Path) -> None:
    body = "a\n\\begin{figure}\\includegraphics{x}\\end{figure}\nb"
    assert section_text(tmp_path, body).split() == ["a", "b"]
