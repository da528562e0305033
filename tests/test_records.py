from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from papergym.errors import BadInputError
from papergym.jsonl import append_jsonl, read_jsonl, write_jsonl
from papergym.records import (
    Criterion,
    Instance,
    Paper,
    PaperMeta,
    Rubric,
    Section,
    Stages,
    Verdict,
)


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


# --- criterion weights and instance provenance ---------------------------------------------

OLD_INSTANCE = Path(__file__).parent / "reward" / "data" / "instance_v0.jsonl"


def make_criterion(weight: float | None = None) -> Criterion:
    extra = {} if weight is None else {"weight": weight}
    return Criterion(
        id="c1", text="The plan does X.", dimension="method", origin="answer", rank=1, **extra
    )


def test_criterion_weight_defaults_to_one_and_its_sign_is_the_polarity() -> None:
    assert make_criterion().weight == 1.0 and make_criterion().polarity == "desired"
    pitfall = make_criterion(-2.5)
    assert pitfall.pitfall and pitfall.polarity == "pitfall"
    assert "polarity" not in pitfall.model_dump()  # derived from the sign, never stored twice


@pytest.mark.parametrize("weight", [0.0, -0.0, float("nan"), float("inf"), float("-inf")])
def test_zero_and_non_finite_weights_are_refused(weight: float) -> None:
    with pytest.raises(ValidationError, match="weight"):
        make_criterion(weight)
    with pytest.raises(ValidationError, match="weight"):
        Verdict(criterion_id="c1", passed=True, weight=weight)


def test_rubric_knows_whether_it_is_weighted() -> None:
    plain = Rubric(specific=(make_criterion(),), general=())
    weighted = Rubric(
        specific=(make_criterion(), make_criterion(-1).model_copy(update={"id": "h"})), general=()
    )
    assert not plain.weighted and plain.pitfalls == ()
    assert weighted.weighted and [c.id for c in weighted.pitfalls] == ["h"]
    assert Rubric(specific=(make_criterion(2),), general=()).weighted  # no pitfall, still weighted


def test_old_instance_lines_load_as_paper_instances_of_weight_one(tmp_path: Path) -> None:
    raw = OLD_INSTANCE.read_text()
    assert '"weight"' not in raw and '"source_kind"' not in raw
    (old,) = read_jsonl(OLD_INSTANCE, Instance)
    assert old.source_kind == "paper" and old.source_id == old.paper_id
    assert {c.weight for c in old.rubric.specific} == {1.0}
    # written back, the new fields appear with their defaults and read back equal
    write_jsonl(tmp_path / "again.jsonl", [old])
    assert read_jsonl(tmp_path / "again.jsonl", Instance) == [old]


def test_an_instance_can_come_from_a_plain_document() -> None:
    doc = Instance(
        id="d1",
        recipe="papergym",
        builder="llm",
        paper_id="doc-hash",
        source_kind="document",
        question="Q?",
        reference_answer="A.",
        rubric=Rubric(specific=(make_criterion(),), general=()),
    )
    assert doc.title == "" and doc.arxiv_id is None and doc.source_id == "doc-hash"
    assert Instance.model_validate_json(doc.model_dump_json()) == doc
    with pytest.raises(ValidationError, match="source_kind"):
        Instance.model_validate({**doc.model_dump(), "source_kind": "tweet"})


OLD_STAGES_LINE = (
    '{"paper_id": "p1", "builder": "llm", "field": "Machine learning: efficient attention.", '
    '"background": "Attention is quadratic.", "solution": "A router.", '
    '"experiment": "Dense baselines.", "sources": {"field": ["Abstract"]}}'
)


def test_stages_written_with_the_old_field_stage_load_as_legacy(tmp_path: Path) -> None:
    path = tmp_path / "stages.jsonl"
    path.write_text(OLD_STAGES_LINE + "\n", encoding="utf-8")
    (old,) = read_jsonl(path, Stages)
    # the old field text is kept as what it was, never taken for a goal
    assert old.legacy and old.legacy_field == "Machine learning: efficient attention."
    assert old.research_goal == "" and old.background == "Attention is quadratic."
    write_jsonl(tmp_path / "again.jsonl", [old])
    assert read_jsonl(tmp_path / "again.jsonl", Stages) == [old]  # and it stays legacy
    new = Stages(
        paper_id="p", builder="llm", research_goal="G.", background="B.", solution="S.",
        experiment="E.",
    )  # fmt: skip
    assert not new.legacy and new.discipline == "" and new.subfield == ""
    with pytest.raises(ValidationError, match="field"):  # both at once is not a legacy file
        Stages.model_validate({**new.model_dump(), "field": "x"})
