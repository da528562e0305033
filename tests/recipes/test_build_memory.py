"""A build's memory does not grow with its corpus: the per-process sentence-vector cache is
bounded by recency, and the final overlap screen embeds the instances in bounded batches."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import papergym.audit.overlap as overlap
from papergym.recipes import runner, sections
from papergym.recipes.output import BuildSettings
from papergym.records import Instance
from support.instances import rubric_instance


@pytest.fixture
def counted_embeddings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace the model with one that counts what it embeds, in a small fresh cache."""
    embedded: list[str] = []

    def fake_embed(texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        embedded.extend(texts)
        rows = [np.random.default_rng(len(t)).normal(size=384) for t in texts]
        return np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32)

    monkeypatch.setattr(sections, "embed", fake_embed)
    monkeypatch.setattr(sections, "_CACHE_LIMIT", 20)
    sections.clear_embedding_cache()
    yield embedded
    sections.clear_embedding_cache()


def test_the_vector_cache_stays_bounded_and_keeps_what_is_in_use(
    counted_embeddings: list[str],
) -> None:
    in_use = "the stage description every paper compares against"
    for paper in range(30):  # papers whose sentences pass through, while one text stays in use
        sections.cached_vectors([in_use, *(f"paper {paper} sentence {n}" for n in range(5))])
        assert len(sections._CACHE) <= 20
    assert counted_embeddings.count(in_use) == 1  # never evicted: clearing all would lose it
    again = sections.cached_vectors(["paper 29 sentence 4"])
    assert again.shape == (1, 384) and counted_embeddings.count("paper 29 sentence 4") == 1


def test_the_final_screen_embeds_bounded_batches_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[int] = []

    def fake_screen(instances: Sequence[Instance]) -> list[Instance]:
        batches.append(len(instances))
        return [i.model_copy(update={"title": i.title + " (screened)"}) for i in instances]

    monkeypatch.setattr(overlap, "screen_instances", fake_screen)
    monkeypatch.setattr(runner, "SCREEN_BATCH", 4)
    instances = [
        rubric_instance(
            f"p{n}", ["The plan does x."], question="Q?", reference_answer="A.", title=f"T{n}"
        )
        for n in range(10)
    ]
    for instance in instances:
        (tmp_path / "papers" / instance.paper_id).mkdir(parents=True)
    builder = runner.Builder(out=tmp_path, settings=BuildSettings())
    screened = list(builder._screen(instances))
    assert batches == [4, 4, 2]
    assert [i.title for i in screened] == [f"T{n} (screened)" for n in range(10)]
    assert list(builder._screen(instances)) == screened and batches == [4, 4, 2]  # none again


def test_the_assembly_streams_instances_and_returns_them_read_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each screened batch is written before the next paper's instance is read: the assembly
    holds a batch, not the corpus; the result reads instances.jsonl again on each pass."""
    loaded_at_screen: list[int] = []
    loaded: list[str] = []
    load = runner._load

    def counting_load(path: Path, model: type) -> object:
        if model is Instance and path.name == "instance.json":
            loaded.append(path.parent.name)
        return load(path, model)

    def fake_screen(instances: Sequence[Instance]) -> list[Instance]:
        loaded_at_screen.append(len(loaded))
        return list(instances)

    monkeypatch.setattr(runner, "_load", counting_load)
    monkeypatch.setattr(overlap, "screen_instances", fake_screen)
    monkeypatch.setattr(runner, "SCREEN_BATCH", 4)
    run = runner._Run()
    for n in range(10):
        instance = rubric_instance(
            f"p{n}", ["The plan does x."], question="Q?", reference_answer="A.", title=f"T{n}"
        )
        instance = instance.model_copy(update={"source_path": f"s{n}.tex"})
        runner._save(tmp_path / "papers" / instance.paper_id / "instance.json", instance)
        run.items.append((f"s{n}.tex", instance.paper_id))
    builder = runner.Builder(out=tmp_path, settings=BuildSettings())
    instances, drops = builder._assemble(run, [])
    assert loaded_at_screen == [4, 8, 10] and drops == []
    assert not isinstance(instances, list) and len(instances) == 10
    assert [i.title for i in instances] == [f"T{n}" for n in range(10)]
    assert instances[-1].title == "T9" and [i.title for i in instances[1:3]] == ["T1", "T2"]
    assert [i.title for i in instances] == [f"T{n}" for n in range(10)]  # a second pass


def test_the_assembly_removes_what_a_killed_assembly_left(tmp_path: Path) -> None:
    """A hard kill while instances.jsonl was written leaves its hidden temporary file; the next
    assembly writes the file and removes the leftover (and nothing else beside it)."""
    instance = rubric_instance(
        "p0", ["The plan does x."], question="Q?", reference_answer="A.", title="T0"
    )
    instance = instance.model_copy(update={"source_path": "s0.tex"})
    runner._save(tmp_path / "papers" / instance.paper_id / "instance.json", instance)
    leftover = tmp_path / ".instances.jsonl.0123456789ab.tmp"
    leftover.write_text('{"half": ', encoding="utf-8")
    other = tmp_path / ".notes.jsonl.0123456789ab.tmp"  # not one of the build's files
    other.write_text("kept", encoding="utf-8")
    run = runner._Run(items=[("s0.tex", instance.paper_id)])
    builder = runner.Builder(out=tmp_path, settings=BuildSettings())
    builder._screen = lambda instances: iter(instances)  # type: ignore[method-assign]
    instances, _ = builder._assemble(run, [])
    assert [i.paper_id for i in instances] == [instance.paper_id]
    assert not leftover.exists() and other.read_text(encoding="utf-8") == "kept"
    assert sorted(p.name for p in tmp_path.glob(".*.tmp")) == [other.name]
