"""``papergym write BIB... -o OUT`` against a scripted writer on a loopback server: the paper,
its citations and simulated numbers, --plan-only, drops, resuming, and the round trip through
``papergym ingest`` and ``papergym review``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.jsonl import read_jsonl
from papergym.records import Paper
from papergym.review.records import PaperReview
from papergym.write.marking import numbers_in_plan, reported_numbers
from papergym.write.records import Outline, WriteDrop, WrittenPaper
from support.reviewer import ScriptedReviewer
from support.writer import BIB, GHOST_KEY, ScriptedWriter

runner = CliRunner()
KEYS = {"vaswani2017attention", "he2016resnet", "kingma2014adam"}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def bib(tmp_path: Path, name: str = "attention.bib", text: str = BIB) -> Path:
    path = tmp_path / "in" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write(server: FakeOpenAIServer, *args: str, cache: bool = False) -> object:
    flags = ["--base-url", server.base_url, "--model", "writer-m", "--json"]
    flags += ["llm.default.retry_base_delay=0", "llm.default.max_retries=0"]
    return runner.invoke(app, ["write", *args, *flags, *([] if cache else ["--no-cache"])])


def chat_calls(server: FakeOpenAIServer) -> int:
    return len([r for r in server.requests if "messages" in r])


def test_writes_a_paper_with_known_cites_and_marked_numbers(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedWriter()
    out = tmp_path / "out"
    result = write(server, str(bib(tmp_path)), "-o", str(out), "--topic", "attention")
    assert result.exit_code == 0, result.output
    folder = out / "attention"
    assert {p.name for p in folder.iterdir()} >= {
        "paper.tex", "references.bib", "outline.json", "metadata.json", "sections",
    }  # fmt: skip
    tex = (folder / "paper.tex").read_text()
    keys = {k.strip() for m in re.findall(r"\\cite[a-z]*\{([^}]*)\}", tex) for k in m.split(",")}
    assert keys and keys <= KEYS and GHOST_KEY not in tex
    meta = WrittenPaper.model_validate_json((folder / "metadata.json").read_text())
    assert meta.removed_cites and set(meta.removed_cites) == {GHOST_KEY}
    assert meta.untitled_dropped == 1 and meta.references == 3
    # every number of the results-bearing parts is marked, in the text and in the metadata
    assert meta.simulated_results
    values = [n.value for n in meta.simulated_numbers]
    assert {"91.2", "88.5", "3", "2.7"} <= set(values)
    assert tex.count("\\textbf{Simulated results.}") == 2  # experiments and conclusion
    experiments = tex.split("\\section{Experiments}")[1].split("\\section{")[0]
    assert reported_numbers(experiments) == []  # none left unmarked
    assert "\\simulated{91.2}" in experiments
    assert "ResNet-50" in tex  # a name, not a result: not marked
    assert "\\simulated{4}\\%" in experiments  # a bare % would have commented the line out
    assert tex.count("\\section{Introduction}") == 1  # the heading the model repeated is gone
    outline = Outline.model_validate_json((folder / "outline.json").read_text())
    assert [s.heading for s in outline.sections] == list(meta.sections)


BROKEN = """
@article{nocomma title={Layer Normalization}, year={2016}}
@article{glued, title={Batch Normalization} year={2015}}
"""


def test_unparseable_entries_are_reported_and_counted(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    # issue 20 #15: broken entries used to vanish without a word or a count
    server.responder = ScriptedWriter()
    out = tmp_path / "out"
    result = write(server, str(bib(tmp_path, text=BIB + BROKEN)), "-o", str(out))
    assert result.exit_code == 0, result.output
    [warning] = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    assert "attention.bib: 2 entries could not be parsed (first at line" in warning
    assert "writing from 3 usable references" in warning
    meta = WrittenPaper.model_validate_json((out / "attention" / "metadata.json").read_text())
    assert meta.unparsed_entries == 2 and meta.references == 3
    assert [u.split(" ")[0] for u in meta.unparsed] == ["nocomma", "glued"]
    [summary] = json.loads(result.stdout)["bibs"]
    assert summary["unparsed_entries"] == 2 and summary["untitled"] == 1


def test_only_the_offered_references_are_converted(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 20 #17: a 100,000-entry .bib had every entry converted though 100 are offered
    from papergym.sources import bib as bib_module

    converted: list[str] = []
    real = bib_module.latex_to_text
    monkeypatch.setattr(bib_module, "latex_to_text", lambda t: converted.append(t) or real(t))
    extra = "".join(
        f"@article{{extra{i}, title={{Extra {i}}}, abstract={{Abstract of extra {i}}}}}\n"
        for i in range(300)
    )
    server.responder = ScriptedWriter()
    out = tmp_path / "out"
    source = str(bib(tmp_path, text=BIB + extra))
    result = write(server, source, "-o", str(out), "write.max_references=3")
    assert result.exit_code == 0, result.output
    assert not [t for t in converted if "xtra" in t]  # none of the 300 past the first three
    meta = WrittenPaper.model_validate_json((out / "attention" / "metadata.json").read_text())
    assert meta.references == 303  # still counted


def test_plan_only_has_no_result_numbers(server: FakeOpenAIServer, tmp_path: Path) -> None:
    script = ScriptedWriter(plan_digits_once=True)
    server.responder = script
    out = tmp_path / "out"
    result = write(server, str(bib(tmp_path)), "-o", str(out), "--plan-only")
    assert result.exit_code == 0, result.output
    tex = (out / "attention" / "paper.tex").read_text()
    meta = WrittenPaper.model_validate_json((out / "attention" / "metadata.json").read_text())
    assert (
        meta.plan_only
        and not meta.simulated_numbers
        and "\\simulated{" not in tex.split("\\begin{document}")[1]
    )
    for part in ("Experiments", "Conclusion"):
        body = tex.split(f"\\section{{{part}}}")[1].split("\\section{")[0]
        assert numbers_in_plan(body.split("\\bibliographystyle")[0]) == []
    # each plan came first with numerals: the validator sent it back and the repair was used
    assert script.calls["section"] == 4 + 2


def test_outline_invalid_after_repairs_is_a_drop(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.responder = ScriptedWriter(bad_outline=True)
    out = tmp_path / "out"
    good = bib(tmp_path, "good.bib")
    result = write(server, str(bib(tmp_path)), str(good), "-o", str(out))
    # the scripted writer gives every bibliography the bad outline: both are drops, exit 2
    assert result.exit_code == 2, result.output
    [first, second] = read_jsonl(out / "drops.jsonl", WriteDrop)
    assert first.step == "outline" and GHOST_KEY in first.reason
    assert (out / "attention" / "drop.json").is_file()
    assert not (out / "attention" / "paper.tex").exists()
    before = chat_calls(server)
    again = write(server, str(bib(tmp_path)), str(good), "-o", str(out))
    assert again.exit_code == 2 and chat_calls(server) == before  # drops are kept, not retried
    assert second.name == "good"


def test_rerun_makes_no_calls_and_resumes_per_section(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedWriter()
    out = tmp_path / "out"
    source = str(bib(tmp_path))
    assert write(server, source, "-o", str(out)).exit_code == 0
    first = chat_calls(server)
    assert first == 1 + 4 + 1  # outline, four sections, abstract
    paper = (out / "attention" / "paper.tex").read_text()
    result = write(server, source, "-o", str(out))  # --no-cache: only the saved steps help
    assert result.exit_code == 0 and chat_calls(server) == first
    assert json.loads(result.stdout)["usage"] == [] or all(
        row["calls"] == 0 for row in json.loads(result.stdout)["usage"]
    )
    # an interrupted run: the third section and the paper were never saved
    (out / "attention" / "sections" / "02.json").unlink()
    (out / "attention" / "paper.tex").unlink()
    assert write(server, source, "-o", str(out)).exit_code == 0
    assert chat_calls(server) == first + 1
    assert (out / "attention" / "paper.tex").read_text() == paper


def test_other_settings_in_the_same_folder_are_refused(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedWriter()
    out = tmp_path / "out"
    source = str(bib(tmp_path))
    assert write(server, source, "-o", str(out)).exit_code == 0
    result = write(server, source, "-o", str(out), "--plan-only")
    assert result.exit_code == 2 and "plan_only" in result.output


def test_written_paper_round_trips_through_ingest_and_review(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedWriter()
    out = tmp_path / "out"
    assert write(server, str(bib(tmp_path)), "-o", str(out)).exit_code == 0
    folder = out / "attention"
    ingested = runner.invoke(app, ["ingest", str(folder), "-o", str(tmp_path / "ing")])
    assert ingested.exit_code == 0, ingested.output
    [paper] = read_jsonl(tmp_path / "ing" / "papers.jsonl", Paper)
    meta = WrittenPaper.model_validate_json((folder / "metadata.json").read_text())
    assert paper.title == meta.title
    assert "improves accuracy" in paper.abstract
    assert paper.top_level_headings() == list(meta.sections)
    assert all(s.text.strip() for s in paper.sections)
    server.responder = ScriptedReviewer(ratings={"empirical": 8, "theory": 6})
    review_args = ["review", str(folder), "-o", str(tmp_path / "rev"), "--reviewer", "llm"]
    review_args += ["--base-url", server.base_url, "--model", "reviewer-m", "--no-cache"]
    reviewed = runner.invoke(app, review_args)
    assert reviewed.exit_code == 0, reviewed.output
    [review] = read_jsonl(tmp_path / "rev" / "reviews.jsonl", PaperReview)
    assert review.reviews and not review.unscored and review.score is not None
    reviewed_text = " ".join(
        m["content"] for r in server.requests if "messages" in r for m in r["messages"]
    )
    assert "Attention for Residual Networks" in reviewed_text  # the written paper was reviewed


def test_endpoint_failure_is_not_a_drop_and_the_rerun_resumes(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = ScriptedWriter()
    server.script("ok", "ok", "500")  # outline, section 1, then section 2 fails
    out = tmp_path / "out"
    source = str(bib(tmp_path))
    result = write(server, source, "-o", str(out))
    assert result.exit_code == 1
    assert "run the same command again" in result.output
    assert not (out / "attention" / "drop.json").exists()
    assert sorted(p.name for p in (out / "attention" / "sections").iterdir()) == ["00.json"]
    before = chat_calls(server)
    assert write(server, source, "-o", str(out)).exit_code == 0
    assert chat_calls(server) - before == 3 + 1  # sections 2-4 and the abstract, nothing again


def test_topic_reaches_the_outline_prompt(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.responder = ScriptedWriter()
    topic = "cheap attention for long documents"
    result = write(server, str(bib(tmp_path)), "-o", str(tmp_path / "out"), "--topic", topic)
    assert result.exit_code == 0, result.output
    [outline_request] = [
        r for r in server.requests
        if "messages" in r and r["messages"][1]["content"].startswith("Plan a research paper")
    ]  # fmt: skip
    assert f"The paper's topic: {topic}" in outline_request["messages"][1]["content"]
    meta = json.loads(result.stdout)["written"][0]
    assert meta["topic"] == topic
