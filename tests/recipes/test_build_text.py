"""Sentence splitting, the numeric-result rule and the criterion templates (papergym.recipes.text).

The general rules live in :mod:`papergym.text`; ``papergym.recipes.text`` re-exports them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import papergym.text
from papergym.recipes.text import (
    as_plan_criterion,
    clean_markers,
    content_words,
    has_numeric_result,
    has_result_claim,
    is_mathy,
    is_prose,
    mentions_own_work,
    numbers_in,
    prose_sentences,
    split_sentences,
    strip_numeric_results,
    talks_about_document,
    without_citations,
    without_lead_in,
)

# --- split_sentences ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One sentence here. Another one there.", ["One sentence here.", "Another one there."]),
        (
            "Models differ, e.g. Transformers. They cost.",
            ["Models differ, e.g. Transformers.", "They cost."],
        ),
        ("It works, i.e. It converges. Done.", ["It works, i.e. It converges.", "Done."]),
        ("Smith et al. [cite] showed this. Next.", ["Smith et al. [cite] showed this.", "Next."]),
        ("See Fig. 3 for details. Next.", ["See Fig. 3 for details.", "Next."]),
        ("As in Eq. (4) we sum. Next.", ["As in Eq. (4) we sum.", "Next."]),
        (
            "The loss fell from 3.2 to 1.1. Then it rose.",
            ["The loss fell from 3.2 to 1.1.", "Then it rose."],
        ),
        (
            "Grid search works [cite]. [cite] showed more.",
            ["Grid search works [cite].", "[cite] showed more."],
        ),
        ("Is it fast? Yes! It is.", ["Is it fast?", "Yes!", "It is."]),
        ("It is matrix A. Then we stop.", ["It is matrix A.", "Then we stop."]),
        ("Data from the U.S. Census were used.", ["Data from the U.S. Census were used."]),
        ("He said “stop.” Then left.", ["He said “stop.”", "Then left."]),
        ("(See the appendix.) Next one.", ["(See the appendix.)", "Next one."]),
        (
            "lower case start. still same? no split here.",
            ["lower case start. still same? no split here."],
        ),
        ("", []),
        ("   \n\n  ", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_split_sentences_joins_soft_line_breaks_and_keeps_paragraphs_apart() -> None:
    text = "A sentence that\nwraps over lines\n\nA new paragraph without a full stop\n\nLast one."
    assert split_sentences(text) == [
        "A sentence that wraps over lines",
        "A new paragraph without a full stop",
        "Last one.",
    ]


def test_split_sentences_separates_bullets_and_captions() -> None:
    text = (
        "Intro line:\n* first item\n* Second item. Two sentences.\nFigure: A caption. More caption."
    )
    assert split_sentences(text) == [
        "Intro line:",
        "first item",
        "Second item.",
        "Two sentences.",
        "Figure: A caption.",
        "More caption.",
    ]


def test_split_sentences_round_trips_when_joined() -> None:
    text = (
        "Deep models [cite] are costly, e.g. Transformers. Smith et al. [cite] agree. It is 3.2 s."
    )
    sentences = split_sentences(text)
    assert split_sentences(" ".join(sentences)) == sentences


def test_prose_sentences_skip_captions_maths_and_fragments() -> None:
    text = (
        "The model routes each query to a small set of key blocks.\n\n"
        "Figure: The routing graph of the model with all of its parts.\n\n"
        "ℒ = 𝔼_x[ ℓ(x) ] + λ ‖w‖^2\n\n"
        "where x is the input drawn from the training distribution.\n\n"
        "Short one."
    )
    assert prose_sentences(text) == ["The model routes each query to a small set of key blocks."]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("The model routes each query to a small set of key blocks.", True),
        ("[cite] route each query to a small set of key blocks.", True),
        ("where x is the input drawn from the training distribution.", False),
        ("Figure: The routing graph of the model with all its parts.", False),
        ("Too short to count.", False),
        ("The model routes each query to a small set of key blocks", False),
        ("See https://example.org for the code and the data we used.", False),
        ("ℒ_a = 𝔼_x ∑_i λ_i w_i ‖x_i‖ + b_0 + c_1 + d_2 + e_3.", False),
        ("The model routes queries. # Feature selection. We then prune.", False),
    ],
)
def test_is_prose(sentence: str, expected: bool) -> None:
    assert is_prose(sentence) is expected


# --- the numeric rule --------------------------------------------------------------------------

RESULT_SENTENCES = [
    "Our model improves accuracy by 3.2 points.",
    "It reaches an accuracy of 81.2 on the test set.",
    "The method is 3x faster than the baseline.",
    "The method is 3× faster than the baseline.",
    "Accuracy rose to 95% on average.",
    "The effect is significant (p < 0.05).",
    "The fit gives R^2 = 0.93 on held-out data.",
    "The reform increased schooling by 0.95 years.",
    "Training took 7,850 seconds on one GPU.",
    "The method is twice as fast as the baseline.",
    "It is an order of magnitude faster than the direct solver.",
    "Throughput increased three-fold compared to cuDNN.",
    "It reduces the cost by a factor of ten.",
    "The error is -0.5 on average.",
]
SETTING_SENTENCES = [  # settings count too (the rule is conservative)
    "The hypernetwork has 50 hidden units.",
    "We ran 2000 iterations of the sampler.",
    "We use a 2-layer network and report top-5 accuracy.",
    "We trained a 7B model with a batch size of 32.",
    "Each step takes 10 ms.",
    "The models 10 times faster were kept.",
]
NON_NUMERIC_SENTENCES = [
    "We fine-tune GPT-2 and Qwen3-8B with L2 regularization on 3D scenes.",
    "As shown in Figure 3 and Table 2, the model uses Eq. (5).",
    "See Fig. 2b, Table A.1, Section 4.1 and Appendix B.2 for details.",
    "Columns (1), (3), and (5) report estimates from a linear model.",
    "In Section 3 we describe Algorithm 1 and prove Theorem 2.",
    "The reform was introduced in 1961 in Ghana.",
    "The 1990s saw growth between 2019–2020 as well.",
    "The cost scales as 𝒪(N^3) for N data points.",
    "This was the 20th century, as in COVID-19 studies using x_1.",
    "The estimator uses (3) and [12] to bound the error.",
    "We released version 1.0 and later v2.1 of the library.",
    "The package follows release 1.2.3 conventions.",
    "1. The first step reads the data.",
    "Our contribution is twofold.",
    "The manifold is smooth and more general.",
    "ResNet-50 and H200 GPUs use F1 and x86 with CO2 sensors.",
]


@pytest.mark.parametrize("sentence", RESULT_SENTENCES + SETTING_SENTENCES)
def test_numeric_sentences_are_detected(sentence: str) -> None:
    assert has_numeric_result(sentence)


@pytest.mark.parametrize("sentence", NON_NUMERIC_SENTENCES)
def test_years_references_and_names_are_not_numeric(sentence: str) -> None:
    assert not has_numeric_result(sentence)
    assert numbers_in(sentence) == set()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Accuracy of 81.2% and 7,850 weights, R^2 = 0.93.", {"81.2", "7850", "0.93"}),
        ("GPT-2 got 3.2 in Table 4 in 2019.", {"3.2"}),
        ("A 3x speed-up over 12 runs.", {"3", "12"}),
        ("No numbers at all here.", set()),
    ],
)
def test_numbers_in(text: str, expected: set[str]) -> None:
    assert numbers_in(text) == expected


def test_strip_numeric_results_keeps_structure() -> None:
    text = (
        "We train on ImageNet. Accuracy reaches 81.2%. We compare to ResNet-50.\n\n"
        "- Baselines follow Section 4.\n- It is 3x faster.\n\n"
        "Everything here is 12.5 ms."
    )
    assert strip_numeric_results(text) == (
        "We train on ImageNet. We compare to ResNet-50.\n\n- Baselines follow Section 4."
    )


def test_strip_numeric_results_leaves_no_counted_number() -> None:
    text = " ".join(RESULT_SENTENCES + SETTING_SENTENCES + NON_NUMERIC_SENTENCES)
    stripped = strip_numeric_results(text)
    assert numbers_in(stripped) == set()
    assert all(not has_numeric_result(s) for s in split_sentences(stripped))
    assert "Columns (1), (3), and (5)" in stripped


# --- cues ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("We propose a routing model.", True),
        ("Our model is simple.", True),
        ("In this paper, sparse routing is studied.", True),
        ("This approach avoids the quadratic cost.", True),
        ("I assume households have no bequest motive.", True),
        ("The paper is organised as follows.", True),
        ("Prior models use dense attention [cite].", False),
        ("A Type I error is costly in trials.", False),
        ("Phase I trials are small.", False),
    ],
)
def test_mentions_own_work(sentence: str, expected: bool) -> None:
    assert mentions_own_work(sentence) is expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Our method outperforms all baselines.", True),
        ("We find a positive effect on schooling.", True),
        ("The results show that routing helps.", True),
        ("We conclude that eccentric binaries are louder.", True),
        ("We compare against three baselines on two datasets.", False),
        ("Models are evaluated with cross-validation.", False),
    ],
)
def test_has_result_claim(sentence: str, expected: bool) -> None:
    assert has_result_claim(sentence) is expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("The loss is ℒ = a + b for every input.", True),
        ("We sum over x_i for all inputs.", True),
        ("The cost grows as N^3 in the naive solver.", True),
        ("The model routes each query to a few blocks.", False),
    ],
)
def test_is_mathy(sentence: str, expected: bool) -> None:
    assert is_mathy(sentence) is expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("In this section we describe the estimator.", True),
        ("As discussed above, the kernel is stationary.", True),
        ("The previous two sections describe the model.", True),
        ("This is beyond the scope of this paper.", True),
        ("The estimator removes the omitted-variable bias.", False),
    ],
)
def test_talks_about_document(sentence: str, expected: bool) -> None:
    assert talks_about_document(sentence) is expected


def test_content_words_drop_stop_words_and_short_words() -> None:
    assert content_words("The model uses a sparse routing of the [cite] keys.") == {
        "model",
        "uses",
        "sparse",
        "routing",
        "keys",
    }


# --- criterion templates -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "Grid search [cite] and random search [cite], [cite] are used.",
            "Grid search and random search are used.",
        ),
        ("This was proposed by [cite] and [cite].", "This was proposed by prior work."),
        ("[cite] is one of few papers to do so.", "Prior work is one of few papers to do so."),
        ("As [cite] point out, it holds.", "As prior studies point out, it holds."),
        ("[cite] show that it holds.", "Prior studies show that it holds."),
        ("In line with [cite], households save.", "In line with prior work, households save."),
        ("Costs (e.g., [cite], income) vary.", "Costs (income) vary."),
        ("Smith et al. [cite], who fit it, agree.", "Smith et al., who fit it, agree."),
        ("Models are costly (see [cite]).", "Models are costly."),
        ("We build on NumPy[cite], which is fast.", "We build on NumPy, which is fast."),
    ],
)
def test_without_citations(sentence: str, expected: str) -> None:
    assert without_citations(sentence) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Moreover, the model is sparse.", "the model is sparse."),
        (
            "Instead of dense attention, routing is used.",
            "Instead of dense attention, routing is used.",
        ),
        ("Also we prune heads.", "we prune heads."),
    ],
)
def test_without_lead_in(sentence: str, expected: str) -> None:
    assert without_lead_in(sentence) == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "We use Adam for training the hypernetwork [cite].",
            "The plan uses Adam for training the hypernetwork.",
        ),
        (
            "We then trained a hypernetwork on MNIST.",
            "The plan then trains a hypernetwork on MNIST.",
        ),
        ("We estimated the model by GMM.", "The plan estimates the model by GMM."),
        ("We applied the filter to all stars.", "The plan applies the filter to all stars."),
        ("We ran the sampler to convergence.", "The plan runs the sampler to convergence."),
        ("We can estimate the ATT by pooling.", "The plan can estimate the ATT by pooling."),
        (
            "We fix the window to the reform cohort.",
            "The plan fixes the window to the reform cohort.",
        ),
        (
            "We apply these corrections to each trait.",
            "The plan applies these corrections to each trait.",
        ),
        ("We carefully tune the prior.", "The plan carefully tunes the prior."),
        ("We have two estimators.", "The plan has two estimators."),
        (
            "In addition, we compared routing with pruning.",
            "The plan compares routing with pruning.",
        ),
        (
            "Our process trains a network to output weights.",
            "The plan's process trains a network to output weights.",
        ),
        (
            "The hypernetwork has a ReLU activation (see [cite]).",
            "The plan specifies that the hypernetwork has a ReLU activation.",
        ),
        (
            "SciPy provides wrappers for LAPACK.",
            "The plan specifies that SciPy provides wrappers for LAPACK.",
        ),
        (
            "Weights were initialized as in [cite]",
            "The plan specifies that Weights were initialized as in prior work.",
        ),
    ],
)
def test_as_plan_criterion(sentence: str, expected: str) -> None:
    assert as_plan_criterion(sentence) == expected


def test_as_plan_criterion_lowercases_ordinary_words_only() -> None:
    vocabulary = frozenset({"weights", "combining"})
    assert as_plan_criterion("Weights are shared.", vocabulary) == (
        "The plan specifies that weights are shared."
    )
    assert as_plan_criterion("Gaussian priors are shared.", vocabulary) == (
        "The plan specifies that Gaussian priors are shared."
    )


def test_general_rules_live_below_the_build() -> None:
    """The reward imports the lower module, which imports nothing of the build."""
    import papergym.recipes.text as build_text
    import papergym.reward.offline as offline

    assert build_text.split_sentences is papergym.text.split_sentences
    assert offline.content_words is papergym.text.content_words
    source = Path(papergym.text.__file__).read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not [line for line in imports if "papergym" in line]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "In summary, finally, the model is sparse.",
            "The plan specifies that the model is sparse.",
        ),
        ("Second, we classify a site as dense.", "The plan classifies a site as dense."),
        ("Consequently the loss is convex.", "The plan specifies that the loss is convex."),
        (
            "For each component, we write small tests.",
            "The plan, for each component, writes small tests.",
        ),
        (
            "Contrasting the original framework, I assume that firms save.",
            "The plan, contrasting the original framework, assumes that firms save.",
        ),
        (
            "Each model is shared, allowing us to use our small model.",
            "The plan specifies that each model is shared, allowing the plan to use the plan's "
            "small model.",
        ),
        (
            "The cohort, which we refer to as pivotal, is treated.",
            "The plan specifies that the cohort, which the plan refers to as pivotal, is treated.",
        ),
        ("We fit the model of Section [ref] to data.", "The plan fits the model to data."),
        (
            "(One exception is the kernel method.)",
            "The plan specifies that one exception is the kernel method.",
        ),
        (
            "Type I errors are controlled by the test.",
            "The plan specifies that Type I errors are controlled by the test.",
        ),
    ],
)
def test_as_plan_criterion_writes_plan_voice(sentence: str, expected: str) -> None:
    assert as_plan_criterion(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "Equation [ref] gives the likelihood of the data.",  # the reference is needed
        "The second approach [cite] employ to analyse shocks is a model.",  # cited work acts
        "As [cite] point out, the estimates depend on covariates.",  # about prior work
        "We believe ours is the best choice for such models.",  # first person left ("ours"->?)
    ],
)
def test_as_plan_criterion_refuses_what_cannot_be_a_plan_statement(sentence: str) -> None:
    written = as_plan_criterion(sentence)
    assert written is None or not re.search(r"\b(?:we|our|ours|us)\b", written, re.IGNORECASE)
    if "[" in sentence:
        assert written is None


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("In Section [ref], we build on prior models.", "We build on prior models."),
        ("The model (see Fig. [ref]) is fit.", "The model is fit."),
        ("Results are robust, as shown in Table [ref].", "Results are robust."),
        ("The series described in Section [ref] are detrended.", None),
        ("The timing contradicts equation ([ref]).", None),
        ("Data series are described in Section [ref].", None),
    ],
)
def test_clean_markers(sentence: str, expected: str | None) -> None:
    assert clean_markers(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "The system defines an open-ended language of models via a compositional grammar.",
        "The package provides fast wrappers for sparse solvers.",
        "Our approach is based on kernels.",
    ],
)
def test_self_describing_system_sentences_are_own_work(sentence: str) -> None:
    assert mentions_own_work(sentence)


def test_generic_subjects_are_not_own_work() -> None:
    assert not mentions_own_work("The model of prior work predicts lower savings.")
    assert not mentions_own_work("Standard software packages automate linear regression.")
