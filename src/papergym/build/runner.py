"""The build runner: owns the output folder, resume, concurrency, drops and progress.

Layout of ``OUT/``::

    config.yaml                 the resolved configuration (no secrets)
    papers/<paper_id>/          per paper: paper.json, stages.json, then instance.json or drop.json
    instances.jsonl             every instance, assembled from papers/ at the end
    dropped.jsonl               every rejection: source, step, reason
    card.md, card.json          the dataset card

A paper is finished once it has instance.json or drop.json, written atomically; a re-run skips
finished papers and re-uses stages.json, and the LLM response cache makes any repeated call free,
so killing a build at any point and running the same command again finishes it with no
duplicates and no repeated calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from papergym import __version__
from papergym.build.llm_recipe import BuildDropError, LLMBuilder
from papergym.errors import BadInputError
from papergym.ingestion import ingest_sources
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import LLMError, Role
from papergym.llm.usage import UsageTracker
from papergym.records import BuilderName, Drop, Instance, Paper, RecipeName, Stages

ProgressHook = Callable[[str, int | None, str], None]  # (step, total or None, item) → advance


class BuildSettings(BaseModel):
    """Everything that decides what a build produces; saved as config.yaml."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recipe: RecipeName = "papergym"
    builder: BuilderName = "extractive"
    limit: int | None = None
    max_unit_words: int = 1200
    paper_concurrency: int = 16
    leakage_judge: bool = True  # LLM builds: SPEC §2 step 9 verdict per criterion, one call each
    models: dict[str, str] = {}  # role → "backend:model", so a different model is a different build
    papergym_version: str = __version__

    def identity(self) -> dict[str, Any]:
        """The fields a resumed build must share with the one that wrote the folder."""
        return {
            "recipe": self.recipe,
            "builder": self.builder,
            "models": self.models,
            "max_unit_words": self.max_unit_words,
        }


def settings_for(
    recipe: RecipeName, builder: BuilderName, llm: LLMConfig | None, **extra: Any
) -> BuildSettings:
    models: dict[str, str] = {}
    if builder == "llm" and llm is not None:
        roles: tuple[Role, ...] = ("extractor", "writer", "rubric", "judge")
        for role in roles:
            backend = llm.roles.get(role, llm.default)
            if backend is not None:
                models[role] = f"{backend.backend}:{backend.model}"
    return BuildSettings(recipe=recipe, builder=builder, models=models, **extra)


@dataclass
class BuildResult:
    instances: list[Instance]
    drops: list[Drop]
    papers: int
    usage: UsageTracker | None
    resumed: int = 0
    out: Path = Path()


def prepare_output(out: Path, settings: BuildSettings) -> bool:
    """Create ``out`` or accept it for resuming; True when resuming. Refuses foreign folders."""
    config_path = out / "config.yaml"
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "output path exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not config_path.is_file():
            raise BadInputError(
                out, "output folder is not empty and holds no PaperGym build (config.yaml)"
            )
        previous = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
        old = BuildSettings.model_validate(
            {**previous, "papergym_version": previous.get("papergym_version", "")}
        )
        if old.identity() != settings.identity():
            differing = sorted(
                k for k in settings.identity() if old.identity()[k] != settings.identity()[k]
            )
            raise BadInputError(
                out,
                f"output folder holds a build with a different configuration ({', '.join(differing)}); "
                "use another folder or the same options",
            )
        resuming = True
    else:
        resuming = False
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(config_path, yaml.safe_dump(settings.model_dump(), sort_keys=False))
    return resuming


def _save(path: Path, record: BaseModel) -> None:
    write_text_atomic(path, record.model_dump_json(exclude_computed_fields=True, indent=1))


def _load(path: Path, model: type[Any]) -> Any:
    return model.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


@dataclass
class Builder:
    """Runs one build: ingest, then stages and instance per paper, then assemble."""

    out: Path
    settings: BuildSettings
    llm: LLMClient | None = None
    progress: ProgressHook | None = None
    drops: list[Drop] = field(default_factory=list)

    async def run(self, sources: Sequence[Path]) -> BuildResult:
        report = ingest_sources(list(sources))
        self.drops = [
            Drop(source=f.source, step="ingest", reason=f.reason) for f in report.failures
        ]
        papers = sorted(report.papers, key=lambda p: p.meta.source_path)
        if self.settings.limit is not None:
            papers = papers[: self.settings.limit]
        self._tick("papers", len(papers), "")
        finished = sum(1 for p in papers if self._finished(p))
        semaphore = asyncio.Semaphore(self.settings.paper_concurrency)

        async def one(paper: Paper) -> None:
            async with semaphore:
                await self._paper(paper)
            self._tick("papers", None, paper.title[:40])

        await asyncio.gather(*(one(p) for p in papers))
        instances, drops = self._assemble(papers)
        return BuildResult(
            instances,
            drops,
            len(papers),
            self.llm.tracker if self.llm else None,
            resumed=finished,
            out=self.out,
        )

    def _folder(self, paper: Paper) -> Path:
        return self.out / "papers" / paper.id

    def _finished(self, paper: Paper) -> bool:
        folder = self._folder(paper)
        return (folder / "instance.json").is_file() or (folder / "drop.json").is_file()

    async def _paper(self, paper: Paper) -> None:
        if self._finished(paper):
            return
        folder = self._folder(paper)
        _save(folder / "paper.json", paper)
        try:
            stages = _load(folder / "stages.json", Stages)
            if stages is None:
                stages = await self._stages(paper)
                _save(folder / "stages.json", stages)
            instance = await self._instance(paper, stages)
            _save(folder / "instance.json", instance)
        except BuildDropError as error:
            _save(
                folder / "drop.json",
                Drop(
                    source=paper.meta.source_path,
                    step=error.step,
                    reason=error.reason,
                    paper_id=paper.id,
                ),
            )
        except LLMError as error:  # unparseable, truncated or unreachable after retries
            step = type(error).__name__.removeprefix("LLM").removesuffix("Error").lower() or "llm"
            _save(
                folder / "drop.json",
                Drop(
                    source=paper.meta.source_path,
                    step=f"llm:{step}",
                    reason=str(error).splitlines()[0][:500],
                    paper_id=paper.id,
                ),
            )

    async def _stages(self, paper: Paper) -> Stages:
        if self.settings.builder == "llm":
            assert self.llm is not None
            return await LLMBuilder(self.llm, max_unit_words=self.settings.max_unit_words).stages(
                paper
            )
        from papergym.build.extractive import extract_stages

        return await asyncio.to_thread(extract_stages, paper)

    async def _instance(self, paper: Paper, stages: Stages) -> Instance:
        if self.settings.builder == "llm":
            assert self.llm is not None
            builder = LLMBuilder(self.llm, max_unit_words=self.settings.max_unit_words)
            instance = await builder.instance(paper, stages, self.settings.recipe)
            return await self._judge_leakage(instance) if self.settings.leakage_judge else instance
        from papergym.build.extractive import build_instance

        built = await asyncio.to_thread(build_instance, paper, stages, self.settings.recipe)
        if isinstance(built, Drop):
            raise BuildDropError(built.step, built.reason)
        return built

    async def _judge_leakage(self, instance: Instance) -> Instance:
        """Attach the judge's "inferable from the question alone?" verdicts (unscored on failure)."""
        from papergym.audit.formats import item_from_instance
        from papergym.audit.judge import judge_item
        from papergym.audit.overlap import attach_verdicts

        assert self.llm is not None
        item = await judge_item(self.llm, item_from_instance(instance, source=instance.source_path))
        return attach_verdicts(instance, item)

    def _assemble(self, papers: list[Paper]) -> tuple[list[Instance], list[Drop]]:
        """instances.jsonl and dropped.jsonl from the per-paper records, with the overlap screen."""
        from papergym.audit.overlap import screen_instances

        instances: list[Instance] = []
        drops = list(self.drops)
        for paper in papers:
            folder = self._folder(paper)
            instance = _load(folder / "instance.json", Instance)
            drop = _load(folder / "drop.json", Drop)
            if instance is not None:
                instances.append(instance)
            elif drop is not None:
                drops.append(drop)
        self._tick("leakage screen", 1, "")
        instances = screen_instances(instances)
        self._tick("leakage screen", None, "")
        write_jsonl(self.out / "instances.jsonl", instances)
        write_jsonl(self.out / "dropped.jsonl", drops)
        return instances, drops

    def _tick(self, step: str, total: int | None, item: str) -> None:
        if self.progress:
            self.progress(step, total, item)


def usage_json(tracker: UsageTracker | None) -> list[dict[str, object]] | None:
    return tracker.as_dict() if tracker is not None else None
