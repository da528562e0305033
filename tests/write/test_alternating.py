"""``write.mode: alternating``: per section an outline step, then its body, each outline seeing the
bodies written so far; the default keeps one outline, then the bodies. Checked on the scripted
writer by the order of its calls and what each prompt holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.fakellm import FakeOpenAIServer
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.write.run import write_papers
from papergym.write.settings import WriteSection
from support.writer import BIB, ScriptedWriter

HEADINGS = ("Introduction", "Method", "Experiments", "Conclusion")  # the scripted outline's


@pytest.fixture
def scripted() -> Iterator[tuple[FakeOpenAIServer, ScriptedWriter]]:
    writer = ScriptedWriter()
    with FakeOpenAIServer() as running:
        running.responder = writer
        yield running, writer


def write(server: FakeOpenAIServer, tmp_path: Path, mode: str) -> Path:
    source = tmp_path / "in" / "attention.bib"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(BIB, encoding="utf-8")
    backend = BackendConfig(base_url=server.base_url, model="writer-m", max_retries=0)
    out = tmp_path / "out"
    run = write_papers(
        [source], out, WriteSection(mode=mode), LLMConfig(default=backend, cache=False)
    )
    assert not run.drops and not run.failures, (run.drops, run.failures)
    return out / "attention"


def test_alternating_outlines_each_section_after_the_bodies_before_it(
    scripted: tuple[FakeOpenAIServer, ScriptedWriter], tmp_path: Path
) -> None:
    server, writer = scripted
    folder = write(server, tmp_path, "alternating")
    kinds = [kind for kind, _ in writer.order]
    assert kinds == ["outline", *["section_outline", "section"] * len(HEADINGS), "abstract"]
    steps = writer.order[1:-1]
    for number, heading in enumerate(HEADINGS):
        (_, outline_prompt), (_, body_prompt) = steps[2 * number], steps[2 * number + 1]
        assert f'section {number + 1}, "{heading}"' in outline_prompt
        # the outline sees exactly the bodies written before it
        for earlier in HEADINGS[:number]:
            assert f"\\section{{{earlier}}}" in outline_prompt.split("The next section")[0]
        assert f"\\section{{{heading}}}\n" not in outline_prompt
        # the body is written from the section's new outline
        assert f"Its purpose: Refined plan for {heading}." in body_prompt
    assert (folder / "sections" / "00.outline.json").is_file()
    assert "Refined plan for Method." in (folder / "paper.tex").read_text(encoding="utf-8")


def test_the_default_writes_one_outline_then_the_bodies(
    scripted: tuple[FakeOpenAIServer, ScriptedWriter], tmp_path: Path
) -> None:
    server, writer = scripted
    assert WriteSection().mode == "outline_then_body"
    write(server, tmp_path, "outline_then_body")
    assert [kind for kind, _ in writer.order] == ["outline", *["section"] * 4, "abstract"]


def test_a_rerun_resumes_and_another_mode_is_refused(
    scripted: tuple[FakeOpenAIServer, ScriptedWriter], tmp_path: Path
) -> None:
    server, writer = scripted
    write(server, tmp_path, "alternating")
    calls = len(writer.order)
    write(server, tmp_path, "alternating")
    assert len(writer.order) == calls  # a finished paper costs no call
    with pytest.raises(BadInputError, match="mode"):
        write(server, tmp_path, "outline_then_body")
