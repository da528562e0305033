"""Build steps: small named components that take a record and return the next one, or a drop.

A recipe is a list of :class:`Step`. Each step's ``run`` receives the record (a frozen pydantic
model that accumulates the work done so far) and returns either the next record or a
:class:`Reject` naming why the item goes no further. That is the only way a step drops an item:
no exception is a drop. Errors of an LLM endpoint are not drops: they propagate, and the runner
leaves the item unfinished for the next run.

The fields a step fills in are listed in ``produces``; where the outputs go is the runner's
:class:`StepStore`. The paper build's :class:`StepFolder` saves each as ``<field>.json`` once the
step has run and, on a resumed build, loads them back instead of running the step again, so work
continues from the last finished step; the last step's fields mark an item finished. A step that
produces nothing (a pure filter) is simply run again on resume. ARES keeps nothing per document
(:data:`KEEP_NOTHING`: a corpus has hundreds of thousands; it resumes by shard).

:func:`run_item` is the one place both builds turn an item's run into its outcome: the last
record, a :class:`~papergym.records.Drop` (a step's Reject, or output still invalid after the LLM
layer's repairs: ``llm:output``), or a :class:`~papergym.records.BuildFailure` when the endpoint
failed (not a drop: the next run retries the item). :func:`drops_by_step` counts drops per step
and reason for both builds' summaries and cards.

Adding a recipe means writing its record, its steps and a list; the runner does not change. An
ARES-like recipe over plain documents, for instance::

    class DocumentDraft(BaseModel):
        model_config = ConfigDict(frozen=True)
        document: Document
        persona: str | None = None
        qa: QAPair | None = None

    async def long_enough(doc: DocumentDraft) -> DocumentDraft | Reject:
        return doc if doc.document.words >= 300 else Reject("shorter than 300 words")

    async def persona(doc: DocumentDraft) -> DocumentDraft | Reject:
        return doc.model_copy(update={"persona": await write_persona(doc.document)})

    ARES_STEPS = [
        Step("filter", long_enough),                       # nothing saved: cheap to re-run
        Step("persona", persona, produces=("persona",)),   # persona.json
        Step("qa", co_generate, produces=("qa",)),         # qa.json: the item is finished
    ]
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, TypeAdapter

from papergym.jsonl import write_text_atomic
from papergym.llm.types import (
    BudgetExceededError,
    LLMError,
    LLMOutputError,
    LLMTransportError,
    LLMTruncatedError,
)
from papergym.records import BuildFailure, Drop
from papergym.redact import redact

R = TypeVar("R", bound=BaseModel)
MAX_REASON_CHARS = 500
REASON_SHOWN_CHARS = 90
"""Drop reasons are counted (summaries, the ARES card) on their first 90 characters."""
ProgressHook = Callable[[str, int | None, str], None]
"""A runner's progress: (step, total, item); the first call of a step gives its total (None:
not known), each later one (total None) says one more ``item`` passed it."""


@dataclass(frozen=True)
class Reject:
    """Why an item goes no further. ``step`` names the gate when it is not the step itself (the
    stages step of the LLM recipe drops at its "reduce" gate, as older builds recorded it)."""

    reason: str
    step: str | None = None


@dataclass(frozen=True)
class Step(Generic[R]):
    """One named step of a recipe: ``run`` maps a record to the next record or a Reject."""

    name: str
    run: Callable[[R], Awaitable[R | Reject]]
    produces: tuple[str, ...] = ()


def in_thread(function: Callable[[R], R | Reject]) -> Callable[[R], Awaitable[R | Reject]]:
    """A CPU-bound step run on a worker thread, so the event loop keeps other items' calls flowing."""

    async def run(record: R) -> R | Reject:
        return await asyncio.to_thread(function, record)

    return run


@cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    annotation = model.model_fields[name].annotation
    assert annotation is not None, f"{model.__name__}.{name} has no type"
    return TypeAdapter(annotation)


def dump_record(value: Any, adapter: TypeAdapter[Any] | None = None) -> str:
    """The JSON saved for a step output (models as the build always wrote them)."""
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_computed_fields=True, indent=1)
    adapter = adapter or TypeAdapter(type(value))
    return adapter.dump_json(value, indent=1, exclude_computed_fields=True).decode("utf-8")


class StepStore(Protocol):
    """Where a runner keeps an item's step outputs: loaded back instead of running a finished
    step again, saved once a step has run."""

    def load(self, record: R, step: Step[R]) -> R | None:
        """``record`` with the step's saved outputs, or None when the step has not finished."""
        ...

    def save(self, record: R, step: Step[R]) -> None:
        """Keep the outputs of the step that just made ``record``."""
        ...


class KeepNothing:
    """A store that keeps no step output: every step runs (ARES, which resumes by shard)."""

    def load(self, record: R, step: Step[R]) -> R | None:
        return None

    def save(self, record: R, step: Step[R]) -> None:
        return None


KEEP_NOTHING = KeepNothing()


@dataclass(frozen=True)
class StepFolder:
    """Where one item's step outputs live (``papers/<id>/`` for a paper)."""

    path: Path

    def file(self, name: str) -> Path:
        return self.path / f"{name}.json"

    def has(self, step: Step[Any]) -> bool:
        return bool(step.produces) and all(self.file(n).is_file() for n in step.produces)

    def load(self, record: R, step: Step[R]) -> R | None:
        """``record`` with the step's saved outputs, or None when the step has not finished."""
        if not self.has(step):
            return None
        model = type(record)
        update = {
            name: _adapter(model, name).validate_json(self.file(name).read_bytes())
            for name in step.produces
        }
        return record.model_copy(update=update)

    def save(self, record: R, step: Step[R]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        for name in step.produces:
            value = getattr(record, name)
            write_text_atomic(self.file(name), dump_record(value, _adapter(type(record), name)))


async def run_steps(
    record: R, steps: Sequence[Step[R]], store: StepStore = KEEP_NOTHING
) -> tuple[R, Reject | None]:
    """Run ``steps`` from the first one not finished in ``store``; the last record and the drop.

    A returned Reject always names its step. Exceptions (an endpoint's failure) propagate with
    every finished step saved, so the next run starts where this one stopped.
    """
    for step in steps:
        loaded = store.load(record, step)
        if loaded is not None:
            record = loaded
            continue
        result = await step.run(record)
        if isinstance(result, Reject):
            return record, replace(result, step=result.step or step.name)
        store.save(result, step)
        record = result
    return record, None


# --- an item's outcome ---------------------------------------------------------------------------


def first_line(error: BaseException) -> str:
    """An error's first line, redacted and bounded, as a drop or failure reason."""
    lines = str(error).strip().splitlines()
    return redact(lines[0] if lines else type(error).__name__)[:MAX_REASON_CHARS]


def model_reason(text: str) -> str:
    """A model's stated reason on one line, redacted and bounded, as a drop reason holds it."""
    return redact(" ".join(text.split()))[:MAX_REASON_CHARS]


def failure_step(error: LLMError) -> str:
    """The step a failure of the endpoint is recorded under (``llm:transport``...)."""
    if isinstance(error, LLMTransportError):
        return "llm:transport"
    if isinstance(error, LLMTruncatedError):
        return "llm:truncated"
    if isinstance(error, BudgetExceededError):
        return "llm:budget"
    return "llm:error"


async def run_item(
    record: R, steps: Sequence[Step[R]], store: StepStore, *, source: str, item_id: str
) -> R | Drop | BuildFailure:
    """Run an item (``item_id``, read from ``source``) through ``steps``: the last record when
    every step passed it, else the Drop or the BuildFailure it ends as (see the module's doc)."""
    try:
        record, reject = await run_steps(record, steps, store)
    except LLMOutputError as error:  # still no valid output after the LLM layer's repairs
        reject = Reject(first_line(error), step="llm:output")
    except LLMError as error:  # the endpoint's failure: retried on the next run
        return BuildFailure(
            source=source, step=failure_step(error), reason=first_line(error), paper_id=item_id
        )
    if reject is None:
        return record
    return Drop(
        source=source, step=reject.step or "build", reason=redact(reject.reason), paper_id=item_id
    )


def drops_by_step(
    drops: Iterable[Drop | BuildFailure], kind: Callable[[str], str] | None = None
) -> Counter[tuple[str, str]]:
    """How many items each step dropped (or the endpoint failed), by reason: the reason's
    ``kind`` when given (ARES counts ``min_words``, not each count of words), its first
    :data:`REASON_SHOWN_CHARS` characters."""
    return Counter(
        (d.step, (kind(d.reason) if kind else d.reason)[:REASON_SHOWN_CHARS]) for d in drops
    )
