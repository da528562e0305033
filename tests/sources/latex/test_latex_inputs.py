"""Inlining \\input, \\include, \\subfile, \\import and \\subimport, and what cannot be inlined."""

from __future__ import annotations

import gzip
import io
import tarfile
import time
from pathlib import Path

import papergym
from papergym.sources.latex import read_latex_paper
from papergym.sources.latex.flatten import MAX_INCLUSIONS, FlattenLimits, flatten


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
    flat = flatten(tmp_path, tmp_path / "main.tex", FlattenLimits(max_depth=3))
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


def fan_out_archive(path: Path, mains: int = 1, levels: int = 8, fan: int = 10) -> Path:
    """Each file inputs the next level ``fan`` times: 10^8 expansions from a few hundred bytes."""
    main = document("\\title{Fan}\\section{S}\n" + "\\input{l1}" * fan)
    files = {f"m{i}.tex": main for i in range(mains)} if mains > 1 else {"main.tex": main}
    files.update({f"l{i}.tex": f"\\input{{l{i + 1}}}" * fan for i in range(1, levels)})
    files[f"l{levels}.tex"] = "Leaf text."
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(gzip.compress(buffer.getvalue(), 9))
    return path


def test_input_fan_out_archive_is_bounded_and_says_so(tmp_path: Path) -> None:
    archive = fan_out_archive(tmp_path / "fan.tar.gz")
    assert archive.stat().st_size < 600  # the hostile input is tiny
    started = time.perf_counter()
    [paper] = papergym.ingest(archive)  # before the limit: 10^8 expansions, hours
    assert time.perf_counter() - started < 1.0
    # Inputs are inlined depth first up to the limit, most of them leaves; the rest are skipped.
    assert 1_000 < paper.sections[0].text.count("Leaf text.") < MAX_INCLUSIONS
    [warning] = [w for w in paper.meta.warnings if w.startswith("inputs limited")]
    assert f"after {MAX_INCLUSIONS:,} inlined" in warning


def test_many_candidate_main_files_share_one_input_budget(tmp_path: Path) -> None:
    # 300 complete documents, each inputting the fan-out: every one is flattened to choose the
    # main file, so a per-flattening limit alone would still take 300 times as long.
    archive = fan_out_archive(tmp_path / "fan.tar.gz", mains=300)
    started = time.perf_counter()
    [paper] = papergym.ingest(archive)
    assert time.perf_counter() - started < 3.0
    assert paper.meta.main_file == "m0.tex"
    assert paper.meta.main_file_reason.startswith("300 files have \\documentclass")


def test_character_limit_skips_further_inputs_with_a_warning(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.tex": document("\\section{S}\n\\input{a}\n\\input{b}\n\\input{c}"),
            "a.tex": "A" * 400,
            "b.tex": "B" * 400,
            "c.tex": "C",
        },
    )
    main_chars = len(document("\\section{S}\n\\input{a}\n\\input{b}\n\\input{c}"))
    flat = flatten(tmp_path, tmp_path / "main.tex", FlattenLimits(max_chars=main_chars + 500))
    # a fits; b would pass the limit and is skipped; c still fits after it
    assert "A" * 400 in flat.text and "B" not in flat.text and "C" in flat.text
    assert flat.files == ["main.tex", "a.tex", "c.tex"]
    assert any(w.startswith("inputs limited: 1 further input(s)") for w in flat.warnings)


def test_a_paper_with_hundreds_of_inputs_is_inlined_whole(tmp_path: Path) -> None:
    # A thesis-sized paper: 30 chapters of 20 inputs each, every one distinct, no warning.
    chapters = "".join(f"\\input{{ch{c}/main}}" for c in range(30))
    files: dict[str, str | bytes] = {"main.tex": document("\\section{S}\n" + chapters)}
    for c in range(30):
        files[f"ch{c}/main.tex"] = "".join(f"\\input{{ch{c}/p{p}}}" for p in range(20))
        files.update({f"ch{c}/p{p}.tex": f"C{c}P{p} " for p in range(20)})
    write(tmp_path, files)
    flat = flatten(tmp_path, tmp_path / "main.tex")
    assert flat.inclusions == 630 and "C29P19" in flat.text
    assert not flat.warnings
