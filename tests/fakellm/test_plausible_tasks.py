"""``papergym fake-llm --answers plausible`` runs the README's ARES, review and write demos end to
end: the plausible responder behind a real loopback server, the real commands through the CLI."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible import responder
from papergym.fakellm.plausible_tasks import task_answer
from papergym.jsonl import read_jsonl
from papergym.records import Instance
from papergym.review.records import PaperReview

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "examples" / "corpus"
PAPER = ROOT / "examples" / "papers" / "sparse-attention-toy"
runner = CliRunner()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder) as running:
        yield running


def llm(server: FakeOpenAIServer) -> list[str]:
    return ["--base-url", server.base_url, "--model", "fake", "--no-cache"]


def test_ares_build_on_a_few_demo_documents_keeps_weighted_instances(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for path in sorted(CORPUS.glob("*.md"))[:3]:
        shutil.copy(path, corpus / path.name)
    out = tmp_path / "out"
    args = ["build", str(corpus), "--recipe", "ares", "-o", str(out), "--json", *llm(server)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["mode"] == "llm" and summary["kept"] >= 2, summary["drops"]
    built = read_jsonl(out / "instances.jsonl", Instance)
    assert all(i.source_kind == "document" and i.rubric.pitfalls for i in built)
    assert not (out / "failed.jsonl").exists() or not (out / "failed.jsonl").read_text().strip()


def test_review_gives_schema_valid_reviews_on_the_scale_and_a_real_meta_review(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "rev"
    result = runner.invoke(app, ["review", str(PAPER), "-o", str(out), *llm(server)])
    assert result.exit_code == 0, result.output
    [paper] = read_jsonl(out / "reviews.jsonl", PaperReview)
    assert len(paper.reviews) == 4 and not paper.unscored
    ratings = [r.rating for r in paper.reviews]
    assert set(ratings) <= {1, 3, 5, 6, 8, 10} and 3 <= sum(ratings) / len(ratings) <= 8
    assert len(set(ratings)) > 1  # reviewers disagree, as a panel does
    assert all("sparsity pattern" in r.summary or "attention" in r.summary for r in paper.reviews)
    assert paper.meta_review and "area chair" not in paper.meta_review
    assert "reviewers" in paper.meta_review


@pytest.mark.parametrize("plan_only", [False, True])
def test_write_outlines_with_the_bib_keys_and_writes_every_section(
    server: FakeOpenAIServer, tmp_path: Path, plan_only: bool
) -> None:
    bib = PAPER / "refs.bib"
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib.read_text(encoding="utf-8"), re.MULTILINE))
    out = tmp_path / "w"
    extra = ["--plan-only"] if plan_only else []
    result = runner.invoke(app, ["write", str(bib), "-o", str(out), *extra, *llm(server)])
    assert result.exit_code == 0, result.output
    tex = (out / "refs" / "paper.tex").read_text(encoding="utf-8")
    cited = {k.strip() for group in re.findall(r"\\cite\{([^}]*)\}", tex) for k in group.split(",")}
    assert cited == keys  # every reference used, none invented
    assert tex.count("\\section{") >= 4 and "\\begin{abstract}" in tex
    outline = json.loads((out / "refs" / "outline.json").read_text(encoding="utf-8"))
    kinds = [s["kind"] for s in outline["sections"]]
    assert "experiments" in kinds and all(s["references"] for s in outline["sections"])


def test_a_review_rating_follows_the_venue_scale_the_schema_or_prompt_lists() -> None:
    prompt = (
        "You are reviewing a paper submitted to NeurIPS. You are a careful reviewer.\n"
        "- rating: your overall recommendation, one of 2, 4, 7, where 2 is worst;\n"
        "Paper:\n<<<\nWe propose a method that routes queries to a few key blocks only.\n>>>"
    )
    request: dict[str, object] = {"messages": [{"role": "user", "content": prompt}]}
    answer = task_answer(request)
    assert isinstance(answer, dict) and answer["rating"] in (2, 4, 7)
    schema = {"type": "object", "properties": {"rating": {"enum": [1, 2, 3, 4]}}}
    request["response_format"] = {"type": "json_schema", "json_schema": {"schema": schema}}
    answer = task_answer(request)
    assert isinstance(answer, dict) and answer["rating"] in (2, 3)  # mid-scale
    assert task_answer({"messages": [{"role": "user", "content": "Say hello."}]}) is None


def test_an_outline_with_fewer_references_than_sections_cites_one_in_each() -> None:
    prompt = (
        "Plan a research paper that builds on the references below.\n\n"
        "References (key, title, authors, year, venue, abstract where known):\n"
        "[a1] First paper. A. Author. 2020.\n[b2] Second paper. B. Author. 2021.\n\n"
        "Write the outline ... between\n3 and 6 sections in order"
    )
    answer = task_answer({"messages": [{"role": "user", "content": prompt}]})
    assert isinstance(answer, dict)
    sections = answer["sections"]
    assert 3 <= len(sections) <= 6 and all(s["references"] for s in sections)
    assert {k for s in sections for k in s["references"]} == {"a1", "b2"}
