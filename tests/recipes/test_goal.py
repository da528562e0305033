"""The research goal stage of the offline builder: which sentences state a paper's aim."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from papergym.recipes.goal import is_goal_sentence, without_lead
from papergym.records import Instance, Paper, Stages

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize(
    "sentence",
    [
        "We aim to explain why small firms export less than large ones.",
        "In this paper, we study how crowding relates to infection in early childhood.",
        "This work investigates whether galaxies quench from the inside out.",
        "Our goal is to make attention on long inputs cheap without losing accuracy.",
        "Here we ask whether tariffs change the timing of investment.",
    ],
)
def test_aim_sentences_are_goals(sentence: str) -> None:
    assert is_goal_sentence(sentence, set())


@pytest.mark.parametrize(
    "sentence",
    [
        "Respiratory infections remain a leading cause of admission.",  # context, no aim
        "We aim to reduce the error by 12.5% on the benchmark.",  # a number
        "We study BlockRoute in Section 3.",  # the paper's own name, and layout
        "In this paper we show that our method outperforms every baseline.",  # a finding
        "We propose a router that skips blocks of keys.",  # the solution, not the aim
        "In this paper, we study attention and introduce a sparse router.",  # both: solution
    ],
)
def test_other_sentences_are_not_goals(sentence: str) -> None:
    assert not is_goal_sentence(sentence, {"BlockRoute"})


def test_the_lead_is_dropped_and_the_sentence_recapitalised() -> None:
    assert without_lead("In this paper, we study crowding.") == "We study crowding."
    assert without_lead("Here we ask whether X holds.") == "We ask whether X holds."
    assert without_lead("We study crowding.") == "We study crowding."


GOAL_PAPER = r"""\documentclass{article}
\title{Export Timing under Tariff Uncertainty}
\begin{document}
\maketitle
\begin{abstract}
Tariff uncertainty is widely thought to delay firms' export decisions.
Existing evidence rests on annual data that cannot date entry within a year.
We aim to measure how tariff uncertainty shifts the month in which firms start to export.
\end{abstract}
\section{Introduction}
Trade policy has become more volatile over the last decade.
Prior studies infer entry from annual customs totals, which hides its timing.
In this paper, we ask whether firms postpone entry until uncertainty is resolved.
\section{Method}
We build a monthly panel of first shipments from customs declarations.
The model relates the hazard of entry to an index of tariff uncertainty.
\section{Experiments}
We compare the hazard model against an annual probit baseline on the same firms.
Robustness checks use alternative uncertainty indices and placebo products.
\end{document}
"""

NO_AIM_PAPER = GOAL_PAPER.replace(
    "We aim to measure how tariff uncertainty shifts the month in which firms start to export.",
    "Monthly customs records make that timing observable.",
).replace("In this paper, we ask whether firms postpone entry until uncertainty is resolved.", "")


def stages_of(tmp_path: Path, tex: str) -> tuple[Paper, Stages]:
    from papergym.ingestion import ingest
    from papergym.recipes.extractive import extract_stages

    path = tmp_path / "paper.tex"
    path.write_text(tex, encoding="utf-8")
    (paper,) = ingest(path)
    return paper, extract_stages(paper)


@pytest.mark.slow
def test_the_goal_is_the_aim_sentences_of_abstract_and_introduction(tmp_path: Path) -> None:
    from papergym.recipes.extractive import build_instance

    paper, stages = stages_of(tmp_path, GOAL_PAPER)
    assert "We aim to measure how tariff uncertainty" in stages.research_goal
    assert "we ask whether firms postpone entry" in stages.research_goal
    assert "monthly panel" not in stages.research_goal  # the method is not the goal
    assert stages.sources["research_goal"] == ("Abstract", "Introduction")
    assert stages.discipline == "economics"
    instance = build_instance(paper, stages, "papergym")
    assert isinstance(instance, Instance), instance
    question = instance.question
    assert question.startswith("The research goal, in its authors' words: We aim to measure")
    assert "We ask whether firms postpone" in question  # "In this paper," dropped


@pytest.mark.slow
def test_without_an_aim_sentence_the_goal_falls_back_to_the_opening_context(
    tmp_path: Path,
) -> None:
    _, stages = stages_of(tmp_path, NO_AIM_PAPER)
    assert stages.research_goal.startswith("Tariff uncertainty is widely thought")
    assert "aim" not in stages.research_goal
