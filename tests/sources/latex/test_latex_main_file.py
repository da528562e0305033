"""Choosing a paper's main .tex file among several candidates, and reading a lone fragment."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.sources.latex import read_latex_paper


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def document(body: str, preamble: str = "") -> str:
    return (
        f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    )


PROSE = "Words of the real paper body. " * 40


def test_candidate_reaching_most_content_through_inputs_wins(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            # a.tex is short itself but inputs the paper's text; b.tex is longer on its own.
            "a.tex": document("\\section{Intro}\n\\input{body}"),
            "b.tex": document("\\section{Stub}\n" + "Stub text. " * 30),
            "body.tex": PROSE,
        },
    )
    doc = read_latex_paper(tmp_path)
    assert doc.main_file == "a.tex"
    assert doc.files == ["a.tex", "body.tex"]


def test_reason_names_the_choice_and_the_other_candidates(tmp_path: Path) -> None:
    write(tmp_path, {"a.tex": document("\\section{A}\n" + PROSE), "b.tex": document("x")})
    doc = read_latex_paper(tmp_path)
    assert doc.main_file == "a.tex"
    assert "a.tex reaches the most content" in doc.main_file_reason
    assert "2 files have" in doc.main_file_reason
    assert "b.tex" in doc.main_file_reason


def test_single_candidate_reason(tmp_path: Path) -> None:
    write(tmp_path, {"paper.tex": document("\\section{A} text"), "sec.tex": "\\section{B}"})
    doc = read_latex_paper(tmp_path)
    assert doc.main_file == "paper.tex"
    assert "only file" in doc.main_file_reason


def test_candidate_in_drafts_folder_loses_even_when_bigger(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "paper.tex": document("\\section{Current}\nshort current text"),
            "drafts/main.tex": document("\\section{Old}\n" + PROSE * 3),
        },
    )
    doc = read_latex_paper(tmp_path)
    assert doc.main_file == "paper.tex"
    assert [s.heading for s in doc.sections] == ["Current"]
    # The reason must not claim the winner reaches the most content overall: it says why.
    assert "drafts/main.tex" in doc.main_file_reason
    assert "drafts folder" in doc.main_file_reason


def test_subfiles_documents_are_not_candidates(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{Intro}\nmain text"),
            "chapter.tex": "\\documentclass[main.tex]{subfiles}\n\\begin{document}\n"
            + PROSE * 3
            + "\n\\end{document}\n",
        },
    )
    doc = read_latex_paper(tmp_path)
    assert doc.main_file == "main.tex"
    assert "only file" in doc.main_file_reason


def test_fragment_without_documentclass_reads_with_warning(tmp_path: Path) -> None:
    write(tmp_path, {"frag.tex": "\\section{Intro}\nHello fragment world.\n"})
    doc = read_latex_paper(tmp_path)
    assert doc.main_file == "frag.tex"
    assert [s.heading for s in doc.sections] == ["Intro"]
    assert doc.sections[0].text == "Hello fragment world."
    assert any("document fragment" in w for w in doc.warnings)
    assert "fragment" in doc.main_file_reason


def test_folder_without_tex_is_bad_input(tmp_path: Path) -> None:
    write(tmp_path, {"notes.txt": "hello"})
    with pytest.raises(BadInputError, match=r"no \.tex file"):
        read_latex_paper(tmp_path)


def test_given_main_file_skips_the_search(tmp_path: Path) -> None:
    write(tmp_path, {"a.tex": document("\\section{A} a"), "b.tex": document("\\section{B} b")})
    doc = read_latex_paper(tmp_path, main_file=tmp_path / "b.tex")
    assert doc.main_file == "b.tex"
    assert doc.main_file_reason == "given as the source"
    assert [s.heading for s in doc.sections] == ["B"]
