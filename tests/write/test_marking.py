"""The pure rules on written LaTeX: reported numbers, simulated marking, plan checks, citations,
and the writer's text format."""

from __future__ import annotations

import pytest

from papergym.write.marking import (
    cited,
    has_top_heading,
    keep_known_cites,
    mark_simulated,
    numbers_in_plan,
    reported_numbers,
    tidy_body,
)
from papergym.write.paper_text import (
    kind_of_heading,
    mark_results,
    parse_paper,
    render_paper,
    results_bearing,
)
from papergym.write.records import Outline, OutlineSection


def values(latex: str) -> list[str]:
    return [latex[s:e] for s, e in reported_numbers(latex)]


@pytest.mark.parametrize(
    ("latex", "expected"),
    [
        ("an accuracy of 91.2\\% and 88.5 for the baseline", ["91.2", "88.5"]),
        ("a loss of -0.25 and x=-3", ["-0.25", "-3"]),
        ("a 3x speedup and 2× fewer steps", ["3", "2"]),
        ("A & \\textbf{71.4} & 12.0 \\\\", ["71.4", "12.0"]),
        ("$93.2 \\pm 0.4$", ["93.2", "0.4"]),
        ("1,024 runs", ["1,024"]),
        # not reported numbers: names, scripts, fractions, lengths, references, citations
        ("ResNet-50, GPT2 and top-1", []),
        ("$x^2$ and $\\frac{1}{2}$ and $x_1$", []),
        ("\\begin{tabular}{p{3cm}c} \\hspace{2mm}", []),
        ("Table~\\ref{tab:3}, Eq.~\\eqref{eq:2}, \\cite{smith2020}, \\label{s:4}", []),
        ("see \\url{http://x.org/v2/3}", []),
        ("five seeds on three datasets", []),
    ],
)
def test_reported_numbers(latex: str, expected: list[str]) -> None:
    assert values(latex) == expected


def test_marking_wraps_every_reported_number_and_lists_it() -> None:
    latex = "We reach 91.2\\% (vs. 88.5) with ResNet-50, already \\simulated{4.5}."
    marked, found = mark_simulated(latex)
    assert marked == (
        "We reach \\simulated{91.2}\\% (vs. \\simulated{88.5}) with ResNet-50, already "
        "\\simulated{4.5}."
    )
    assert [v for v, _ in found] == ["91.2", "88.5", "4.5"]
    assert "We reach" in found[0][1]
    assert reported_numbers(marked) == []  # marking twice changes nothing
    assert mark_simulated(marked)[0] == marked


def test_plan_numbers_count_marked_and_unmarked() -> None:
    assert numbers_in_plan("We will run 5 seeds and expect \\simulated{90}.") == ["5", "90"]
    assert numbers_in_plan("We will run five seeds, see Section~\\ref{s:2}; $x^2$.") == []


def test_unknown_citation_keys_are_removed() -> None:
    latex = "As shown~\\cite{a,ghost} and \\citet[p.~2]{ghost}, and \\citep{b}."
    kept, removed = keep_known_cites(latex, {"a", "b"})
    assert kept == "As shown~\\cite{a} and, and \\citep{b}."
    assert removed == ["ghost", "ghost"]
    assert cited(kept) == ["a", "b"]


def test_results_bearing_by_kind_or_heading() -> None:
    def section(heading: str, kind: str) -> OutlineSection:
        return OutlineSection(heading=heading, kind=kind, purpose="p", references=())  # type: ignore[arg-type]

    assert results_bearing(section("Findings", "results"))
    assert results_bearing(section("Empirical Evaluation", "method"))  # mislabelled: by heading
    assert not results_bearing(section("Our Approach", "method"))
    assert kind_of_heading("Related Work") == "related_work"
    assert kind_of_heading("Experimental Setup") == "experiments"


def test_paper_text_round_trips() -> None:
    outline = Outline(
        title="A Title",
        abstract_plan="Plan | with a bar",
        sections=(
            OutlineSection(heading="Intro", kind="introduction", purpose="Why.", references=("a",)),
            OutlineSection(heading="Results", kind="results", purpose="What.", references=()),
        ),
    )
    text = render_paper(outline, "The abstract.", [("Intro", "Text \\cite{a}."), ("Results", "R.")])
    parsed = parse_paper(text)
    assert parsed.title == "A Title" and parsed.abstract == "The abstract."
    assert parsed.sections == (("Intro", "Text \\cite{a}."), ("Results", "R."))
    assert parsed.outline_lines[0] == "title: A Title"
    assert (
        "section 1: Intro | kind: introduction | purpose: Why. | references: a"
        in parsed.outline_lines
    )


def test_tidy_body_drops_a_repeated_heading_and_escapes_bare_percent() -> None:
    latex = "\\section{Results}\nWe get 91% and 3 % but keep 5\\% and 100\\%.\n% a comment"
    assert tidy_body(latex) == "We get 91\\% and 3 \\% but keep 5\\% and 100\\%.\n% a comment"
    assert tidy_body("\\begin{abstract}We study X.\\end{abstract}") == "We study X."
    assert has_top_heading("text \\section{Other} more")
    assert not has_top_heading("text \\subsection{Detail} more")


def test_mark_results_marks_a_policy_paper() -> None:
    text = (
        "% Outline\n% end outline\n\n\\title{T}\n\n\\begin{abstract}\nWe gain 4.2 points.\n"
        "\\end{abstract}\n\n\\section{Introduction}\nSince 2017 models grew.\n\n"
        "\\section{Experimental Results}\nWe reach 91.2 on 3 tasks.\n"
    )
    marked, found = mark_results(text)
    assert "We gain \\simulated{4.2} points." in marked
    assert "Since 2017 models grew." in marked  # not a results-bearing part
    assert "We reach \\simulated{91.2} on \\simulated{3} tasks." in marked
    assert [(s, v) for s, v, _ in found] == [
        ("Abstract", "4.2"), ("Experimental Results", "91.2"), ("Experimental Results", "3"),
    ]  # fmt: skip


def test_titles_and_headings_are_escaped_for_latex() -> None:
    outline = Outline(title="Speed & Accuracy", abstract_plan="p", sections=())
    text = render_paper(outline, "A.", [("Results & 5% gains", "R.")])
    assert "\\title{Speed \\& Accuracy}" in text
    assert "\\section{Results \\& 5\\% gains}" in text
