"""Bibliographies → references: .bib (bibtexparser), .bbl (natbib and biblatex),
thebibliography, a paper's own cited references, and the one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.sources.bib import cited_keys, parse_bib, parse_bibitems, read_bib, references_of
from papergym.sources.latex import read_latex_paper
from support.papers import SHARED_PAPERS, write_paper

BIB = r"""
@string{nips = {Advances in Neural Information Processing Systems}}
@Article{vaswani2017,
  Title = {Attention Is {All} You Need},
  Author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  Year = 2017,
  Journal = nips,
  Abstract = {The dominant sequence transduction models are based on recurrent networks.}
}
@inproceedings{he2016, title={Deep Residual Learning}, author={He, Kaiming}, booktitle={CVPR},
  date={2016-06-01}}
@misc{untitled2020, author = {Nobody, A.}, year = {2020}}
@misc{he2016, title={A duplicate key}}
"""


def test_bib_entries_become_references() -> None:
    parsed = parse_bib(BIB)
    first, second = parsed.references
    assert first.key == "vaswani2017" and first.title == "Attention Is All You Need"
    assert first.authors == ("Vaswani, Ashish", "Shazeer, Noam", "Parmar, Niki")
    assert (
        first.year == "2017" and first.venue == "Advances in Neural Information Processing Systems"
    )
    assert first.abstract and first.abstract.startswith("The dominant")
    assert second.year == "2016" and second.venue == "CVPR" and second.abstract is None
    assert parsed.untitled == ("untitled2020",) and parsed.duplicates == 1


def test_accents_and_case_protection_become_plain_text() -> None:
    [ref] = parse_bib(
        r"@book{a, title={The {Bayesian} Choice}, author={Ivezi{\'c}, {\v{Z}}eljko}}"
    ).references
    assert ref.title == "The Bayesian Choice" and ref.authors == ("Ivezić, Željko",)


def test_only_converts_the_keys_asked_for() -> None:
    parsed = parse_bib(BIB, only={"he2016"})
    assert [r.key for r in parsed.references] == ["he2016"] and parsed.skipped == 2


def test_string_concatenation_is_expanded() -> None:
    # issue 20 #16: `s38 # s38` used to stay as the literal title "s38 # s38"
    text = r"""
@String{s38 = "Sparse"}
@string{full = s38 # { Attention for Long {Documents}}}
@article{a, title = s38 # " " # S38, journal = {Proc. } # full, month = jan, year = 2021}
@article{b, title = {Braced} # " and " # "quoted {"}" # 42, booktitle = undefinedvenue}
"""
    first, second = parse_bib(text).references
    assert first.title == "Sparse Sparse"
    assert first.venue == "Proc. Sparse Attention for Long Documents"
    assert second.title == 'Braced and quoted "42'
    assert second.venue == "undefinedvenue"  # no @string defines it: kept as written


def test_strings_of_an_earlier_bib_file_hold_in_a_later_one(tmp_path: Path) -> None:
    main = "\\documentclass{article}\\begin{document}\\cite{a}\\bibliography{abbrev,refs}\\end{document}"
    root = write_paper(
        tmp_path / "p",
        {
            "main.tex": main,
            "abbrev.bib": '@string{icml = "International Conference on Machine Learning"}\n',
            "refs.bib": "@inproceedings{a, title = {T}, booktitle = {Proc. } # icml}\n",
        },
    )
    [ref] = references_of(root).references
    assert ref.venue == "Proc. International Conference on Machine Learning"


def test_broken_entries_are_counted_with_their_keys_and_lines() -> None:
    text = r"""@article{good, title={A good one}, author={A and B}, year=2020}
@article{nocomma title={no comma after the key}, year=2020}
@article{unclosed, title={never closed, year=2020}
@article{, title={no key}}
@article{glued, title={x} year={2019}}
@article{fine, title={Fine}}
"""
    parsed = parse_bib(text)
    assert [r.key for r in parsed.references] == ["good", "fine"]
    assert parsed.failed_blocks == 4
    assert [(f.line, f.key) for f in parsed.failures] == [
        (2, "nocomma"),
        (3, "unclosed"),
        (4, None),
        (5, "glued"),
    ]
    assert "comma" in parsed.failures[0].reason and "comma missing" in parsed.failures[3].reason
    assert parsed.first_failure.startswith("line 2: ")


def test_an_entry_repeating_a_field_keeps_its_first_value_and_its_place() -> None:
    # bibtexparser fails such an entry (two doi = ...); BibTeX warns and keeps the first value
    text = (
        "@article{a, title={A}}\n@article{b, title={B}, doi={1}, doi={2}}\n@article{c, title={C}}"
    )
    parsed = parse_bib(text)
    assert [r.key for r in parsed.references] == ["a", "b", "c"] and parsed.failed_blocks == 0


def test_limit_converts_only_the_first_titled_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    from papergym.sources import bib

    converted: list[str] = []
    real = bib.latex_to_text
    monkeypatch.setattr(bib, "latex_to_text", lambda t: converted.append(t) or real(t))
    entries = "".join(
        f"@article{{k{i}, title={{Title {i}}}, abstract={{Abstract {i}}}}}\n" for i in range(50)
    )
    parsed = parse_bib("@misc{empty, author={X}}\n" + entries, limit=3)
    assert [r.key for r in parsed.references] == ["k0", "k1", "k2"]
    assert parsed.usable == 50 and "k49" in parsed.keys and parsed.untitled == ("empty",)
    assert not any("Abstract 3" in t or "Title 3" in t for t in converted)


def test_reading_in_pieces_gives_what_reading_at_once_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from papergym.sources import bib

    text = (
        '@string{v = "Venue"}\n'
        + "".join(
            f"@article{{k{i},\n  title = {{Title {{{i}}}}},\n  journal = v # {{ {i}}}\n}}\n"
            for i in range(40)
        )
        + "@article{broken, title={never closed\n"
        + "".join(f"@misc{{m{i}, title={{M {i}}}}}\n" for i in range(10))
        + "@article{k3, title={a repeated key}}\n"
    )
    whole = parse_bib(text)
    monkeypatch.setattr(bib, "CHUNK_CHARS", 100)
    assert len(list(bib._chunks(text))) > 10
    pieces = parse_bib(text)
    assert pieces == whole
    assert whole.usable == 50 and whole.duplicates == 1 and whole.references[7].venue == "Venue 7"
    assert [(f.line, f.key) for f in whole.failures] == [(162, "broken")]


def test_fewer_usable_entries_than_the_minimum_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(
        "@article{ok, title={Fine}}\n@article{bad title={x}}\n@article{b2, title={y} z}\n",
        encoding="utf-8",
    )
    assert read_bib(path).usable == 1  # the default minimum is one
    with pytest.raises(BadInputError) as error:
        read_bib(path, minimum=3)
    message = str(error.value)
    assert str(path) in message and "\n" not in message
    assert "only 1 usable reference, fewer than the 3 needed" in message
    assert "2 entries could not be parsed (first at line 2:" in message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            "@article{a, title={Broken, author={X}\n@article{b, author={Y}",
            "(2 entries failed; first at line 1: Unexpected block start",
        ),
        ("@article{a, title = {never closed\n", "does not parse as BibTeX (1 entry failed"),
        ("just some notes, no entries at all\n", "no BibTeX entries"),
        (
            "@misc{a, author={X}}\n@misc{b, year={2020}}\n",
            "no BibTeX entry with a title (2 without one)",
        ),
    ],
)
def test_unusable_bib_is_one_line(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInputError) as error:
        read_bib(path)
    message = str(error.value)
    assert str(path) in message and reason in message and "\n" not in message


def test_some_untitled_entries_are_dropped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    parsed = read_bib(path)
    assert len(parsed.references) == 2 and len(parsed.untitled) == 1


NATBIB_ITEMS = r"""
\bibitem[Abadi et~al.(2016)Abadi, Agarwal]{abadi2016}
M.~Abadi, A.~Agarwal, and P.~Barham.
\newblock Tensorflow: Large-scale machine learning.
\newblock \emph{arXiv preprint arXiv:1603.04467}, 2016.

\bibitem{knuth} D. Knuth, The Art of Computer Programming, Addison-Wesley, 1968.
"""


def test_bibitems_natbib_blocks_and_hand_written() -> None:
    first, second = parse_bibitems(NATBIB_ITEMS).references
    assert first.key == "abadi2016" and first.title == "Tensorflow: Large-scale machine learning"
    assert first.authors == ("M. Abadi", "A. Agarwal", "P. Barham") and first.year == "2016"
    assert first.venue and "arXiv" in first.venue
    # no \newblock: the whole item stands as the title
    assert second.key == "knuth" and "Art of Computer Programming" in second.title
    assert second.year == "1968" and second.origin == "thebibliography"


def test_biblatex_bbl() -> None:
    bbl = r"""
    \entry{smith2020}{article}{}
      \name{author}{1}{}{{{}{family={Smith}, given={Jane}}}}
      \field{title}{A {Study} of Things}
      \field{journaltitle}{Journal of Things}
      \field{year}{2020}
    \endentry
    """
    [ref] = parse_bibitems(bbl, "bbl").references
    assert (ref.key, ref.title, ref.authors, ref.year, ref.venue, ref.origin) == (
        "smith2020", "A Study of Things", ("Smith",), "2020", "Journal of Things", "bbl",
    )  # fmt: skip


MAIN = r"""\documentclass{article}
\title{Routing Attention}
\begin{document}
\begin{abstract}We route attention.\end{abstract}
\section{Introduction}
Transformers \citep[see][p.~3]{vaswani2017} and residual nets \cite{he2016, missing1} matter.
\bibliography{refs}
\end{document}
"""


def test_references_of_a_paper_keeps_cited_ones_in_order(tmp_path: Path) -> None:
    extra = "@article{uncited, title={Never cited}}\n"
    root = write_paper(tmp_path / "p", {"main.tex": MAIN, "refs.bib": BIB + extra})
    refs = references_of(root)
    assert [r.key for r in refs.references] == ["vaswani2017", "he2016"]
    assert refs.files == ("refs.bib",) and refs.origin == "bib"
    assert refs.cited == ("vaswani2017", "he2016", "missing1") and refs.missing == ("missing1",)
    assert refs.uncited == 2  # "uncited" and "untitled2020" were never read


def test_references_of_falls_back_to_bbl_then_thebibliography(tmp_path: Path) -> None:
    body = MAIN.replace("\\bibliography{refs}", "")
    inline = body.replace(
        "\\end{document}",
        "\\begin{thebibliography}{9}\n"
        + NATBIB_ITEMS.replace("abadi2016", "vaswani2017")
        + "\\end{thebibliography}\n\\end{document}",
    )
    root = write_paper(tmp_path / "inline", {"main.tex": inline})
    refs = references_of(root)
    assert refs.origin == "thebibliography" and [r.key for r in refs.references] == ["vaswani2017"]
    root = write_paper(tmp_path / "bbl", {"main.tex": MAIN, "main.bbl": NATBIB_ITEMS})
    refs = references_of(root)  # refs.bib is missing: the .bbl LaTeX made from it is read
    assert refs.origin == "bbl" and refs.warnings == ("bibliography refs.bib not found",)
    root = write_paper(tmp_path / "none", {"main.tex": body})
    refs = references_of(root)
    assert refs.origin is None and not refs.references and refs.warnings


def test_cite_keys_survive_in_text_only_when_asked(tmp_path: Path) -> None:
    root = write_paper(tmp_path / "p", {"main.tex": MAIN, "refs.bib": BIB})
    plain = read_latex_paper(root)
    keyed = read_latex_paper(root, cite_keys=True)
    assert "[cite]" in plain.sections[0].text and "\\cite" not in plain.sections[0].text
    assert "\\cite{vaswani2017}" in keyed.sections[0].text
    assert "\\cite{he2016,missing1}" in keyed.sections[0].text
    assert cited_keys(MAIN) == ["vaswani2017", "he2016", "missing1"]


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_PAPERS.is_dir(), reason="../shared/papers is absent")
def test_real_papers_have_references() -> None:
    found = {}
    for paper in sorted(p for p in SHARED_PAPERS.iterdir() if p.is_dir()):
        refs = references_of(paper)
        found[paper.name] = refs
        assert all(r.title for r in refs.references)
    with_refs = [name for name, refs in found.items() if refs.references]
    assert len(with_refs) >= len(found) - 1  # every real paper cites something we can read
