"""Labels by construction: each answer's true verdicts follow from how it was made."""

from __future__ import annotations

from pathlib import Path

from papergym.calibrate.construct import constructed_labels, criterion_sources, labelled_set
from papergym.calibrate.labels import read_labels
from papergym.records import Instance
from papergym.reward.answers import read_instances
from support.instances import rubric_instance

SOURCES = [
    "We fit a lasso of wages on school entry age.",
    "We cluster standard errors by county.",
    "We test the model on the 2020 cohort only.",
    "We compare against a plain difference in differences.",
]


def instance(ident: str, sentences: list[str]) -> Instance:
    criteria = [
        "The plan specifies that " + s[0].lower() + s[1:].replace("We ", "the plan ")
        for s in sentences
    ]
    return rubric_instance(
        ident,
        criteria,
        question="Q?",
        reference_answer="Intro sentence about nothing. " + " ".join(sentences),
        title=ident,
    )


PAPER = instance("a", SOURCES)
OTHER = instance(
    "b",
    [
        "We observe the galaxy with a radio telescope.",
        "We model the noise as a Gaussian process.",
    ],
)


def test_each_criterion_finds_its_own_source_sentence() -> None:
    sources = criterion_sources(PAPER)
    assert [sources[c.id] for c in PAPER.rubric.specific] == SOURCES


def test_a_requirement_form_criterion_finds_the_sentence_holding_its_phrases() -> None:
    # the current extractive builder names phrases of its sentence, not a copy of it
    requirement = rubric_instance(
        "r",
        ["The plan covers: lasso; school entry age.", "The plan covers: standard errors; county."],
        question="Q?",
        reference_answer="Intro sentence about nothing. " + " ".join(SOURCES),
        title="r",
    )
    sources = criterion_sources(requirement)
    assert list(sources.values()) == SOURCES[:2]
    # a phrase in no sentence: no source, so no label
    missing = rubric_instance(
        "m",
        ["The plan covers: quantum annealing."],
        question="Q?",
        reference_answer=" ".join(SOURCES),
        title="m",
    )
    assert criterion_sources(missing) == {}


def test_labels_follow_the_construction() -> None:
    labels = constructed_labels(PAPER, OTHER, seed=0)
    by_kind: dict[str, list[tuple[str, int]]] = {}
    for x in labels:
        by_kind.setdefault(x.note, []).append((x.criterion_id, x.met))
    ids = [c.id for c in PAPER.rubric.specific]
    half_a, half_b = ids[0::2], ids[1::2]
    assert by_kind["construction: reference"] == [(c, 1) for c in ids]
    assert dict(by_kind["construction: drop-half"]) == {c: int(c in half_a) for c in ids}
    assert dict(by_kind["construction: swap-half"]) == {c: int(c in half_b) for c in ids}
    assert by_kind["construction: word-salad"] == [(c, 0) for c in ids]
    assert by_kind["construction: other-paper"] == [(c, 0) for c in ids]


def test_answers_hold_exactly_the_sources_of_met_criteria() -> None:
    sources = criterion_sources(PAPER)
    for x in constructed_labels(PAPER, OTHER, seed=0):
        if x.note.endswith("word-salad"):
            assert sources[x.criterion_id] not in x.answer
            assert sorted(sources[x.criterion_id].rstrip(".").split()) == sorted(
                next(
                    s.rstrip(".").split()
                    for s in x.answer.split(". ")
                    if sorted(s.rstrip(".").split())
                    == sorted(sources[x.criterion_id].rstrip(".").split())
                )
            )
        else:
            assert (sources[x.criterion_id] in x.answer) == (x.met == 1)


def test_labelled_set_pairs_each_instance_with_another_paper() -> None:
    labels = labelled_set([PAPER, OTHER])
    assert {x.instance_id for x in labels} == {"a", "b"}
    assert len(labels) == 5 * (len(SOURCES) + 2)


FIXTURE = Path(__file__).resolve().parents[2] / "examples" / "judge-labels"


def test_the_shipped_labelled_set_reads_and_every_criterion_has_both_verdicts() -> None:
    instances = read_instances(FIXTURE / "instances.jsonl")
    labels = read_labels(FIXTURE / "labels.jsonl", instances)
    verdicts: dict[tuple[str, str], set[int]] = {}
    for x in labels:
        verdicts.setdefault((x.instance_id, x.criterion_id), set()).add(x.met)
    assert verdicts and all(v == {0, 1} for v in verdicts.values())
    assert all(x.note.startswith("construction: ") for x in labels)
    assert (FIXTURE / "labels.jsonl").stat().st_size < 200_000


def test_the_shipped_labelled_set_is_what_construction_makes() -> None:
    instances = list(read_instances(FIXTURE / "instances.jsonl").values())
    made = labelled_set(instances, seed=0)
    shipped = read_labels(FIXTURE / "labels.jsonl", {i.id: i for i in instances})
    assert made == shipped
