"""What ``papergym review`` reads: text and markdown papers, LaTeX papers, folders of either."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.review.papers import load_papers, paper_id_of
from support.papers import MINIMAL_MAIN, write_paper

APPENDIX_MAIN = MINIMAL_MAIN.replace(
    r"\end{document}", "\\appendix\n\\section{Proofs}\nThe proof is short.\n\\end{document}"
)


def test_review_papers_ids_drop_the_suffix() -> None:
    assert paper_id_of(Path("-29uFS4FiDZ.txt")) == "-29uFS4FiDZ"
    assert paper_id_of(Path("2401.01234.tar.gz")) == "2401.01234"
    assert paper_id_of(Path("draft.md")) == "draft" and paper_id_of(Path("folder")) == "folder"


def test_review_papers_folder_of_texts_and_a_latex_paper(tmp_path: Path) -> None:
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "b.txt").write_text("Paper B text.", encoding="utf-8")
    (tmp_path / "texts" / "a.md").write_text("# Paper A\n\nText.", encoding="utf-8")
    latex = write_paper(tmp_path / "latex", {"main.tex": APPENDIX_MAIN})
    papers = load_papers([tmp_path / "texts", latex])
    assert [p.paper_id for p in papers] == ["a", "b", "latex"]
    text = papers[2].text
    assert text.startswith("# A Minimal Paper") and "Abstract" in text
    assert "## Introduction" in text and "## Appendix\n\n## Proofs" in text


def test_review_papers_a_folder_of_latex_papers(tmp_path: Path) -> None:
    write_paper(tmp_path / "many" / "one", {"main.tex": MINIMAL_MAIN})
    write_paper(tmp_path / "many" / "two", {"main.tex": MINIMAL_MAIN.replace("small", "big")})
    assert [p.paper_id for p in load_papers([tmp_path / "many"])] == ["one", "two"]


def test_review_papers_refuse_a_folder_without_papers(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInputError, match="empty folder"):
        load_papers([tmp_path / "empty"])


def test_review_papers_a_stray_nul_in_extracted_text_is_dropped_not_refused(
    tmp_path: Path,
) -> None:
    text = ("We study patches. " * 300).encode()
    path = tmp_path / "extracted.txt"
    path.write_bytes(text[:100] + b"\x00" + text[100:200] + b"\x00" + text[200:])
    (paper,) = load_papers([path])
    assert "\x00" not in paper.text and paper.text.startswith("We study patches.")
    utf16 = tmp_path / "utf16.txt"
    utf16.write_bytes("We study patches.".encode("utf-16-le") * 20)
    with pytest.raises(BadInputError, match="binary file"):
        load_papers([utf16])
