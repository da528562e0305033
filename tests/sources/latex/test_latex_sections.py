"""Headings, levels, parent paths, appendix flags, abstract, title and a hand-written References."""

from __future__ import annotations

from pathlib import Path

from papergym.sources.latex import LatexDocument, read_latex_paper


def read(tmp_path: Path, body: str, preamble: str = "") -> LatexDocument:
    main = (
        f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )
    (tmp_path / "main.tex").write_text(main, encoding="utf-8")
    return read_latex_paper(tmp_path)


def outline(doc: LatexDocument) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(s.level, s.heading, s.path) for s in doc.sections]


def test_heading_levels_and_parent_paths(tmp_path: Path) -> None:
    doc = read(
        tmp_path,
        "\\section{Intro}\ni\n\\subsection{Setup}\ns\n\\subsubsection{Data}\nd\n"
        "\\paragraph{Detail}\np\n\\section{Method}\nm\n\\subsection{Model}\nmm",
    )
    assert outline(doc) == [
        (1, "Intro", ()),
        (2, "Setup", ("Intro",)),
        (3, "Data", ("Intro", "Setup")),
        (4, "Detail", ("Intro", "Setup", "Data")),
        (1, "Method", ()),
        (2, "Model", ("Method",)),
    ]
    assert [s.text for s in doc.sections] == ["i", "s", "d", "p", "m", "mm"]


def test_starred_headings(tmp_path: Path) -> None:
    doc = read(tmp_path, "\\section*{Intro}\na\n\\subsection*{Part}\nb")
    assert outline(doc) == [(1, "Intro", ()), (2, "Part", ("Intro",))]


def test_short_optional_title_uses_long_title(tmp_path: Path) -> None:
    doc = read(tmp_path, "\\section[Short]{The Long Title}\ntext")
    assert [s.heading for s in doc.sections] == ["The Long Title"]
    assert doc.sections[0].text == "text"


def test_paragraph_heading_trailing_period_trimmed(tmp_path: Path) -> None:
    doc = read(tmp_path, "\\section{A}\na\n\\paragraph{Key idea.}\nThe idea.")
    assert doc.sections[1].heading == "Key idea"
    assert doc.sections[1].level == 4


def test_preamble_redefining_section_still_yields_headings(tmp_path: Path) -> None:
    preamble = (
        "\\makeatletter\n"
        "\\let\\old@section\\section\n"
        "\\newcommand\\nostarsection[1]{\\old@section{#1}}\n"
        "\\newcommand\\starsection[1]{\\old@section*{#1}}\n"
        "\\renewcommand\\section{\\@ifstar{\\starsection}{\\nostarsection}}\n"
        "\\makeatother\n"
    )
    doc = read(tmp_path, "\\section{Intro}\na\n\\section*{Method}\nb", preamble)
    assert outline(doc) == [(1, "Intro", ()), (1, "Method", ())]


def test_appendix_command_flags_what_follows(tmp_path: Path) -> None:
    doc = read(
        tmp_path,
        "\\section{Intro}\na\n\\appendix\n\\section{Proofs}\nb\n\\subsection{Lemma}\nc",
    )
    assert [(s.heading, s.appendix) for s in doc.sections] == [
        ("Intro", False),
        ("Proofs", True),
        ("Lemma", True),
    ]


def test_starred_appendix_heading_flags_it_and_what_follows(tmp_path: Path) -> None:
    doc = read(
        tmp_path,
        "\\section{Intro}\na\n\\section*{Appendix A: Extra Results}\nb\n\\section{More}\nc",
    )
    assert [(s.heading, s.appendix) for s in doc.sections] == [
        ("Intro", False),
        ("Appendix A: Extra Results", True),
        ("More", True),
    ]


def test_appendices_environment(tmp_path: Path) -> None:
    doc = read(
        tmp_path,
        "\\section{Intro}\na\n\\begin{appendices}\n\\section{Extra}\nb\n\\end{appendices}",
    )
    assert [(s.heading, s.appendix) for s in doc.sections] == [
        ("Intro", False),
        ("Extra", True),
    ]


def test_abstract_environment_not_repeated_in_first_section(tmp_path: Path) -> None:
    abstract = "We study ABSTRACTWORD scaling. " * 15  # long enough to stand as lead text
    doc = read(
        tmp_path,
        f"\\maketitle\n\\begin{{abstract}}\n{abstract}\n\\end{{abstract}}\n\\section{{Intro}}\nintro",
    )
    assert doc.abstract.startswith("We study ABSTRACTWORD scaling.")
    assert all("ABSTRACTWORD" not in s.text for s in doc.sections)
    assert [s.heading for s in doc.sections] == ["Intro"]


def test_abstract_macro(tmp_path: Path) -> None:
    doc = read(tmp_path, "\\abstract{Macro ABSTRACTWORD text.}\n\\section{Intro}\nintro")
    assert doc.abstract == "Macro ABSTRACTWORD text."
    assert all("ABSTRACTWORD" not in s.text for s in doc.sections)


def test_abstract_macro_in_preamble(tmp_path: Path) -> None:
    doc = read(tmp_path, "\\section{Intro}\nintro", preamble="\\abstract{Preamble abstract.}")
    assert doc.abstract == "Preamble abstract."


def test_abstract_definition_is_not_the_abstract(tmp_path: Path) -> None:
    # With no abstract in the body, "\def\abstract#1{...}" in the preamble was read as "#".
    preamble = "\\makeatletter\n\\def\\abstract#1{\\gdef\\@abstract{#1}}\n\\makeatother"
    doc = read(tmp_path, "\\section{Intro}\nshort", preamble)
    assert doc.abstract == ""
    assert "no abstract found" in doc.warnings


def test_title_with_short_form_line_break_and_thanks(tmp_path: Path) -> None:
    doc = read(
        tmp_path,
        "\\maketitle\n\\section{Intro}\nx",
        preamble="\\title[Short]{Long \\\\ title\\thanks{Funded by a grant.}}",
    )
    assert doc.title == "Long title"
    assert "Funded" not in doc.sections[0].text


def test_title_definition_is_not_the_title(tmp_path: Path) -> None:
    # "\def\title#1{...}" in a preamble was read as the title "#".
    preamble = (
        "\\makeatletter\n\\def\\title#1{\\gdef\\@title{#1}}\n\\makeatother\n\\title{Real Title}"
    )
    doc = read(tmp_path, "\\maketitle\n\\section{Intro}\nx", preamble)
    assert doc.title == "Real Title"


def test_title_with_user_macro(tmp_path: Path) -> None:
    preamble = "\\newcommand{\\model}{PySR}\n\\title{\\model: Symbolic Regression}"
    doc = read(tmp_path, "\\section{Intro}\nx", preamble)
    assert doc.title == "PySR: Symbolic Regression"


def test_missing_title_warns(tmp_path: Path) -> None:
    doc = read(tmp_path, "\\section{Intro}\nx")
    assert doc.title == ""
    assert any("no \\title" in w for w in doc.warnings)


def test_handwritten_references_section_dropped(tmp_path: Path) -> None:
    doc = read(
        tmp_path,
        "\\section{Intro}\nx\n\\section*{References}\nSmith, J. CITATIONWORD 2020.",
    )
    assert [s.heading for s in doc.sections] == ["Intro"]
    assert all("CITATIONWORD" not in s.text for s in doc.sections)


def test_section_named_references_to_prior_work_is_kept(tmp_path: Path) -> None:
    doc = read(tmp_path, "\\section{References to prior work}\nx")
    assert [s.heading for s in doc.sections] == ["References to prior work"]
