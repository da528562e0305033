"""Inlining \\input, \\include, \\subfile, \\import and \\subimport, and what cannot be inlined."""

from __future__ import annotations

from pathlib import Path

from papergym.sources.latex import read_latex_paper
from papergym.sources.latex.flatten import flatten


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def document(body: str) -> str:
    return f"\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"


def body_text(root: Path) -> str:
    doc = read_latex_paper(root)
    return "\n".join(s.text for s in doc.sections)


def test_input_without_extension(tmp_path: Path) -> None:
    write(tmp_path, {"main.tex": document("\\section{S}\n\\input{part}"), "part.tex": "PARTTEXT"})
    assert "PARTTEXT" in body_text(tmp_path)


def test_input_with_extension(tmp_path: Path) -> None:
    write(
        tmp_path, {"main.tex": document("\\section{S}\n\\input{part.tex}"), "part.tex": "EXTTEXT"}
    )
    assert "EXTTEXT" in body_text(tmp_path)


def test_include(tmp_path: Path) -> None:
    write(tmp_path, {"main.tex": document("\\section{S}\n\\include{chap}"), "chap.tex": "INCLUDED"})
    assert "INCLUDED" in body_text(tmp_path)


def test_bare_tex_input_syntax(tmp_path: Path) -> None:
    write(tmp_path, {"main.tex": document("\\section{S}\n\\input part\nafter"), "part.tex": "BARE"})
    text = body_text(tmp_path)
    assert "BARE" in text
    assert "after" in text


def test_subfile_takes_document_body_only(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\n\\subfile{chapters/one}"),
            "chapters/one.tex": "\\documentclass[../main.tex]{subfiles}\n"
            "\\newcommand{\\unused}{PREAMBLETEXT}\n"
            "\\begin{document}\nSUBBODY\n\\end{document}\nAFTEREND\n",
        },
    )
    text = body_text(tmp_path)
    assert "SUBBODY" in text
    assert "PREAMBLETEXT" not in text
    assert "AFTEREND" not in text


def test_import_resolves_in_its_folder_and_nested_inputs_there(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\n\\import{parts/}{a}"),
            "parts/a.tex": "IMPORTED \\input{b}",
            "parts/b.tex": "NESTEDINIMPORT",
            "b.tex": "WRONGB",
        },
    )
    text = body_text(tmp_path)
    assert "IMPORTED" in text
    assert "NESTEDINIMPORT" in text
    assert "WRONGB" not in text


def test_subimport_is_relative_to_the_including_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\n\\input{sec/intro}"),
            "sec/intro.tex": "INTRO \\subimport{figs/}{plot.tex}",
            "sec/figs/plot.tex": "SUBIMPORTED",
            "figs/plot.tex": "WRONGPLOT",
        },
    )
    text = body_text(tmp_path)
    assert "SUBIMPORTED" in text
    assert "WRONGPLOT" not in text


def test_nested_three_levels_resolve_from_main_folder(tmp_path: Path) -> None:
    # LaTeX resolves \input against the main file's folder, not the including file's.
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\n\\input{sections/one}"),
            "sections/one.tex": "ONE \\input{sections/two}",
            "sections/two.tex": "TWO \\input{sections/deep/three}",
            "sections/deep/three.tex": "THREE",
        },
    )
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].text == "ONE TWO THREE"
    assert doc.files == [
        "main.tex",
        "sections/one.tex",
        "sections/two.tex",
        "sections/deep/three.tex",
    ]
    assert not doc.warnings or all("unresolved" not in w for w in doc.warnings)


def test_input_relative_to_including_file_as_fallback(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\n\\input{sections/one}"),
            "sections/one.tex": "ONE \\input{sibling}",
            "sections/sibling.tex": "SIBLING",
        },
    )
    assert "SIBLING" in body_text(tmp_path)


def test_input_cycle_warns_and_stops(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\n\\input{a}"),
            "a.tex": "AAA \\input{b}",
            "b.tex": "BBB \\input{a}",
        },
    )
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].text == "AAA BBB"
    assert any("cycle" in w and "a.tex" in w for w in doc.warnings)


def test_depth_cap_warns(tmp_path: Path) -> None:
    files = {"main.tex": document("\\section{S}\n\\input{f0}")}
    for i in range(6):
        files[f"f{i}.tex"] = f"L{i} \\input{{f{i + 1}}}"
    files["f6.tex"] = "BOTTOM"
    write(tmp_path, files)
    flat = flatten(tmp_path, tmp_path / "main.tex", max_depth=3)
    assert "L2" in flat.text
    assert "BOTTOM" not in flat.text
    assert any("nested deeper than 3" in w for w in flat.warnings)


def test_unresolved_input_warns_naming_it_and_its_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\nbefore \\input{sec/a} after"),
            "sec/a.tex": "IN A \\input{missing/file}",
        },
    )
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].text == "before IN A after"
    assert "unresolved \\input{missing/file} in sec/a.tex" in doc.warnings


def test_input_outside_paper_folder_is_skipped_even_if_it_exists(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "secret.tex": "SECRET",
            "paper/main.tex": document("\\section{S}\nx \\input{../secret} y"),
        },
    )
    doc = read_latex_paper(tmp_path / "paper")
    assert "SECRET" not in doc.sections[0].text
    assert any("../secret" in w and "outside the paper folder" in w for w in doc.warnings)
    assert doc.files == ["main.tex"]


def test_absolute_input_outside_folder_is_skipped(tmp_path: Path) -> None:
    secret = write(tmp_path, {"secret.tex": "SECRET"}) / "secret.tex"
    write(tmp_path, {"paper/main.tex": document(f"\\section{{S}}\nx \\input{{{secret}}} y")})
    doc = read_latex_paper(tmp_path / "paper")
    assert "SECRET" not in doc.sections[0].text
    assert any("outside the paper folder" in w for w in doc.warnings)


def test_binary_input_warns_and_is_not_listed_as_read(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\nx \\input{fig.tex} y"),
            "fig.tex": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
        },
    )
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].text == "x y"
    assert any("fig.tex" in w and "binary" in w for w in doc.warnings)
    # files lists what went into the paper; the skipped binary did not.
    assert doc.files == ["main.tex"]


def test_input_in_macro_definition_is_not_a_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"main.tex": document("\\newcommand{\\inc}[1]{\\input{#1}}\n\\section{S}\nplain text")},
    )
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].text == "plain text"
    assert not any("unresolved" in w for w in doc.warnings)


def test_input_file_whose_name_is_a_macro_is_left_out_quietly(tmp_path: Path) -> None:
    write(tmp_path, {"main.tex": document("\\section{S}\nx \\input{\\jobname.aux} y")})
    doc = read_latex_paper(tmp_path)
    assert doc.sections[0].text.split() == ["x", "y"]
