"""The build as steps: any step list runs in the runner, drops are counted by step and reason,
a resumed build continues from each paper's last finished step and reads no finished source."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

from papergym.llm.types import LLMTransportError
from papergym.recipes.draft import PaperDraft
from papergym.recipes.reading import SourceReader
from papergym.recipes.runner import Builder, settings_for
from papergym.recipes.steps import Reject, Step
from papergym.records import Instance, Stages

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers" / "sparse-attention-toy"


def papers(tmp_path: Path, count: int = 3) -> Path:
    """``count`` copies of the example paper with distinct titles (so distinct paper ids)."""
    root = tmp_path / "papers"
    for n in range(count):
        folder = root / f"paper-{n}"
        shutil.copytree(EXAMPLE, folder)
        main = folder / "main.tex"
        main.write_text(main.read_text().replace(r"\title{", rf"\title{{Copy {n}: "))
    return root


class ToyRecipe:
    """A three-step recipe with no LLM: stages, a gate, an instance; it counts its runs."""

    def __init__(self, fail_once: bool = False) -> None:
        self.runs: Counter[str] = Counter()
        self.fail_once = fail_once

    def steps(self) -> list[Step[PaperDraft]]:
        return [
            Step("stages", self.stages, ("stages",)),
            Step("gate", self.gate),
            Step("instance", self.instance, ("instance",)),
        ]

    async def stages(self, draft: PaperDraft) -> PaperDraft | Reject:
        self.runs["stages"] += 1
        text = draft.paper.abstract
        stages = Stages(
            paper_id=draft.paper.id,
            builder="extractive",
            research_goal=text,
            background=text,
            solution=text,
            experiment=text,
        )
        return draft.model_copy(update={"stages": stages})

    async def gate(self, draft: PaperDraft) -> PaperDraft | Reject:
        self.runs["gate"] += 1
        return Reject("copy 1 is not wanted") if "Copy 1" in draft.paper.title else draft

    async def instance(self, draft: PaperDraft) -> PaperDraft | Reject:
        self.runs["instance"] += 1
        if self.fail_once and self.runs["instance"] == 1:
            raise LLMTransportError("endpoint down")  # not a drop: retried by the next run
        from papergym.recipes.general import GENERAL_CRITERIA
        from papergym.records import Rubric

        paper = draft.paper
        instance = Instance(
            id=paper.id,
            recipe="papergym",
            builder="extractive",
            paper_id=paper.id,
            title=paper.title,
            source_path=paper.meta.source_path,
            question="Q?",
            reference_answer="R.",
            rubric=Rubric(specific=(), general=GENERAL_CRITERIA),
        )
        return draft.model_copy(update={"instance": instance})


def run(
    out: Path, source: Path, recipe: ToyRecipe
) -> tuple[int, int, int, Counter[tuple[str, str]]]:
    settings = settings_for("papergym", "extractive", None, paper_concurrency=1)
    builder = Builder(out=out, settings=settings, steps=recipe.steps())
    result = asyncio.run(builder.run([source]))
    return len(result.instances), len(result.failures), result.resumed, result.drops_by_step()


def test_a_new_step_list_runs_counts_drops_and_resumes_from_the_last_finished_step(
    tmp_path: Path,
) -> None:
    source, out = papers(tmp_path), tmp_path / "out"
    recipe = ToyRecipe(fail_once=True)
    instances, failed, _, drops = run(out, source, recipe)
    # paper-1 dropped by the gate; the first instance step met a failing endpoint
    assert (instances, failed) == (1, 1)
    assert drops == Counter({("gate", "copy 1 is not wanted"): 1})
    assert recipe.runs == Counter({"stages": 3, "gate": 3, "instance": 2})
    instances, failed, resumed, drops = run(out, source, recipe)
    assert (instances, failed, resumed) == (2, 0, 2)
    assert drops == Counter({("gate", "copy 1 is not wanted"): 1})
    # only the unfinished paper ran again, from after its saved stages (the gate saves nothing)
    assert recipe.runs == Counter({"stages": 3, "gate": 4, "instance": 3})
    assert (out / "dropped.jsonl").read_text().count('"step":"gate"') == 1


def test_a_resumed_build_reads_no_finished_source_and_rereads_a_changed_one(
    tmp_path: Path,
) -> None:
    source, out = papers(tmp_path), tmp_path / "out"
    assert run(out, source, ToyRecipe())[0] == 2
    reader = SourceReader.discover([source], out)
    assert [reader.open(i).known for i in range(3)] == [True, True, True]
    # same bytes, new times (a copy, a checkout): still known, by content
    main = source / "paper-0" / "main.tex"
    os.utime(main, ns=(1, 1))
    assert reader.open(0).known and reader.open(0).paper is None
    # changed content: read again, and the resumed build builds the new paper
    main.write_text(main.read_text().replace("Copy 0", "Copy 9"))
    opened = reader.open(0)
    assert not opened.known and opened.paper is not None and "Copy 9" in opened.paper.title
    recipe = ToyRecipe()
    instances, _, resumed, _ = run(out, source, recipe)
    assert (instances, resumed) == (2, 2)  # paper-2 and the dropped paper-1 were finished
    assert recipe.runs["stages"] == 1
    titles = [line for line in (out / "instances.jsonl").read_text().splitlines()]
    assert any("Copy 9" in t for t in titles) and not any("Copy 0" in t for t in titles)


def test_sources_that_cannot_be_read_are_recorded_once_and_not_parsed_again(
    tmp_path: Path,
) -> None:
    source, out = papers(tmp_path, 2), tmp_path / "out"
    (source / "broken.tar.gz").write_bytes(b"\x1f\x8b not gzip")
    first = run(out, source, ToyRecipe())
    assert first[3][("ingest", first_reason(out))] == 1
    reader = SourceReader.discover([source], out)
    broken = [i for i, (_, rel) in enumerate(reader.sources) if rel == "broken.tar.gz"]
    assert reader.open(broken[0]).known
    assert run(out, source, ToyRecipe())[3] == first[3]


def first_reason(out: Path) -> str:
    import json

    return str(json.loads((out / "dropped.jsonl").read_text().splitlines()[0])["reason"])


@pytest.mark.parametrize("builder", ["extractive", "llm"])
def test_every_recipe_list_ends_in_the_instance_step(builder: str) -> None:
    from papergym.llm.client import LLMClient
    from papergym.llm.config import BackendConfig, LLMConfig
    from papergym.recipes.pipeline import recipe_steps

    llm = LLMClient(LLMConfig(default=BackendConfig(model="m", base_url="http://127.0.0.1:9/v1")))
    for recipe in ("papergym", "innov", "design"):
        steps = recipe_steps(recipe, builder, llm)  # type: ignore[arg-type]
        assert steps[-1].produces == ("instance",)
        names = [s.name for s in steps]
        assert len(set(names)) == len(names)
    judged = [s.name for s in recipe_steps("papergym", "llm", llm, leakage_judge=True)]
    unjudged = [s.name for s in recipe_steps("papergym", "llm", llm, leakage_judge=False)]
    if builder == "llm":
        assert judged[-2:] == ["leakage", "instance"] and "leakage" not in unjudged


class SlowRecipe(ToyRecipe):
    """The toy recipe with a slow first step, so that two builders overlap on one paper."""

    async def stages(self, draft: PaperDraft) -> PaperDraft | Reject:
        await asyncio.sleep(0.5)
        return await super().stages(draft)


def test_two_tasks_given_the_same_paper_build_it_once(tmp_path: Path) -> None:
    """Two sources with the same content fall to two tasks (each sees only its share, so
    neither drops the other's as a duplicate): the second waits for the first's lock on the
    paper's folder and finds it finished, instead of building it a second time beside it."""
    root = papers(tmp_path, count=1)
    shutil.copytree(root / "paper-0", root / "paper-0-again")  # same content: same paper id
    out, recipe = tmp_path / "out", SlowRecipe()
    settings = settings_for("papergym", "extractive", None, paper_concurrency=1)

    async def both() -> None:
        tasks = [
            Builder(out=out, settings=settings, steps=recipe.steps(), share=lambda i, r=r: i == r)
            for r in (0, 1)
        ]
        await asyncio.gather(*(task.run([root]) for task in tasks))

    asyncio.run(both())
    assert recipe.runs == Counter({"stages": 1, "gate": 1, "instance": 1})
    assert len(list((out / "papers").iterdir())) == 1  # one paper, one folder
