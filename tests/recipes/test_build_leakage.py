"""The LLM build's instance step acting on leakage verdicts (build.leakage), without an LLM."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import papergym.embed
from papergym.recipes.draft import Candidate, PaperDraft
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.recipes.leakage_action import judged_leaked
from papergym.recipes.pipeline import LeakagePolicy, llm_instance, reserve
from papergym.recipes.steps import Reject
from papergym.records import (
    Criterion,
    LeakageVerdict,
    Paper,
    PaperMeta,
    Rubric,
    Section,
    Stages,
)


def bag_of_words(texts: Sequence[str], **_: object) -> npt.NDArray[np.float32]:
    """A stand-in embedder (the real one takes tens of seconds to load): word counts, unit
    length, so a text is a paraphrase of itself only."""
    rows = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            rows[row, hash(word) % 64] += 1
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


@pytest.fixture(autouse=True)
def fast_embed(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("slow") is None:  # a whole build uses the real one
        monkeypatch.setattr(papergym.embed, "embed", bag_of_words)


def verdict(leaked: bool | None) -> tuple[LeakageVerdict, ...]:
    return (LeakageVerdict(method="judge", leaked=leaked, reason="r"),)


RUBRIC = [
    ("The plan routes each query block with a learned scorer.", "method"),
    ("The plan reduces the quadratic cost of attention on long documents.", "method"),
    ("The plan compares against dense attention and a sliding window.", "experiment"),
    ("The plan measures wall-clock time beside accuracy.", "experiment"),
]
SPARE = [
    ("The plan trains the router through a straight-through estimator.", "method"),
    ("The plan inspects which blocks are kept on real documents.", "experiment"),
]


def draft(leaked: Sequence[bool], spare_leaked: Sequence[bool | None] = ()) -> PaperDraft:
    paper = Paper.create(
        title="T",
        abstract="A.",
        sections=(Section(heading="Intro", level=1, text="x"),),
        meta=PaperMeta(source_path="p.tex"),
    )
    kept = tuple(
        Candidate(text=t, dimension=d, origin="answer")  # type: ignore[arg-type]
        for t, d in RUBRIC + SPARE
    )
    specific = tuple(
        Criterion(id=f"c{n}", text=t, dimension=d, origin="answer", rank=n)  # type: ignore[arg-type]
        for n, (t, d) in enumerate(RUBRIC, start=1)
    )
    return PaperDraft(
        paper=paper,
        stages=Stages(paper_id=paper.id, builder="llm", research_goal="g", background="b",
                      solution="s", experiment="e"),
        question="Attention is quadratic in length; how could long documents be handled?",
        reference="R.",
        candidates=kept,
        kept=kept,
        removed=(),
        rubric=Rubric(specific=specific, general=GENERAL_CRITERIA),
        leakage=tuple(verdict(x) for x in leaked),
        reserve_leakage=tuple(verdict(x) for x in spare_leaked),
    )  # fmt: skip


def test_reserve_is_the_unused_kept_candidates_in_order() -> None:
    spare = reserve(draft([False] * 4))
    assert [c.text for c in spare] == [t for t, _ in SPARE]
    assert [c.rank for c in spare] == [5, 6] and spare[0].id.startswith("c-")


def test_reserve_leaves_out_a_paraphrase_of_a_rubric_criterion() -> None:
    base = draft([False] * 4)
    copy = Candidate(text=RUBRIC[0][0].upper(), dimension="method", origin="question")
    spare = reserve(base.model_copy(update={"kept": (*(base.kept or ()), copy)}))
    assert copy.text not in [c.text for c in spare]


def test_replace_puts_the_unflagged_reserve_in_the_leaked_criterions_place() -> None:
    result = llm_instance(draft([False, True, False, False], [None, False]), "papergym",
                          LeakagePolicy("replace", 3))  # fmt: skip
    assert not isinstance(result, Reject) and result.instance is not None
    rubric = result.instance.rubric
    assert [c.text for c in rubric.specific][1] == SPARE[1][0]  # the unscored one is skipped
    assert rubric.specific[1].replaces == "c2" and rubric.specific[1].rank == 2
    assert [c.id for c in rubric.leaked_out] == ["c2"]
    assert rubric.leaked_out[0].leakage[0].leaked is True


def test_remove_keeps_the_verdicts_and_notes_the_shrink() -> None:
    result = llm_instance(draft([False, True, False, False], [False, False]), "papergym",
                          LeakagePolicy("remove", 3))  # fmt: skip
    assert not isinstance(result, Reject) and result.instance is not None
    rubric = result.instance.rubric
    assert len(rubric.specific) == 3 and "1 judged inferable" in rubric.note
    assert all(c.leakage for c in rubric.specific)


def test_too_few_left_is_a_drop_at_the_leakage_step() -> None:
    result = llm_instance(draft([False, True, True, False]), "papergym", LeakagePolicy("remove", 3))
    assert isinstance(result, Reject) and result.step == "leakage"
    assert "fewer than build.leakage.min_criteria (3)" in result.reason


def test_keep_only_records_the_verdicts() -> None:
    result = llm_instance(draft([True, True, True, True]), "papergym", LeakagePolicy("keep", 3))
    assert not isinstance(result, Reject) and result.instance is not None
    assert len(result.instance.rubric.specific) == 4 and not result.instance.rubric.leaked_out


LEAKY_PAPER = r"""\documentclass{article}
\title{Handling label scarcity in traffic forecasting}
\begin{document}
\maketitle
\begin{abstract}
Existing traffic forecasting methods remain costly because they ignore label scarcity.
\end{abstract}
\section{Introduction}
Existing traffic forecasting methods remain costly because they ignore label scarcity. However,
current traffic forecasting pipelines treat label scarcity as fixed across inputs. Prior work on
traffic forecasting does not address distribution shift at scale.
\section{Method}
We introduce a learned scheduler that learns from token frequencies. We introduce a diffusion
prior that learns from temporal gradients. A traffic forecasting variant aware of label scarcity
is trained end to end. We introduce a memory bank that learns from load profiles. Handling of
label scarcity is made explicit inside the traffic forecasting solver.
\section{Experiments}
We evaluate on a simulated testbed against a tuned heuristic baseline. We measure accuracy
together with wall-clock time and memory use. An ablation removes a learned scheduler to isolate
its effect.
\end{document}
"""


@pytest.mark.slow
def test_fake_llm_build_replaces_and_removes_what_the_judge_flags(tmp_path: Path) -> None:
    """Through ``papergym build`` and the scripted server, whose judge flags the criteria that
    restate the question: replace keeps 10 criteria, remove shrinks, keep records only."""
    from typer.testing import CliRunner

    from papergym.cli import app
    from papergym.fakellm import FakeOpenAIServer
    from papergym.fakellm.plausible import responder
    from papergym.jsonl import read_jsonl
    from papergym.records import Instance

    papers = tmp_path / "papers" / "leaky"
    papers.mkdir(parents=True)
    (papers / "main.tex").write_text(LEAKY_PAPER, encoding="utf-8")
    rubrics: dict[str, Rubric] = {}
    with FakeOpenAIServer(responder=responder) as server:
        for action in ("keep", "remove", "replace"):
            out = tmp_path / action
            args = ["build", str(papers.parent), "-o", str(out), "--base-url", server.base_url,
                    "--model", "m", "--json", f"build.leakage.action={action}"]  # fmt: skip
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0, result.output
            [instance] = read_jsonl(out / "instances.jsonl", Instance)
            rubrics[action] = instance.rubric
    flagged = [c.id for c in rubrics["keep"].specific if judged_leaked(c)]
    assert flagged and not rubrics["keep"].leaked_out
    assert [c.id for c in rubrics["remove"].leaked_out] == flagged
    assert len(rubrics["remove"].specific) == 10 - len(flagged)
    assert len(rubrics["replace"].specific) == 10
    assert sorted(c.replaces for c in rubrics["replace"].specific if c.replaces) == sorted(flagged)
    assert not any(judged_leaked(c) for c in rubrics["replace"].specific)
    card = json.loads((tmp_path / "replace" / "card.json").read_text(encoding="utf-8"))
    acted = card["stats"]["leakage_action"]
    assert acted["before"]["leaked"] == len(flagged) and acted["after"]["leaked"] == 0
