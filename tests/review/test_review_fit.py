"""Fitting a long paper to the context: the rule is fixed, recorded and deterministic."""

from __future__ import annotations

from papergym.review.fit import blocks, fit_paper, is_heading


def words(prefix: str, count: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(count))


PAPER = "\n".join(
    [
        "# A Title",
        "ABSTRACT",
        words("abs", 100),
        "1 INTRODUCTION",
        words("intro", 400),
        "2 METHOD",
        words("method", 1500),
        "3 EXPERIMENTS",
        words("exp", 1500),
        "REFERENCES",
        words("ref", 800),
        "A PROOFS",
        words("proof", 1000),
    ]
)


def test_review_fit_short_paper_is_untouched() -> None:
    fitted = fit_paper(PAPER, 100_000)
    assert fitted.text == PAPER and fitted.rule is None


def test_review_fit_drops_references_first_then_appendix() -> None:
    total = len(PAPER.split())
    fitted = fit_paper(PAPER, total - 500)
    assert fitted.rule is not None
    assert "dropped references (801 words)" in fitted.rule and "appendix" not in fitted.rule
    assert "ref1 " not in fitted.text and "proof1 " in fitted.text
    fitted = fit_paper(PAPER, 3600)
    assert "dropped references" in fitted.rule and "dropped appendix (1002 words)" in fitted.rule
    assert fitted.words <= 3600


def test_review_fit_cuts_every_long_section_evenly_and_keeps_each_beginning() -> None:
    fitted = fit_paper(PAPER, 2000)
    assert fitted.words <= 2000
    assert fitted.rule is not None and "cut 2 of" in fitted.rule  # method and experiments
    for start in ("abs0 ", "intro0 ", "method0 ", "exp0 "):
        assert start in fitted.text
    assert "intro399" in fitted.text  # a short section stays whole
    assert "method1499" not in fitted.text and "exp1499" not in fitted.text
    assert fit_paper(PAPER, 2000) == fitted  # deterministic


def test_review_fit_headings_and_prose() -> None:
    assert is_heading("3 EXPERIMENTS") and is_heading("A.1 PROOF OF LEMMA 2")
    assert is_heading("## Results") and is_heading("References") and is_heading("APPENDIX")
    assert not is_heading("Appendix A.")  # a sentence wrapped after "see Appendix A."
    assert not is_heading("We show in Appendix E where the environment is described")
    kinds = [b.kind for b in blocks(PAPER)]
    assert (
        kinds[-2:] == ["references", "appendix"] and kinds.count("body") == 4
    )  # title+abstract, intro, method, experiments
