"""The build runner: owns the output folder, resume, concurrency, drops and progress.

Layout of ``OUT/``::

    config.yaml                 the resolved configuration (no secrets, no endpoint URLs)
    papers/<paper_id>/          per paper: paper.json, stages.json, then instance.json or drop.json
    instances.jsonl             every instance, assembled from papers/ at the end
    dropped.jsonl               every rejection of a paper: source, step, reason
    failed.jsonl                papers this run could not finish because the endpoint failed
    card.md, card.json          the dataset card

A paper is finished once it has instance.json or drop.json, written atomically; a re-run skips
finished papers and re-uses stages.json, and the LLM response cache makes any repeated call free,
so killing a build at any point and running the same command again finishes it with no
duplicates and no repeated calls.

A drop is a property of the paper (a failed gate, output still invalid after repairs, LaTeX that
cannot be read). A failure of the endpoint (unreachable, 5xx or 4xx after retries, an answer still
truncated after a larger budget, the budget spent) is not: such a paper is left unfinished, listed
in failed.jsonl for this run, and retried by the next run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
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
from papergym.llm.types import (
    BudgetExceededError,
    LLMError,
    LLMOutputError,
    LLMTransportError,
    LLMTruncatedError,
    Role,
)
from papergym.llm.usage import UsageTracker
from papergym.records import (
    BuilderName,
    BuildFailure,
    Drop,
    Instance,
    Paper,
    RecipeName,
    Stages,
)
from papergym.redact import redact
from papergym.sources.discover import discover

ProgressHook = Callable[[str, int | None, str], None]  # (step, total or None, item) → advance

# Steps under which older builds saved endpoint failures as drop.json ("llm:" + the error class
# name without LLM/Error, lower-cased). Such a drop did not come from the paper: on resume the
# paper is treated as unfinished and built again. "llm:output" (invalid output after the repairs)
# stays a drop, and this version never writes these steps to drop.json.
RETRIED_DROP_STEPS: frozenset[str] = frozenset(
    {"llm:transport", "llm:truncated", "llm:budgetexceeded", "llm:llm"}
)
MAX_REASON_CHARS = 500


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
        """The fields a resumed build must share with the one that wrote the folder.

        Endpoint URLs and keys are not part of it (nor of config.yaml): the same model behind
        another replica, or a rotated key, continues the same build. The leakage judge counts
        only for LLM builds, the only ones that call it.
        """
        identity: dict[str, Any] = {
            "recipe": self.recipe,
            "builder": self.builder,
            "models": self.models,
            "max_unit_words": self.max_unit_words,
        }
        if self.builder == "llm":
            identity["leakage_judge"] = self.leakage_judge
        return identity


def settings_for(
    recipe: RecipeName,
    builder: BuilderName,
    llm: LLMConfig | None,
    *,
    leakage_judge: bool = True,
    **extra: Any,
) -> BuildSettings:
    models: dict[str, str] = {}
    if builder == "llm" and llm is not None:
        roles: tuple[Role, ...] = ("extractor", "writer", "rubric")
        for role in (*roles, "judge") if leakage_judge else roles:
            backend = llm.roles.get(role, llm.default)
            if backend is not None:
                models[role] = f"{backend.backend}:{backend.model}"
    return BuildSettings(
        recipe=recipe,
        builder=builder,
        models=models,
        # The extractive builder never calls a judge; its config must not say it did.
        leakage_judge=leakage_judge and builder == "llm",
        **extra,
    )


@dataclass
class BuildResult:
    instances: list[Instance]
    drops: list[Drop]
    papers: int
    usage: UsageTracker | None
    resumed: int = 0
    out: Path = Path()
    failures: list[BuildFailure] = field(default_factory=list)


# --- the output folder ---------------------------------------------------------------------------


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _shown(value: Any) -> str:
    return "(none)" if value is None else redact(str(value))


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``key: old → new`` for every identity key that differs (nested keys dotted, e.g. models.judge)."""
    before, after = _flat(old), _flat(new)
    return [
        f"{key}: {_shown(before.get(key))} → {_shown(after.get(key))}"
        for key in sorted(before.keys() | after.keys())
        if before.get(key) != after.get(key)
    ]


def _previous_identity(config_path: Path) -> dict[str, Any]:
    """The identity recorded in an existing config.yaml (keys it lacks take today's defaults)."""
    try:
        previous = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
        if not isinstance(previous, dict):
            raise ValueError("not a mapping")
        defaults = BuildSettings().model_dump()
        # Keys of other versions are ignored: only what decides the output is compared.
        known = {key: previous.get(key, value) for key, value in defaults.items()}
        return BuildSettings.model_validate({**known, "papergym_version": ""}).identity()
    except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError) as error:
        reason = " ".join(str(error).split())[:200]
        raise BadInputError(config_path, f"not a PaperGym build configuration: {reason}") from None


def check_output(out: Path, settings: BuildSettings) -> bool:
    """Whether ``out`` resumes a build (True) or is new (False); writes nothing.

    Refuses a path that is a file or lies under one, a non-empty folder that holds no build, and
    a build made with another configuration (naming the keys that differ, old → new).
    """
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "output path exists and is not a folder")
    existing = next((p for p in (out, *out.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise BadInputError(out, f"cannot create the output folder: {existing} is not a folder")
    if not (out.is_dir() and any(out.iterdir())):
        return False
    config_path = out / "config.yaml"
    if not config_path.is_file():
        raise BadInputError(
            out, "output folder is not empty and holds no PaperGym build (config.yaml)"
        )
    differences = _differences(_previous_identity(config_path), settings.identity())
    if differences:
        raise BadInputError(
            out,
            "output folder holds a build with a different configuration ("
            + "; ".join(differences)
            + "); use another folder or the same options",
        )
    return True


def start_output(out: Path, settings: BuildSettings) -> None:
    """Create ``out`` and record the configuration (call :func:`check_output` first)."""
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "config.yaml", yaml.safe_dump(settings.model_dump(), sort_keys=False))


def prepare_output(out: Path, settings: BuildSettings) -> bool:
    """Check then create ``out``; True when resuming (:func:`check_output` + :func:`start_output`)."""
    resuming = check_output(out, settings)
    start_output(out, settings)
    return resuming


# --- reading the sources ---------------------------------------------------------------------------


@dataclass
class BuildInput:
    """The papers to build and the sources that could not be read, paths relative to SOURCE."""

    papers: list[Paper]
    drops: list[Drop]


def _relative(path: str, roots: Sequence[Path]) -> str:
    """``path`` relative to the SOURCE argument it was found under, or the argument's own name
    when it is the paper itself, so that shared datasets never carry the builder's local paths."""
    found = Path(path)
    for root in sorted(roots, key=lambda r: len(r.parts), reverse=True):
        if found == root:
            return root.name or root.resolve().name
        if found.is_relative_to(root):
            return found.relative_to(root).as_posix()
    return found.name or path


def _renamed(text: str, source: str, relative: str) -> str:
    """``text`` with the paper's local path replaced by its relative one (files inside it too)."""
    return text.replace(source, relative) if "/" in source else text


def _relative_paper(paper: Paper, roots: Sequence[Path]) -> Paper:
    source = paper.meta.source_path
    relative = _relative(source, roots)
    meta = paper.meta.model_copy(
        update={
            "source_path": relative,
            "warnings": tuple(_renamed(w, source, relative) for w in paper.meta.warnings),
        }
    )
    return paper.model_copy(update={"meta": meta})


def read_sources(sources: Sequence[Path]) -> BuildInput:
    """Ingest ``sources`` for a build; writes nothing.

    A SOURCE that does not exist or holds no LaTeX, or sources of which not one paper can be
    read, is a :class:`BadInputError` (one line naming the path): nothing to build, so nothing
    is written. Papers that fail among readable ones become ``ingest`` drops.
    """
    for source in sources:
        discover(Path(source))  # raises, naming the path, before anything is written
    report = ingest_sources(list(sources))
    if not report.papers:
        first = report.failures[0] if report.failures else None
        if first is None:
            raise BadInputError(None, "no paper to build in the sources given")
        more = f" (and {len(report.failures) - 1} more)" if len(report.failures) > 1 else ""
        raise BadInputError(first.source, f"no paper could be read: {first.reason}{more}")
    roots = [Path(s) for s in sources]
    papers = [_relative_paper(p, roots) for p in report.papers]
    drops = []
    for failure in report.failures:
        relative = _relative(failure.source, roots)
        reason = redact(_renamed(failure.reason, failure.source, relative))
        drops.append(Drop(source=relative, step="ingest", reason=reason))
    return BuildInput(sorted(papers, key=lambda p: p.meta.source_path), drops)


# --- per-paper records -------------------------------------------------------------------------------


def _save(path: Path, record: BaseModel) -> None:
    write_text_atomic(path, record.model_dump_json(exclude_computed_fields=True, indent=1))


def _load(path: Path, model: type[Any]) -> Any:
    return model.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def _final_drop(folder: Path) -> Drop | None:
    """The paper's drop, unless it is an endpoint failure recorded as a drop by an older build."""
    drop: Drop | None = _load(folder / "drop.json", Drop)
    if drop is None or drop.step in RETRIED_DROP_STEPS:
        return None
    return drop.model_copy(update={"reason": redact(drop.reason)})


def _reason(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return redact(lines[0] if lines else type(error).__name__)[:MAX_REASON_CHARS]


def _failure_step(error: LLMError) -> str:
    if isinstance(error, LLMTransportError):
        return "llm:transport"
    if isinstance(error, LLMTruncatedError):
        return "llm:truncated"
    if isinstance(error, BudgetExceededError):
        return "llm:budget"
    return "llm:error"


@dataclass
class Builder:
    """Runs one build: stages and instance per paper, then assemble."""

    out: Path
    settings: BuildSettings
    llm: LLMClient | None = None
    progress: ProgressHook | None = None
    drops: list[Drop] = field(default_factory=list)

    async def run(self, sources: Sequence[Path] | BuildInput) -> BuildResult:
        given = sources if isinstance(sources, BuildInput) else read_sources(list(sources))
        self.drops = list(given.drops)
        papers = given.papers
        if self.settings.limit is not None:
            papers = papers[: self.settings.limit]
        self._tick("papers", len(papers), "")
        finished = sum(1 for p in papers if self._finished(p))
        semaphore = asyncio.Semaphore(self.settings.paper_concurrency)

        async def one(paper: Paper) -> BuildFailure | None:
            async with semaphore:
                failure = await self._paper(paper)
            self._tick("papers", None, paper.title[:40])
            return failure

        outcomes = await asyncio.gather(*(one(p) for p in papers))
        failures = [f for f in outcomes if f is not None]
        instances, drops = self._assemble(papers, failures)
        return BuildResult(
            instances,
            drops,
            len(papers),
            self.llm.tracker if self.llm else None,
            resumed=finished,
            out=self.out,
            failures=failures,
        )

    def _folder(self, paper: Paper) -> Path:
        return self.out / "papers" / paper.id

    def _finished(self, paper: Paper) -> bool:
        folder = self._folder(paper)
        return (folder / "instance.json").is_file() or _final_drop(folder) is not None

    async def _paper(self, paper: Paper) -> BuildFailure | None:
        """Build one paper; a failure of the endpoint is returned, and leaves it unfinished."""
        if self._finished(paper):
            return None
        folder = self._folder(paper)
        (folder / "drop.json").unlink(missing_ok=True)  # an older build's endpoint failure
        _save(folder / "paper.json", paper)
        try:
            stages = _load(folder / "stages.json", Stages)
            if stages is None:
                stages = await self._stages(paper)
                _save(folder / "stages.json", stages)
            instance = await self._instance(paper, stages)
            _save(folder / "instance.json", instance)
        except BuildDropError as error:
            self._drop(paper, error.step, error.reason)
        except LLMOutputError as error:  # still no valid output after the repairs: the paper's
            self._drop(paper, "llm:output", _reason(error))
        except LLMError as error:  # the endpoint's failure: retried on the next run
            return BuildFailure(
                source=paper.meta.source_path,
                step=_failure_step(error),
                reason=_reason(error),
                paper_id=paper.id,
            )
        return None

    def _drop(self, paper: Paper, step: str, reason: str) -> None:
        drop = Drop(
            source=paper.meta.source_path, step=step, reason=redact(reason), paper_id=paper.id
        )
        _save(self._folder(paper) / "drop.json", drop)

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
        """Attach the judge's "inferable from the question alone?" verdicts.

        Output the judge cannot get right after the repairs leaves the verdicts unscored, as in
        ``papergym audit``; a failure of the endpoint propagates instead, so that the paper is
        retried rather than saved with verdicts that are missing for no reason of its own.
        """
        from papergym.audit.formats import item_from_instance
        from papergym.audit.judge import (
            STAGE,
            TOKENS_PER_VERDICT,
            judge_messages,
            judgement_schema,
            unscored,
            verdicts_from,
        )
        from papergym.audit.overlap import attach_verdicts

        assert self.llm is not None
        item = item_from_instance(instance, source=instance.source_path)
        count = len(item.criteria)
        if not count:
            return instance
        params = self.llm.config.for_role("judge").params
        params = params.model_copy(
            update={"max_tokens": max(params.max_tokens, TOKENS_PER_VERDICT * count + 256)}
        )
        try:
            result = await self.llm.call(
                "judge",
                judge_messages(item),
                schema=judgement_schema(count),
                params=params,
                stage=STAGE,
            )
        except LLMOutputError as error:
            verdicts = unscored(item, f"judge failed: {_reason(error)}")
        else:
            parsed = verdicts_from(result.parsed, count) if result.parsed is not None else None
            verdicts = parsed or unscored(item, f"judge did not return {count} verdicts")
        return attach_verdicts(instance, item.with_verdicts(verdicts))

    def _assemble(
        self, papers: list[Paper], failures: Iterable[BuildFailure]
    ) -> tuple[list[Instance], list[Drop]]:
        """instances.jsonl, dropped.jsonl and failed.jsonl from the per-paper records."""
        from papergym.audit.overlap import screen_instances

        instances: list[Instance] = []
        drops = list(self.drops)
        for paper in papers:
            folder = self._folder(paper)
            # Records of older builds may carry a local path or a secret: cleaned on resume.
            source = {"source_path": paper.meta.source_path}
            instance = _load(folder / "instance.json", Instance)
            drop = _final_drop(folder)
            if instance is not None:
                if instance.source_path != paper.meta.source_path:
                    instance = instance.model_copy(update=source)
                    _save(folder / "instance.json", instance)
                    _save(folder / "paper.json", paper)
                instances.append(instance)
            elif drop is not None:
                drop = drop.model_copy(update={"source": paper.meta.source_path})
                if drop != _load(folder / "drop.json", Drop):
                    _save(folder / "drop.json", drop)
                    _save(folder / "paper.json", paper)
                drops.append(drop)
        self._tick("leakage screen", 1, "")
        instances = screen_instances(instances)
        self._tick("leakage screen", None, "")
        write_jsonl(self.out / "instances.jsonl", instances)
        write_jsonl(self.out / "dropped.jsonl", drops)
        write_jsonl(self.out / "failed.jsonl", failures)
        return instances, drops

    def _tick(self, step: str, total: int | None, item: str) -> None:
        if self.progress:
            self.progress(step, total, item)


def usage_json(tracker: UsageTracker | None) -> list[dict[str, object]] | None:
    return tracker.as_dict() if tracker is not None else None
