"""Source files as text: UTF-8, a latin-1 fallback, and binary files named .tex."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.sources.latex import read_latex_paper

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00"
MAIN = "\\documentclass{article}\n\\begin{document}\n\\section{Résumé}\nCafé déjà vu.\n\\end{document}\n"


def test_utf8_source(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_bytes(MAIN.encode("utf-8"))
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].heading == "Résumé"
    assert doc.sections[0].text == "Café déjà vu."


def test_latin1_source_falls_back(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_bytes(MAIN.encode("latin-1"))
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].heading == "Résumé"
    assert doc.sections[0].text == "Café déjà vu."


def test_latin1_input_file(tmp_path: Path) -> None:
    main = "\\documentclass{article}\n\\begin{document}\n\\section{S}\n\\input{part}\n\\end{document}\n"
    (tmp_path / "main.tex").write_text(main, encoding="utf-8")
    (tmp_path / "part.tex").write_bytes("naïve é".encode("latin-1"))
    assert read_latex_paper(tmp_path).sections[0].text == "naïve é"


def test_binary_main_given_directly_is_refused(tmp_path: Path) -> None:
    (tmp_path / "paper.tex").write_bytes(PNG)
    with pytest.raises(BadInputError, match="binary") as info:
        read_latex_paper(tmp_path, main_file=tmp_path / "paper.tex")
    assert info.value.path is not None and info.value.path.endswith("paper.tex")


def test_folder_with_only_binary_tex_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_bytes(PNG)
    with pytest.raises(BadInputError, match=r"main\.tex: binary file"):
        read_latex_paper(tmp_path)


def test_binary_tex_beside_real_paper_is_skipped_with_warning(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_bytes(MAIN.encode("utf-8"))
    (tmp_path / "junk.tex").write_bytes(PNG)
    doc = read_latex_paper(tmp_path)
    assert doc.main_file == "main.tex"
    assert doc.sections[0].heading == "Résumé"
    assert "skipped junk.tex: binary file, not text" in doc.warnings
