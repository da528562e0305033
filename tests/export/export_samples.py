"""Instances written by the export tests: every recipe and builder, nested leakage verdicts,
unicode, missing optional fields — the shapes an export could lose."""

from __future__ import annotations

from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import (
    BuilderName,
    Criterion,
    Drop,
    Instance,
    LeakageVerdict,
    RecipeName,
    Rubric,
)


def criteria(paper: str, method: int, *, verdicts: bool = True) -> tuple[Criterion, ...]:
    """Ten criteria, ``method`` of them about the method, ranked 1..10 (stored out of order)."""
    items = []
    for rank in (3, 1, 2, 4, 5, 6, 7, 8, 9, 10):
        leakage: tuple[LeakageVerdict, ...] = ()
        if verdicts:
            leakage = (
                LeakageVerdict(method="overlap", leaked=rank == 1, score=rank / 10, reason=""),
                LeakageVerdict(
                    method="judge",
                    leaked=None if rank == 10 else rank == 2,
                    reason=f"criterion {rank}: «inferable?» 数据",
                ),
            )
        items.append(
            Criterion(
                id=f"{paper}-c{rank}",
                text=f"The plan for {paper} states step {rank} — naïve | exact.",
                dimension="method" if rank <= method else "experiment",
                origin="answer" if rank % 2 else "question",
                rank=rank,
                leakage=leakage,
            )
        )
    return tuple(items)


def instance(
    paper: str,
    *,
    recipe: RecipeName = "papergym",
    builder: BuilderName = "llm",
    method: int = 6,
    domain: str = "Computer science",
    verdicts: bool = True,
    note: str = "",
) -> Instance:
    return Instance(
        id=Instance.make_id(recipe, builder, paper),
        recipe=recipe,
        builder=builder,
        paper_id=paper,
        title=f"Paper {paper}",
        domain=domain,
        arxiv_id="2501.00001" if paper.endswith("a") else None,
        source_path=f"/papers/{paper}.tar.gz",
        question=f"In {domain}, current methods miss a gap for {paper}. Propose a research plan.",
        reference_answer=f"We would build the method of {paper} and test it carefully.\nSecond line.",
        rubric=Rubric(
            specific=criteria(paper, method, verdicts=verdicts),
            general=GENERAL_CRITERIA,
            note=note,
        ),
        warnings=("short background",) if recipe == "innov" else (),
    )


def sample_instances() -> list[Instance]:
    """Three instances: one per recipe, the last built extractively without verdicts."""
    return [
        instance("pa", method=6),
        instance("pb", recipe="innov", method=10, domain="Physics"),
        instance("pc", recipe="design", builder="extractive", method=0, domain="", verdicts=False),
    ]


def sample_drops() -> list[Drop]:
    return [
        Drop(source="x.tar.gz", step="ingest", reason="no main file"),
        Drop(source="y", step="gates", reason="numbers in reference", paper_id="py"),
        Drop(source="y", step="gates", reason="numbers in reference", paper_id="py"),
        Drop(source="z", step="gates", reason="question mentions method", paper_id="pz"),
    ]


def weighted_instance() -> Instance:
    """An instance from a plain document whose rubric has weights and two pitfalls."""
    base = instance("pd", domain="Agronomy")
    weights = (3.0, 2.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -2.0, -0.5)
    specific = tuple(
        c.model_copy(update={"weight": w})
        for c, w in zip(base.rubric.specific, weights, strict=True)
    )
    return base.model_copy(
        update={
            "source_kind": "document",
            "arxiv_id": None,
            "rubric": base.rubric.model_copy(update={"specific": specific}),
        }
    )
