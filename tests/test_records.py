from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from papergym.errors import BadInputError
from papergym.jsonl import append_jsonl, read_jsonl, write_jsonl
from papergym.records import Paper, PaperMeta, Section


def make_paper(text: str = "Body text here.", source: str = "a") -> Paper:
    sections = (
        Section(heading="Intro", level=1, text=text),
        Section(heading="Setup", level=2, path=("Intro",), text="More words."),
    )
    return Paper.create(
        title="T", abstract="An abstract.", sections=sections, meta=PaperMeta(source_path=source)
    )


def test_records_are_frozen_and_strict() -> None:
    paper = make_paper()
    with pytest.raises(ValidationError):
        paper.title = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Section(heading="x", level=1, text="y", unknown=1)  # type: ignore[call-arg]


def test_id_is_a_content_hash_independent_of_where_the_paper_came_from() -> None:
    assert make_paper(source="a").id == make_paper(source="b").id
    assert make_paper(text="Other text.").id != make_paper().id


def test_word_counts() -> None:
    paper = make_paper()
    assert paper.sections[0].words == 3
    assert paper.words == 2 + 3 + 2
    assert paper.top_level_headings() == ["Intro"]


def test_jsonl_round_trip(tmp_path: Path) -> None:
    papers = [make_paper(), make_paper(text="Second paper.")]
    path = tmp_path / "deep" / "papers.jsonl"
    assert write_jsonl(path, papers) == 2
    assert read_jsonl(path, Paper) == papers
    assert '"words"' not in path.read_text()  # derived fields are not stored
    append_jsonl(path, make_paper(text="Third."))
    assert len(read_jsonl(path, Paper)) == 3


def test_failed_write_leaves_no_partial_file(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    write_jsonl(path, [make_paper()])

    def broken() -> object:
        yield make_paper(text="new")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        write_jsonl(path, broken())  # type: ignore[arg-type]
    assert len(read_jsonl(path, Paper)) == 1  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["papers.jsonl"]


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "papers.jsonl"
    write_jsonl(path, [make_paper()])
    with path.open("a") as handle:
        handle.write("{not json\n")
    with pytest.raises(BadInputError, match=r"papers\.jsonl:2: not valid JSON"):
        read_jsonl(path, Paper)


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file"):
        read_jsonl(tmp_path / "nope.jsonl", Paper)
