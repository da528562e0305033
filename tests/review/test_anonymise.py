"""Anonymisation on synthetic papers: camera-ready and submission marks go, the science stays."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from papergym.review.anonymise import anonymise

ABSTRACT = (
    "We study the convergence of stochastic gradient methods for sparse models and show that\n"
    "a simple reweighting of the updates gives faster rates than the methods in the literature,\n"
    "with experiments on three benchmarks that confirm the analysis in practice."
)
BODY = (
    "1 INTRODUCTION\n\n"
    "Sparse models are common in practice and their training is slow. We analyse the problem\n"
    "and the correspondence between the two formulations is exact in our setting.\n\n"
    "2 METHOD\n\nThe method reweights each update by the inverse of its variance estimate."
)

CAMERA_READY = f"""Published as a conference paper at ICLR 2031

# FAST SPARSE TRAINING
## WITH REWEIGHTED UPDATES

**Ada Quill[1]** **Bo Tern[2]**
1University of Nowhere, 2Acme Research Lab
{{ada,bo}}@nowhere.edu

ABSTRACT

{ABSTRACT}

{BODY}

_∗Equal contribution._
_†Work done while at Acme Research._

Our code is available at https://github.com/adaquill/fastsparse. We build on
the public implementation of prior work (https://github.com/otherlab/sparsebase).

ACKNOWLEDGEMENTS

We thank Cy Dune for discussions. This work was supported by the Foundation for Things
under grant FT-123.

REFERENCES

A. Author. A paper. In Proceedings of the International Conference on Things, 2020.
"""

SUBMISSION = f"""Under review as a conference paper at ICLR 2031

# FAST SPARSE TRAINING

**Anonymous authors**
Paper under double-blind review

ABSTRACT

{ABSTRACT}

{BODY}

Code: https://anonymous.4open.science/r/fastsparse-1A2B

ACKNOWLEDGMENTS

Omitted for anonymity.

REFERENCES

A. Author. A paper. In Proceedings of the International Conference on Things, 2020.
"""


def kinds(text: str) -> set[str]:
    return {r.kind for r in anonymise(text).removed}


def test_camera_ready_marks_are_removed_and_recorded() -> None:
    result = anonymise(CAMERA_READY)
    text = result.text
    for mark in ("Published as", "Ada Quill", "Bo Tern", "University of Nowhere", "nowhere.edu",
                 "Equal contribution", "Acme", "Cy Dune", "grant FT-123", "adaquill"):  # fmt: skip
        assert mark not in text, mark
    assert {
        "venue-header",
        "author-block",
        "acknowledgements",
        "author-note",
        "code-statement",
    } <= {r.kind for r in result.removed}
    assert any("Ada Quill" in r.text for r in result.removed if r.kind == "author-block")


def test_the_science_stays() -> None:
    for paper in (CAMERA_READY, SUBMISSION):
        text = anonymise(paper).text
        assert "# FAST SPARSE TRAINING" in text
        assert "ABSTRACT" in text and "a simple reweighting of the updates" in text
        assert "1 INTRODUCTION" in text and "inverse of its variance" in text
        # "correspondence between" is science, not an author note
        assert "correspondence between the two formulations" in text
        assert "REFERENCES" in text and "Proceedings of the International Conference" in text


def test_a_long_title_is_kept_whole() -> None:
    assert "## WITH REWEIGHTED UPDATES" in anonymise(CAMERA_READY).text


def test_only_the_papers_own_code_url_goes() -> None:
    text = anonymise(CAMERA_READY).text
    assert "github.com/adaquill" not in text
    assert "https://github.com/otherlab/sparsebase" in text


def test_submission_marks_are_removed() -> None:
    result = anonymise(SUBMISSION)
    for mark in ("Under review", "Anonymous authors", "double-blind", "4open.science",
                 "Omitted for anonymity"):  # fmt: skip
        assert mark not in result.text, mark
    assert {"venue-header", "code-statement", "acknowledgements"} <= {
        r.kind for r in result.removed
    }


def test_both_versions_look_alike_after_anonymisation() -> None:
    camera = anonymise(CAMERA_READY).text
    submission = anonymise(SUBMISSION).text
    assert camera.split("ABSTRACT")[0].strip().startswith("# FAST SPARSE TRAINING")
    assert submission.split("ABSTRACT")[0].strip() == "# FAST SPARSE TRAINING"


def test_latex_rendered_text() -> None:
    paper = (
        "# Fast Sparse Training\n\nAbstract\n\n" + ABSTRACT.replace("\n", " ") + "\n\n"
        "## 1 Introduction\n\nSparse models are common and we study them in depth here.\n\n"
        "## Acknowledgments\n\nThe authors thank the Foundation for Things for its support.\n\n"
        "## References\n\nA. Author. A paper. 2020."
    )
    result = anonymise(paper)
    assert "Foundation for Things" not in result.text
    assert "## 1 Introduction" in result.text and "## References" in result.text
    assert "a simple reweighting" in result.text
    assert [r.kind for r in result.removed] == ["acknowledgements"]


def test_inline_acknowledgement_paragraph_and_funding_footnote() -> None:
    paper = (
        "# T\n\nAbstract\n\n" + ABSTRACT + "\n\n1 INTRODUCTION\n\nText of the paper that goes on.\n"
        "3 This research was funded by the Agency for Science under grant 7.\n\n"
        "**Acknowledgements.** We are grateful to the staff of the lab.\n\n"
        "**Ethics Statement.** No human subjects were involved in this study.\n"
    )
    result = anonymise(paper)
    assert "grateful" not in result.text and "Agency for Science" not in result.text
    assert "Ethics Statement" in result.text and "Text of the paper" in result.text


def test_a_clean_paper_is_left_alone() -> None:
    paper = "# T\n\nAbstract\n\n" + ABSTRACT + "\n\n" + BODY + "\n"
    result = anonymise(paper)
    assert result.removed == []
    assert result.text == paper


def test_deterministic() -> None:
    assert anonymise(CAMERA_READY) == anonymise(CAMERA_READY)


def test_authors_printed_below_the_abstract_heading_go() -> None:
    paper = (
        "# A TITLE\n\n\n**Ada Quill**\nUniversity of Nowhere\nUnited Kingdom\nada@nowhere.edu\n\n"
        "ABSTRACT\n\n\n**Bo Tern**\nAcme Ltd.\nSouth Africa\n\n\n" + ABSTRACT + "\n\n" + BODY
    )
    text = anonymise(paper).text
    assert "Ada Quill" not in text and "Bo Tern" not in text and "Acme" not in text
    assert "ABSTRACT" in text and ABSTRACT.splitlines()[0] in text


def test_an_abstract_broken_by_line_numbers_stays_whole() -> None:
    lines = ABSTRACT.splitlines()
    numbered = "\n".join(f"{line}\n{i}" for i, line in enumerate(lines, start=1))
    paper = f"# T\n\n**Anonymous authors**\n\nABSTRACT\n{numbered}\n\n{BODY}"
    text = anonymise(paper).text
    assert all(line in text for line in lines)
    assert "Anonymous authors" not in text


def test_submission_line_numbers_go_section_numbers_stay() -> None:
    lines = (ABSTRACT + "\n" + BODY.replace("\n\n", "\n")).splitlines()
    numbered = "\n".join(f"{i} {line}" for i, line in enumerate(lines * 3, start=1))
    alone = "\n".join(f"{line}\n{i}" for i, line in enumerate(lines * 3, start=1))
    for paper in (f"# T\n\nABSTRACT\n{numbered}\n", f"# T\n\nABSTRACT\n{alone}\n"):
        result = anonymise(paper)
        assert [r.kind for r in result.removed] == ["line-numbers"]
        assert "\n17 " not in result.text and "\n17\n" not in result.text
        assert result.text.count(lines[0]) == 3
    assert "1 INTRODUCTION" in anonymise(CAMERA_READY).text


def test_long_runs_take_linear_time() -> None:
    """A run of the e-mail local part's characters made the e-mail patterns (anonymiser, the
    baseline's tokens, the leak check's marks) try every start again: 80,000 letters took 23 s
    and 400,000 would take about 10 minutes; and every removed thanks sentence sent the search
    back to the top of the text. Linear, each text takes about a second; the bound here only
    tells a hang from a run, on a loaded machine."""
    code = (
        "from papergym.review.anonymise import anonymise\n"
        "from papergym.review.leak import surface_tokens\n"
        "from papergym.review.offline import tokens\n"
        "for text in ('a' * 400_000, 'a.' * 200_000, 'x@' + 'b' * 400_000,\n"
        "             'The method works on the data. We thank the staff. ' * 8_000):\n"
        "    tokens(anonymise(text).text)\n"
        "    surface_tokens(text)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, env=env)


STUB = re.compile(
    r"\b(?:available|found|released|hosted)\s+(?:at|on|from|here|in)\s*:?[\s*_]*(?:\]|[.,;]?\s*$)"
    r"|\bcode\s*(?:at|:)[\s*_]*(?:\]|$)",
    re.IGNORECASE | re.MULTILINE,
)
"""What removing a URL alone leaves: "Code is available at ]", a mark of the camera-ready."""


def with_body(front: str, *paragraphs: str) -> str:
    return "\n\n".join([front, "ABSTRACT", ABSTRACT, BODY, *paragraphs]) + "\n"


def test_a_code_statement_goes_whole_without_a_stub() -> None:
    url = "https://github.com/adaquill/fastsparse"
    paper = (
        "# FAST SPARSE TRAINING\n\nABSTRACT\n\n" + ABSTRACT + " The\n"
        f"[code is available at {url}.]({url})\n\n" + BODY + "\n\n"
        f"REPRODUCIBILITY\n\n[Our implementation can be found here: {url}.]({url})\n"
        "All hyperparameters are listed in the appendix.\n"
    )
    result = anonymise(paper)
    assert not STUB.search(result.text), result.text
    assert "adaquill" not in result.text and "[" not in result.text
    assert ABSTRACT.splitlines()[-1] in result.text and "1 INTRODUCTION" in result.text
    assert "All hyperparameters are listed in the appendix." in result.text
    assert [r.kind for r in result.removed].count("code-statement") == 2


def test_a_long_sentence_loses_the_url_and_its_lead_in_only() -> None:
    url = "https://github.com/adaquill/fastsparse"
    sentence = (
        "We train every model with the same schedule of forty epochs on eight machines, using "
        "the settings of the baselines as published and the data splits of the original "
        "benchmark, with the learning rate warmed up over the first two epochs and decayed "
        "by a cosine over the remaining ones, averaging every result over five random seeds "
        f"as before, and our code is available at {url} for anyone who wants to check it."
    )
    text = anonymise(with_body("# T", sentence)).text
    assert "adaquill" not in text and "available at" not in text
    assert "warmed up over the first two epochs" in text and "for anyone who wants" in text


def test_submission_only_code_sentences_go() -> None:
    paper = with_body(
        "# T\n\n**Anonymous authors**",
        "Code will be provided during the discussion phase through an anonymized link. "
        "All data can be downloaded through an anonymous repository. We also make the code "
        "publicly available upon acceptance. The method is robust.",
        "The environments are public. The code is at https://\nanonymous.4open.science/r/"
        "fast-1A2B and runs on one machine.",
        "We study anonymous communication networks and their privacy.",
    )
    result = anonymise(paper)
    for mark in ("discussion phase", "anonymous repository", "upon acceptance", "4open"):
        assert mark not in result.text, mark
    assert "The method is robust." in result.text and "The environments are public." in result.text
    assert "anonymous communication networks" in result.text  # science, not a link
    assert not STUB.search(result.text), result.text


def test_a_repository_named_after_an_author_goes() -> None:
    paper = (
        "# FAST SPARSE TRAINING\n\n**Ada Quill** **Bo Tern**\nUniversity of Nowhere\n"
        "quill.ada@nowhere.edu\n\nABSTRACT\n\n" + ABSTRACT + "\n\n" + BODY + "\n\n"
        "We start from the sparse kernels of prior work.[2]\n\n"
        "2https://github.com/adaquill/sparse-kernels\n"
        "3https://github.com/otherlab/sparsebase\n\n"
        "REFERENCES\n\nB. Tern. Kernels. 2020. URL https://github.com/boterndev/kernels.\n"
    )
    result = anonymise(paper)
    assert "adaquill" not in result.text and "boterndev" not in result.text
    assert "https://github.com/otherlab/sparsebase" in result.text  # nobody's name here
    assert "B. Tern. Kernels. 2020." in result.text and "URL" not in result.text


def test_the_leak_check_sees_what_a_cut_url_leaves() -> None:
    from papergym.review.leak import surface_tokens

    marks = surface_tokens("Our code is\n[available at ]\n\nWe release it upon acceptance.")
    assert {"mark:url-stub", "mark:upon-acceptance"} <= set(marks)
