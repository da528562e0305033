"""The parts of an ARES build: what it reads of the configuration (:class:`AresJob`), what decides
its output, and :func:`run_shards`, the steps over the corpus into the shards
(:mod:`.run` puts them together as ``papergym build CORPUS... --recipe ares`` runs them).

The same :func:`run_shards` runs in the single process (engine ``local``) and in each task of a
datatrove executor (:mod:`.distributed`): a task is this function restricted to its shards.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from papergym.audit.overlap import Embedder
from papergym.audit.settings import AuditSection
from papergym.embed import embed
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig
from papergym.llm.types import Role
from papergym.recipes.ares.batching import BatchingEmbedder
from papergym.recipes.ares.corpus import Columns, Corpus
from papergym.recipes.ares.output import AresSettings
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.runner import AresResult, AresRunner
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.ares.shards import Mode, ShardStore
from papergym.recipes.output import role_models
from papergym.recipes.settings import BuildSection
from papergym.recipes.steps import ProgressHook
from papergym.records import Instance

LLM_ROLES: tuple[Role, ...] = ("extractor", "writer", "judge")
# Keys of the ares section that say how the run is spread, not what it produces: a resumed
# build may change them (more workers, another engine).
RUN_KEYS = frozenset({"concurrency", "engine", "tasks", "workers"})
INPUT_KEYS = frozenset({"text_column", "id_column", "url_column", "shard_size"})


class AresJob(BaseModel):
    """The sections an ARES build reads: ``ares``, the ``llm`` it calls, ``audit`` (the leakage
    screen's thresholds) and ``build`` (the builder and the row limit). Plain data: a datatrove
    task, maybe on another node, receives it as JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ares: AresSection = Field(default_factory=AresSection)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    audit: AuditSection = Field(default_factory=AuditSection)
    build: BuildSection = Field(default_factory=BuildSection)


def ares_mode(job: AresJob) -> Mode:
    """llm when an LLM is configured and ``--builder extractive`` did not ask for offline."""
    return "llm" if job.llm.configured and job.build.builder != "extractive" else "offline"


def open_corpus(paths: Sequence[Path], section: AresSection) -> Corpus:
    """The corpus under ``paths``, every file checked (a bad one is a one-line BadInputError)."""
    columns = Columns(text=section.text_column, id=section.id_column, url=section.url_column)
    return Corpus.open(paths, columns, section.max_document_mb)


def ares_settings(job: AresJob, mode: Mode) -> AresSettings:
    """What decides the output: recipe, mode, shard size, columns, the steps' keys, models and
    where they are served."""
    section = job.ares
    models, endpoints = role_models(job.llm, LLM_ROLES) if mode == "llm" else ({}, {})
    steps = section.model_dump(mode="json", exclude=set(RUN_KEYS | INPUT_KEYS))
    columns = {
        "text": section.text_column,
        "id": section.id_column,
        "url": section.url_column,
    }
    return AresSettings(
        mode=mode,
        shard_size=section.shard_size,
        columns=columns,
        steps=steps,
        models=models,
        endpoints=endpoints,
    )


def _keep_draft(draft: AresDraft) -> AresDraft:
    return draft


def _persona(draft: AresDraft) -> str | None:
    return draft.persona


def make_runner(
    corpus: Corpus,
    out: Path,
    job: AresJob,
    llm: LLMClient | None,
    *,
    progress: ProgressHook | None = None,
    owns: Callable[[int], bool] | None = None,
    embedder: Embedder | None = None,
) -> AresRunner[AresDraft]:
    """The runner of C1's step list (:func:`.pipeline.ares_steps`): LLM mode with a client,
    otherwise the offline steps, keeping the drafts they pass."""
    from papergym.recipes.ares.pipeline import ares_steps, to_instance

    # one embedding call for the documents in flight, not one per document (same domains)
    steps = ares_steps(job.ares, job.audit, llm, BatchingEmbedder(embedder or embed))
    llm_mode = llm is not None
    return AresRunner(
        out=out,
        corpus=corpus,
        steps=steps,
        start=AresDraft.start,
        finish=to_instance if llm_mode else _keep_draft,
        kept_model=Instance if llm_mode else AresDraft,
        mode="llm" if llm_mode else "offline",
        shard_size=job.ares.shard_size,
        concurrency=job.ares.concurrency,
        llm=llm,
        progress=progress,
        owns=owns,
        limit=job.build.limit,
        persona_of=_persona,
    )


async def run_shards(
    corpus: Corpus,
    out: Path,
    job: AresJob,
    *,
    progress: ProgressHook | None = None,
    owns: Callable[[int], bool] | None = None,
    llm: LLMClient | None = None,
) -> AresResult:
    """Run the build's shards (those ``owns`` accepts) with a client made from ``job.llm``."""
    client = llm
    if client is None and ares_mode(job) == "llm":
        client = LLMClient.from_config(job.llm)
    try:
        runner = make_runner(corpus, out, job, client, progress=progress, owns=owns)
        return await runner.run()
    finally:
        if client is not None and llm is None:
            await client.aclose()


def summarise(out: Path, job: AresJob, mode: Mode) -> AresResult:
    """The build's totals from its progress records and shard files (after any engine)."""
    from papergym.recipes.ares.runner import collect_result

    return collect_result(ShardStore(out, job.ares.shard_size), mode)
