"""``papergym review PAPER... -o OUT``: the LLM path through a loopback server with a scripted
reviewer, resuming, LaTeX and text papers, and bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.completions import extract_schema
from papergym.jsonl import read_jsonl
from papergym.review.records import PaperReview
from support.papers import MINIMAL_MAIN, write_paper
from support.reviewer import ScriptedReviewer

runner = CliRunner()

TEXT = """# Learning to Route Attention

ABSTRACT

We route attention to a few key blocks and evaluate the cost on long documents.

1 INTRODUCTION

Attention is expensive for long inputs. We propose block routing.

2 EXPERIMENTS

We compare with dense attention on two benchmarks.
"""


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def papers(tmp_path: Path) -> list[Path]:
    one = tmp_path / "in" / "paper-a.txt"
    one.parent.mkdir(parents=True)
    one.write_text(TEXT, encoding="utf-8")
    two = tmp_path / "in" / "paper-b.md"
    two.write_text(TEXT.replace("Route Attention", "Prune Attention"), encoding="utf-8")
    latex = write_paper(tmp_path / "in" / "latex-paper", {"main.tex": MINIMAL_MAIN})
    return [one, two, latex]


def llm_args(server: FakeOpenAIServer) -> list[str]:
    return [
        "--base-url", server.base_url, "--model", "reviewer-m", "--no-cache",
        "llm.default.retry_base_delay=0", "llm.default.max_retries=0",
    ]  # fmt: skip


def invoke(*args: object) -> object:
    return runner.invoke(app, ["review", *map(str, args)])


def test_review_command_llm_path_writes_records_markdown_and_resumes(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    script = ScriptedReviewer(ratings={"empirical": 8, "theory": 6}, faults={"clarity": "garbage"})
    server.responder = script
    out = tmp_path / "out"
    result = invoke(*papers(tmp_path), "-o", out, "--reviewers", "3", *llm_args(server), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["papers"] == 3 and summary["papers_scored"] == 3
    assert summary["reviews_scored"] == 6 and summary["reviews_unscored"] == 3
    assert summary["baseline"] is False
    records = read_jsonl(out / "reviews.jsonl", PaperReview)
    assert sorted(r.paper_id for r in records) == ["latex-paper", "paper-a", "paper-b"]
    for record in records:
        assert record.score == 7.0 and record.decision == "accept"
        assert [u.reviewer for u in record.unscored] == ["clarity"]
    markdown = (out / "reviews.md").read_text("utf-8")
    assert "## paper-a" in markdown and "Reviewer empirical" in markdown
    assert "unparseable" in markdown
    calls = server.request_count

    again = invoke(*papers_again(tmp_path), "-o", out, "--reviewers", "3", *llm_args(server))
    assert again.exit_code == 0, again.output
    assert server.request_count == calls  # every paper finished: no call at all
    assert len(read_jsonl(out / "reviews.jsonl", PaperReview)) == 3


def papers_again(tmp_path: Path) -> list[Path]:
    root = tmp_path / "in"
    return [root / "paper-a.txt", root / "paper-b.md", root / "latex-paper"]


def test_review_command_resumes_only_unfinished_papers(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    script = ScriptedReviewer()
    server.responder = script
    out = tmp_path / "out"
    first, second, _ = papers(tmp_path)
    assert invoke(first, "-o", out, "--reviewers", "2", *llm_args(server)).exit_code == 0
    before = len(script.review_requests())
    result = invoke(first, second, "-o", out, "--reviewers", "2", *llm_args(server))
    assert result.exit_code == 0, result.output
    assert len(script.review_requests()) - before == 2  # only paper-b's two reviewers
    changed = invoke(first, "-o", out, "--reviewers", "3", *llm_args(server))
    assert changed.exit_code == 2
    assert "reviewers: 2 → 3" in changed.output


def test_review_command_unreachable_endpoint_leaves_the_paper_for_the_next_run(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedReviewer()
    out = tmp_path / "out"
    first, _, _ = papers(tmp_path)
    server.fail(500, times=1)  # the first review call of the only paper fails, no retries
    result = invoke(first, "-o", out, "--reviewers", "2", *llm_args(server))
    assert result.exit_code == 1
    assert "run the same command again" in result.output
    assert not (out / "reviews.jsonl").exists()
    retry = invoke(first, "-o", out, "--reviewers", "2", *llm_args(server))
    assert retry.exit_code == 0, retry.output
    assert len(read_jsonl(out / "reviews.jsonl", PaperReview)) == 1


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.txt", b"", "empty file"),
        ("blank.md", b"  \n\n ", "empty file"),
        ("binary.txt", b"\x00\x01\x02PK\x03\x04" * 50, "binary file"),
        ("figure.pdf", b"%PDF-1.4\x00\x01\x02\x03" * 50, "binary file"),
    ],
)
def test_review_command_bad_paper_is_one_line_exit_2_nothing_written(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    good = tmp_path / "good.txt"
    good.write_text(TEXT, encoding="utf-8")
    bad = tmp_path / name
    bad.write_bytes(content)
    out = tmp_path / "out"
    result = invoke(good, bad, "-o", out)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and str(bad) in lines[0] and reason in lines[0]
    assert not out.exists()


def test_review_command_missing_paper_and_duplicate_ids_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(tmp_path / "nope.txt", "-o", out)
    assert result.exit_code == 2 and "no such file" in result.output
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "b" / "x.md").write_text(TEXT, encoding="utf-8")
    result = invoke(tmp_path / "a" / "x.txt", tmp_path / "b" / "x.md", "-o", out)
    assert result.exit_code == 2 and "paper id 'x'" in result.output
    assert not out.exists()


def test_review_command_spent_budget_stops_and_the_next_run_finishes(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedReviewer()
    out = tmp_path / "out"
    first, second, _ = papers(tmp_path)
    args = [first, second, "-o", out, "--reviewers", "2", *llm_args(server)]
    result = invoke(*args, "llm.budget_tokens=1", "review.paper_concurrency=1")
    assert result.exit_code == 1
    assert "budget" in result.output and "run the same command again" in result.output
    assert len(finished_records(out)) < 2
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert sorted(r.paper_id for r in finished_records(out)) == ["paper-a", "paper-b"]


def finished_records(out: Path) -> list[PaperReview]:
    path = out / "reviews.jsonl"
    return read_jsonl(path, PaperReview) if path.exists() else []


class MetaDownReviewer(ScriptedReviewer):
    """Reviews as scripted; the meta-review request (no schema) finds the endpoint failing."""

    def __call__(self, request: dict[str, Any]) -> Any:
        if extract_schema(request) is None:
            with self._lock:
                self.requests.append(request)
            raise RuntimeError("the meta-review's endpoint is down")  # answered as HTTP 500
        return super().__call__(request)


def test_review_command_meta_review_endpoint_failure_leaves_the_paper_for_the_next_run(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = MetaDownReviewer()
    out = tmp_path / "out"
    first, _, _ = papers(tmp_path)
    result = invoke(first, "-o", out, "--reviewers", "2", *llm_args(server))
    # it used to save the paper with meta_review null, exit 0: it never got a meta-review
    assert result.exit_code == 1, result.output
    assert "meta-review: unreachable" in result.output
    assert not (out / "reviews.jsonl").exists()
    server.responder = ScriptedReviewer()
    retry = invoke(first, "-o", out, "--reviewers", "2", *llm_args(server))
    assert retry.exit_code == 0, retry.output
    [record] = read_jsonl(out / "reviews.jsonl", PaperReview)
    assert record.meta_review


def long_papers(tmp_path: Path, count: int, words: int) -> list[Path]:
    """``count`` text papers of about ``words`` words each."""
    folder = tmp_path / "long"
    folder.mkdir()
    body = " ".join(f"word{i % 97}" for i in range(words))
    for index in range(count):
        (folder / f"paper-{index}.txt").write_text(
            f"# Paper {index}\n\n1 INTRODUCTION\n\n{body}\n", encoding="utf-8"
        )
    return sorted(folder.iterdir())


def spent_tokens(output: str) -> int:
    usage = json.loads(output[output.index("{") :])["usage"]
    return sum(row["prompt_tokens"] + row["completion_tokens"] for row in usage)


def test_review_command_budget_bounds_the_papers_in_flight_and_keeps_the_finished(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """It used to start every paper at once: 4 papers of 2,000 words under a budget of 16,000
    tokens spent about 20,000, then every meta-review was refused and no paper was saved."""
    server.responder = ScriptedReviewer()  # counts a word as a token
    out = tmp_path / "out"
    given = long_papers(tmp_path, 4, 2000)
    args = [*given, "-o", out, "--reviewers", "2", "review.max_tokens=64", *llm_args(server)]
    result = invoke(*args, "llm.budget_tokens=16000", "--json")
    assert result.exit_code == 1
    assert spent_tokens(result.stdout) <= 16000
    saved = finished_records(out)
    assert len(saved) >= 1 and all(r.meta_review for r in saved)
    assert "token budget: the paper may need" in result.output
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert len(finished_records(out)) == 4


class TruncatingOnce(ScriptedReviewer):
    """The clarity reviewer's answers are cut by the token limit until ``fixed``."""

    fixed = False

    def __call__(self, request: dict[str, Any]) -> Any:
        self.faults = {} if self.fixed else {"clarity": "truncated"}
        return super().__call__(request)


def test_review_command_a_review_cut_by_the_token_limit_is_retried_by_the_next_run(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    script = TruncatingOnce()
    server.responder = script
    out = tmp_path / "out"
    first, _, _ = papers(tmp_path)
    args = [first, "-o", out, "--reviewers", "3", *llm_args(server)]
    result = invoke(*args)
    # it used to save the paper scored from the other two reviews, for good, exit 0
    assert result.exit_code == 1, result.output
    assert "truncated" in result.output and "raise review.max_tokens" in result.output
    assert not finished_records(out)
    script.fixed = True
    retry = invoke(*args)
    assert retry.exit_code == 0, retry.output
    [record] = finished_records(out)
    assert len(record.reviews) == 3 and not record.unscored


def test_review_command_records_name_their_source_relative_to_the_argument(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedReviewer()
    out = tmp_path / "out"
    first, _, latex = papers(tmp_path)
    result = invoke(first, tmp_path / "in", "-o", out, *llm_args(server), "--reviewers", "1")
    assert result.exit_code == 2  # paper-a is given twice: refused, as before
    assert invoke(first, latex, "-o", out, *llm_args(server), "--reviewers", "1").exit_code == 0
    sources = {r.paper_id: r.source for r in finished_records(out)}
    # they used to be the absolute paths of the machine that reviewed them
    assert sources == {"paper-a": "paper-a.txt", "latex-paper": "latex-paper"}
    folder_out = tmp_path / "folder-out"
    assert (
        invoke(tmp_path / "in", "-o", folder_out, *llm_args(server), "--reviewers", "1").exit_code
        == 0
    )
    sources = {r.paper_id: r.source for r in read_jsonl(folder_out / "reviews.jsonl", PaperReview)}
    assert sources == {
        "paper-a": "paper-a.txt", "paper-b": "paper-b.md", "latex-paper": "latex-paper"
    }  # fmt: skip
