"""``papergym compare``: multi-way comparisons of eval folders' answers by LLM judges.

For each question a judge sees the systems' answers labelled A, B, C… and picks the best
overall, on method and on experiments (or a tie). Judges prefer some positions whatever they
read, so every question is shown in a set of orderings in which each system holds each
position equally often: every permutation up to 3 systems, a Williams design (a balanced Latin
square) beyond. Position bias then cancels out of the win rates and can be measured on its own:
the share of decisive verdicts that went to position A, against the 1/n an unbiased judge gives.

What is reported: per system and criterion, win / tie / loss rates over the parsed verdicts,
with 95% intervals from a bootstrap over questions (a question's verdicts resampled together);
the position-bias rate; with several judges, Fleiss' κ over items (question × ordering) ×
judges, categories the systems and the tie. A verdict the judge's answer could not be parsed
for (after the LLM layer's repairs) is counted apart, never as a loss, and every rate says its
denominator.

The reference answer is not shown by default (``compare.reference``): eval's rubric reward
already measures closeness to the paper's own plan, and a judge given the paper's plan tends to
prefer the answer that resembles it; compare asks the complementary question, which plan is
better on its merits. With ``compare.reference=true`` the reference is shown as one possible
approach, not the bar.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Annotated, Any, Literal, cast

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from papergym import __version__
from papergym.cliutil import (
    ApiKeyEnvOption,
    BaseUrlOption,
    CacheDirOption,
    DebugOption,
    JsonOption,
    LLMConfigOption,
    ModelOption,
    NoCacheOption,
    reports_errors,
    stderr,
    stdout,
)
from papergym.errors import BadInputError
from papergym.eval.compare_records import (
    CONFIG_FILE,
    CRITERIA,
    SUMMARY_FILE,
    TIE,
    VERDICTS_FILE,
    Agreement,
    CompareCriterion,
    CompareSummary,
    CompareVerdict,
    CriterionResult,
    Pick,
    PositionBias,
    SystemRates,
)
from papergym.eval.data import load_eval_data
from papergym.eval.log import RecordLog
from papergym.eval.records import ANSWERS_FILE, EvalAnswer, EvalSummary
from papergym.eval.records import SUMMARY_FILE as EVAL_SUMMARY_FILE
from papergym.eval.stats import bootstrap_ratio, fleiss_kappa
from papergym.eval.systems import ENDPOINT_PREFIX
from papergym.jsonl import iter_json_lines, write_text_atomic
from papergym.llm.cache import ResponseCache, default_cache_dir
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.structured import strip_reasoning
from papergym.llm.types import (
    ROLES,
    BudgetExceededError,
    LLMError,
    LLMTransportError,
    Message,
    Role,
)
from papergym.llm.usage import UsageTracker
from papergym.llm.verdicts import failure_reason
from papergym.records import Instance, content_hash
from papergym.redact import redact, redact_url
from papergym.settings.cli import ConfigOption, flags, llm_flags, paths_and_overrides, resolve
from papergym.settings.load import config_yaml
from papergym.settings.models import CompareSection, PaperGymConfig

STAGE = "compare"
"""The stage the judges' calls are accounted under in the usage table."""

MAX_SYSTEMS = 26
"""One label per letter."""

MAX_PERMUTED = 3
"""Up to this many systems every permutation is shown (6 at most); beyond, a Williams design."""

Design = Literal["permutations", "williams"]


# -- orderings ---------------------------------------------------------------------------------


def labels(count: int) -> tuple[str, ...]:
    """The labels of ``count`` answers, in the order shown: A, B, C, …"""
    if not 1 <= count <= MAX_SYSTEMS:
        raise ValueError(f"between 1 and {MAX_SYSTEMS} answers can be labelled, not {count}")
    return tuple(string.ascii_uppercase[:count])


def williams_design(count: int) -> list[tuple[int, ...]]:
    """A Williams design for ``count`` treatments: rows in which each treatment holds each
    position equally often (a Latin square) and follows each other treatment equally often.

    The first row is 0, 1, n−1, 2, n−2, …; row r adds r to it (mod n). For even n those n rows
    balance first-order carryover (each ordered pair adjacent exactly once); for odd n no
    single square can, so the mirror of each row is added: 2n rows, each pair adjacent twice.
    """
    if count < 1:
        raise ValueError("a design needs at least one treatment")
    first = [0]
    low, high = 1, count - 1
    while len(first) < count:
        if len(first) % 2:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
    rows = [tuple((value + shift) % count for value in first) for shift in range(count)]
    if count % 2:
        rows += [row[::-1] for row in rows]
    return rows


def design(count: int) -> tuple[Design, list[tuple[int, ...]]]:
    """The orderings shown for ``count`` systems: every permutation up to 3, else Williams."""
    if count <= MAX_PERMUTED:
        return "permutations", list(itertools.permutations(range(count)))
    return "williams", williams_design(count)


def orderings_of(systems: Sequence[str]) -> tuple[Design, list[tuple[str, ...]]]:
    """The design applied to ``systems`` (index i is ``systems[i]``)."""
    kind, rows = design(len(systems))
    return kind, [tuple(systems[i] for i in row) for row in rows]


# -- the judge's answer ------------------------------------------------------------------------


class _Comparison(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@functools.cache
def answer_schema(count: int) -> type[BaseModel]:
    """The judge's answer for ``count`` plans: the reasoning first, then one label (or "tie")
    per criterion. The labels are an enum, so a pick outside them is a validation error the
    LLM layer repairs by re-asking."""
    choice: Any = cast(Any, Literal).__getitem__((*labels(count), TIE))
    described = "The label of the best plan on this criterion, or tie."
    model: type[BaseModel] = create_model(
        f"Comparison{count}",
        __base__=_Comparison,
        reason=(str, Field(description="A few sentences comparing the plans.")),
        overall=(choice, Field(description=described)),
        method=(choice, Field(description=described)),
        experiment=(choice, Field(description=described)),
    )
    return model


def map_picks(parsed: BaseModel, ordering: Sequence[str]) -> dict[CompareCriterion, Pick]:
    """Each criterion's label mapped back to the system shown under it."""
    shown = labels(len(ordering))
    picks: dict[CompareCriterion, Pick] = {}
    for criterion in CRITERIA:
        label = str(getattr(parsed, criterion))
        system = TIE if label == TIE else ordering[shown.index(label)]
        picks[criterion] = Pick(label=label, system=system)
    return picks


# -- the prompt --------------------------------------------------------------------------------

_REFERENCE_INTRO = (
    "A reference plan, from the paper the task was taken from, is shown after the question. It "
    "is one possible approach, not the bar: a plan that differs from it may be better."
)


@functools.cache
def _template_text() -> str:
    return resources.files("papergym.eval").joinpath("prompts", "compare.md").read_text("utf-8")


def _spoken(items: Sequence[str]) -> str:
    """``A, B and C``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def shown_answer(answer: str, limit: int) -> tuple[str, bool]:
    """The answer as the judge sees it: reasoning blocks removed, cut at ``limit`` characters
    (0: no limit); and whether it was cut."""
    text = strip_reasoning(answer)
    if limit and len(text) > limit:
        return text[:limit], True
    return text, False


def compare_messages(
    question: str, answers: Sequence[str], reference: str | None = None
) -> list[Message]:
    """The one user message asking to compare ``answers`` (in the order shown)."""
    shown = labels(len(answers))
    plans = "\n\n".join(
        f"Plan {label}:\n<<<\n{answer.strip()}\n>>>"
        for label, answer in zip(shown, answers, strict=True)
    )
    has_reference = bool(reference and reference.strip())
    content = Template(_template_text()).substitute(
        count=len(answers),
        labels=_spoken(shown),
        question=question.strip(),
        reference_intro=_REFERENCE_INTRO if has_reference else "",
        reference_block=f"Reference plan:\n<<<\n{(reference or '').strip()}\n>>>\n"
        if has_reference
        else "",
        plans=plans,
    )
    return [Message(role="user", content=re.sub(r"\n{3,}", "\n\n", content).strip())]


def setup_id(section: CompareSection) -> str:
    """A hash of what decides a prompt besides the question and the answers: verdicts of
    another setup must not be mixed into one report."""
    return content_hash(
        {
            "template": _template_text(),
            "reference": section.reference,
            "max_answer_chars": section.max_answer_chars,
            "sample": section.sample,
        },
        length=12,
    )


# -- judges ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Judge:
    """A judge: the name recorded (a role, or ``openai:MODEL@URL`` masked), and where its
    calls go."""

    name: str
    role: Role
    config: LLMConfig

    @property
    def model(self) -> str:
        return self.config.for_role(self.role).model


NO_LLM = (
    "compare needs an LLM judge and none is configured: pass --judge openai:MODEL@URL, or "
    "--base-url URL --model MODEL (llm.default.base_url= llm.default.model=), or --llm-config "
    "FILE, or -c FILE with an llm section"
)


def _endpoint_judge(spec: str, llm: LLMConfig) -> Judge:
    model, at, url = spec[len(ENDPOINT_PREFIX) :].rpartition("@")
    if not at or not model or not url.startswith(("http://", "https://")):
        raise BadInputError(
            None, f"judge {redact(spec)!r}: an endpoint judge is openai:MODEL@http(s)://HOST/v1"
        )
    # the default backend's settings (key variable, timeouts, retries, repairs, sampling) and
    # the section's prices, cache and budget apply, so an endpoint judge behind the same
    # gateway needs nothing more
    endpoint: dict[str, object] = {"backend": "openai", "model": model, "base_url": (url,)}
    if llm.default is not None:
        backend = llm.default.model_copy(update=endpoint)
    else:
        backend = BackendConfig(model=model, base_url=(url,))
    config = llm.model_copy(update={"default": None, "roles": {"judge": backend}})
    return Judge(f"{ENDPOINT_PREFIX}{model}@{redact_url(url)}", "judge", config)


def resolve_judges(specs: Sequence[str], llm: LLMConfig) -> list[Judge]:
    """Each judge spec: a role of the llm section, or ``openai:MODEL@URL``."""
    judges: list[Judge] = []
    for raw in specs:
        spec = raw.strip()
        if spec.startswith(ENDPOINT_PREFIX):
            judges.append(_endpoint_judge(spec, llm))
            continue
        if spec not in ROLES:
            raise BadInputError(
                None,
                f"judge {redact(spec)!r}: a judge is a role ({', '.join(ROLES)}) or "
                "openai:MODEL@URL",
            )
        if not llm.configured:
            raise BadInputError(None, NO_LLM)
        role: Role = spec
        llm.for_role(role)  # a role with no backend (and no default) fails here, not later
        judges.append(Judge(spec, role, llm))
    names = [j.name for j in judges]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise BadInputError(None, f"judge {repeated[0]!r} is given twice")
    return judges


# -- eval folders ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalFolder:
    """What compare reads from one eval folder: its summary and the compared answers."""

    path: Path
    summary: EvalSummary
    answers: dict[str, dict[str, str]]
    """system → instance id → the answer (of the compared sample)."""


def _read_summary(folder: Path) -> EvalSummary:
    path = folder / EVAL_SUMMARY_FILE
    if not folder.is_dir():
        raise BadInputError(folder, "no such eval folder (EVAL_DIR is a `papergym eval` -o folder)")
    if not path.is_file():
        raise BadInputError(
            path, "missing: not a finished `papergym eval` folder (run its eval command again)"
        )
    try:
        return EvalSummary.model_validate_json(path.read_bytes())
    except ValidationError as error:
        first = str(error).splitlines()[0]
        raise BadInputError(path, f"not an eval summary: {first}") from None


def _answer_at(path: Path, number: int, row: object) -> EvalAnswer:
    try:
        return EvalAnswer.model_validate(row)
    except ValidationError as error:
        first = " ".join(str(error).splitlines()[:2])
        raise BadInputError(f"{path}:{number}", f"not an eval answer: {first}") from None


def read_eval_folder(folder: Path, sample: int) -> EvalFolder:
    """An eval folder's summary and answers; a file that is not whole (a missing, duplicate or
    unknown instance id, an unknown system, a missing sample) is one-line bad input."""
    summary = _read_summary(folder)
    if sample >= summary.samples:
        raise BadInputError(
            folder,
            f"compare.sample={sample}, but this eval drew {summary.samples} sample(s) per "
            "question (samples are numbered from 0)",
        )
    path = folder / ANSWERS_FILE
    systems = [s.system.name for s in summary.systems]
    known = set(summary.instance_ids)
    answers: dict[str, dict[str, str]] = {name: {} for name in systems}
    lines: dict[tuple[str, str, int], int] = {}
    for number, row in iter_json_lines(path):
        answer = _answer_at(path, number, row)
        where = f"{path}:{number}"
        if answer.system not in answers:
            raise BadInputError(
                where, f"system {answer.system!r} is not in {EVAL_SUMMARY_FILE} ({systems})"
            )
        if answer.instance_id not in known:
            raise BadInputError(
                where, f"instance id {answer.instance_id!r} is not among the evaluated questions"
            )
        key = (answer.system, answer.instance_id, answer.sample)
        if key in lines:
            raise BadInputError(
                where,
                f"duplicate answer of {answer.system!r} to {answer.instance_id!r} (sample "
                f"{answer.sample}; first on line {lines[key]})",
            )
        lines[key] = number
        if answer.sample == sample:
            answers[answer.system][answer.instance_id] = answer.answer
    for name in systems:
        missing = [i for i in summary.instance_ids if i not in answers[name]]
        if missing:
            raise BadInputError(
                path,
                f"system {name!r} has no answer (sample {sample}) to {len(missing)} question(s), "
                f"first {missing[0]!r}: run its eval again to finish it",
            )
    return EvalFolder(folder, summary, answers)


def check_same_data(folders: Sequence[EvalFolder]) -> None:
    """Refuse folders evaluated on different data, naming the first two that differ."""
    first = folders[0]
    for other in folders[1:]:
        if other.summary.data_id != first.summary.data_id:
            a, b = first.summary, other.summary
            raise BadInputError(
                None,
                f"EVAL_DIRs built on different data: {first.path} ({a.data}, split {a.split}, "
                f"{a.questions} questions, data_id {a.data_id}) and {other.path} ({b.data}, "
                f"split {b.split}, {b.questions} questions, data_id {b.data_id})",
            )


def compared_systems(folders: Sequence[EvalFolder]) -> list[str]:
    """Every folder's systems, in command-line order; a name twice is bad input."""
    owner: dict[str, Path] = {}
    for folder in folders:
        for name in folder.answers:
            if name in owner:
                raise BadInputError(
                    None,
                    f"system {name!r} is in both {owner[name]} and {folder.path}; name them "
                    "apart in eval (NAME=SPEC)",
                )
            owner[name] = folder.path
    systems = list(owner)
    if len(systems) < 2:
        raise BadInputError(
            None, f"compare needs at least 2 systems; the EVAL_DIRs hold {len(systems)}"
        )
    if len(systems) > MAX_SYSTEMS:
        raise BadInputError(
            None, f"compare takes at most {MAX_SYSTEMS} systems, not {len(systems)}"
        )
    return systems


def load_questions(summary: EvalSummary, data: Path | None) -> list[Instance]:
    """The evaluated questions, in the eval's order, from the data it was run on (or ``data``);
    data that is not what the eval was run on (another data_id) is bad input."""
    path = data or Path(summary.data)
    if not path.exists():
        raise BadInputError(
            path,
            "the data the EVAL_DIRs were evaluated on is not here; pass its path with --data",
        )
    loaded = load_eval_data(path, "all", None)
    by_id = {i.id: i for i in loaded.instances}
    chosen = [by_id[i] for i in summary.instance_ids if i in by_id]
    found = content_hash([[i.id, i.question, i.rubric.model_dump(mode="json")] for i in chosen])
    if len(chosen) != len(summary.instance_ids) or found != summary.data_id:
        raise BadInputError(
            path,
            f"not the data the EVAL_DIRs were evaluated on (data_id {summary.data_id}); pass "
            "that data with --data",
        )
    return chosen


# -- running -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One verdict to ask for."""

    instance: Instance
    ordering: tuple[str, ...]
    judge: Judge

    def key(self, setup: str) -> tuple[str, tuple[str, ...], str, str, str]:
        return (self.instance.id, self.ordering, self.judge.name, self.judge.model, setup)


def plan_tasks(
    questions: Sequence[Instance], orderings: Sequence[tuple[str, ...]], judges: Sequence[Judge]
) -> list[Task]:
    """Every question × ordering × judge, question by question."""
    return [Task(q, o, j) for q in questions for o in orderings for j in judges]


def check_resumable(done: Sequence[CompareVerdict], planned: set[Any], where: Path) -> None:
    """Verdicts already in ``where`` must all belong to this comparison."""
    for verdict in done:
        if verdict.key not in planned:
            raise BadInputError(
                where,
                f"holds a verdict of another comparison (question {verdict.instance_id!r}, "
                f"judge {verdict.judge!r} ({verdict.model}), order {', '.join(verdict.ordering)}, setup "
                f"{verdict.setup}); compare into another -o folder",
            )


async def ask(
    llm: LLMClient,
    task: Task,
    answers: dict[str, dict[str, str]],
    section: CompareSection,
    setup: str,
) -> CompareVerdict:
    """One verdict; an answer that cannot be parsed (after the LLM layer's repairs) or is cut
    by the token limit is an unparsed verdict. Endpoint failures and a spent budget propagate:
    they say nothing about the answers, so they are not recorded and the next run asks again."""
    shown = [
        shown_answer(answers[s][task.instance.id], section.max_answer_chars) for s in task.ordering
    ]
    reference = task.instance.reference_answer if section.reference else None
    messages = compare_messages(task.instance.question, [text for text, _ in shown], reference)
    truncated = tuple(s for s, (_, cut) in zip(task.ordering, shown, strict=True) if cut)
    base = {
        "instance_id": task.instance.id,
        "judge": task.judge.name,
        "model": task.judge.model,
        "ordering": task.ordering,
        "setup": setup,
        "truncated": truncated,
    }
    try:
        result = await llm.call(
            task.judge.role, messages, schema=answer_schema(len(task.ordering)), stage=STAGE
        )
    except (LLMTransportError, BudgetExceededError):
        raise
    except LLMError as error:
        return CompareVerdict(**base, picks=None, unparsed_reason=redact(failure_reason(error)))
    if result.parsed is None:  # cannot happen with a schema; never a silent loss if it does
        return CompareVerdict(**base, picks=None, unparsed_reason="no parsed answer")
    return CompareVerdict(
        **base,
        picks=map_picks(result.parsed, task.ordering),
        reason=redact(str(getattr(result.parsed, "reason", ""))),
    )


@dataclass
class RunOutcome:
    verdicts: list[CompareVerdict]
    failed: list[str]


async def run_tasks(
    clients: dict[str, LLMClient],
    tasks: Sequence[Task],
    answers: dict[str, dict[str, str]],
    section: CompareSection,
    setup: str,
    on_verdict: Callable[[CompareVerdict], None],
) -> RunOutcome:
    """Ask every task at once (the LLM layer bounds concurrency); each verdict is handed to
    ``on_verdict`` as it arrives, so an interrupted run keeps what it finished."""
    verdicts: list[CompareVerdict] = []
    failed: list[str] = []

    async def one(task: Task) -> None:
        try:
            verdict = await ask(clients[task.judge.name], task, answers, section, setup)
        except (LLMTransportError, BudgetExceededError) as error:
            failed.append(redact(f"{type(error).__name__}: {error}"))
            return
        verdicts.append(verdict)
        on_verdict(verdict)

    await asyncio.gather(*(one(task) for task in tasks))
    return RunOutcome(verdicts, failed)


# -- the report --------------------------------------------------------------------------------


def _by_question(
    verdicts: Iterable[CompareVerdict], questions: Sequence[str]
) -> dict[str, list[CompareVerdict]]:
    grouped: dict[str, list[CompareVerdict]] = {q: [] for q in questions}
    for verdict in verdicts:
        grouped.setdefault(verdict.instance_id, []).append(verdict)
    return grouped


def _position_bias(
    grouped: dict[str, list[CompareVerdict]],
    criterion: CompareCriterion,
    count: int,
    resamples: int,
    seed: int,
) -> PositionBias:
    firsts: list[float] = []
    decisive: list[float] = []
    by_label: Counter[str] = Counter()
    for verdicts in grouped.values():
        picks = [v.picks[criterion] for v in verdicts if v.picks is not None]
        chosen = [p.label for p in picks if p.label != TIE]
        by_label.update(chosen)
        firsts.append(float(sum(label == "A" for label in chosen)))
        decisive.append(float(len(chosen)))
    total = int(sum(decisive))
    return PositionBias(
        first=bootstrap_ratio(firsts, decisive, resamples=resamples, seed=seed),
        expected=1.0 / count,
        by_position={
            label: (by_label[label] / total if total else None) for label in labels(count)
        },
        decisive=total,
    )


def _system_rates(
    grouped: dict[str, list[CompareVerdict]],
    criterion: CompareCriterion,
    system: str,
    resamples: int,
    seed: int,
) -> SystemRates:
    wins: list[float] = []
    ties: list[float] = []
    losses: list[float] = []
    parsed: list[float] = []
    for verdicts in grouped.values():
        picks = [v.picks[criterion].system for v in verdicts if v.picks is not None]
        wins.append(float(picks.count(system)))
        ties.append(float(picks.count(TIE)))
        losses.append(float(len(picks) - picks.count(system) - picks.count(TIE)))
        parsed.append(float(len(picks)))

    def rate(counts: list[float]) -> Any:
        # the same seed for each: the three rates come from the same resampled questions
        return bootstrap_ratio(counts, parsed, resamples=resamples, seed=seed)

    return SystemRates(
        system=system,
        wins=int(sum(wins)),
        ties=int(sum(ties)),
        losses=int(sum(losses)),
        win=rate(wins),
        tie=rate(ties),
        loss=rate(losses),
    )


def criterion_result(
    verdicts: Sequence[CompareVerdict],
    criterion: CompareCriterion,
    *,
    systems: Sequence[str],
    questions: Sequence[str],
    judges: Sequence[str],
    resamples: int,
    seed: int,
) -> CriterionResult:
    """Rates and position bias on one criterion, from every verdict given."""
    grouped = _by_question(verdicts, questions)
    parsed = sum(v.parsed for v in verdicts)
    by_judge: dict[str, PositionBias] = {}
    if len(judges) > 1:
        for judge in judges:
            own = _by_question((v for v in verdicts if v.judge == judge), questions)
            by_judge[judge] = _position_bias(own, criterion, len(systems), resamples, seed)
    return CriterionResult(
        criterion=criterion,
        verdicts=len(verdicts),
        parsed=parsed,
        unparsed=len(verdicts) - parsed,
        systems=tuple(_system_rates(grouped, criterion, s, resamples, seed) for s in systems),
        position_bias=_position_bias(grouped, criterion, len(systems), resamples, seed),
        position_bias_by_judge=by_judge,
    )


def agreement(
    verdicts: Sequence[CompareVerdict],
    criterion: CompareCriterion,
    *,
    systems: Sequence[str],
    judges: Sequence[str],
) -> Agreement:
    """Fleiss' κ of ``judges`` on one criterion; items are question × ordering, categories
    the systems and the tie. An item any judge has no parsed verdict on is excluded."""
    categories = [*systems, TIE]
    items: dict[tuple[str, tuple[str, ...]], dict[str, str | None]] = {}
    for verdict in verdicts:
        pick = verdict.picks[criterion].system if verdict.picks is not None else None
        items.setdefault((verdict.instance_id, verdict.ordering), {})[verdict.judge] = pick
    rows: list[list[int]] = []
    excluded = 0
    for ratings in items.values():
        picks = [ratings.get(judge) for judge in judges]
        if any(p is None for p in picks):
            excluded += 1
            continue
        rows.append([picks.count(category) for category in categories])
    kappa = fleiss_kappa(rows)
    return Agreement(
        criterion=criterion,
        kappa=kappa.kappa,
        observed=kappa.observed,
        expected=kappa.expected,
        items=len(rows),
        excluded=excluded,
        judges=len(judges),
    )


def _reason_kind(reason: str) -> str:
    """An unparsed reason without its last details (a parser's line and column), so that
    verdicts that failed the same way are counted together."""
    return ": ".join(reason.split(": ")[:5])


def summarise(
    verdicts: Sequence[CompareVerdict],
    *,
    folders: Sequence[Path],
    data_id: str,
    systems: Sequence[str],
    judges: Sequence[str],
    questions: Sequence[str],
    kind: Design,
    orderings: Sequence[tuple[str, ...]],
    section: CompareSection,
    judge_models: dict[str, str] | None = None,
    usage: Sequence[dict[str, object]] = (),
) -> CompareSummary:
    """The summary of a finished comparison."""
    parsed = sum(v.parsed for v in verdicts)
    reasons = Counter(_reason_kind(v.unparsed_reason or "") for v in verdicts if not v.parsed)
    return CompareSummary(
        version=__version__,
        eval_dirs=tuple(str(f) for f in folders),
        data_id=data_id,
        systems=tuple(systems),
        judges=tuple(judges),
        judge_models=judge_models or {},
        reference_shown=section.reference,
        design=kind,
        orderings=tuple(orderings),
        questions=len(questions),
        verdicts=len(verdicts),
        parsed=parsed,
        unparsed=len(verdicts) - parsed,
        unparsed_reasons=dict(reasons),
        resamples=section.resamples,
        seed=section.seed,
        criteria=tuple(
            criterion_result(
                verdicts,
                c,
                systems=systems,
                questions=questions,
                judges=judges,
                resamples=section.resamples,
                seed=section.seed,
            )
            for c in CRITERIA
        ),
        agreement=tuple(agreement(verdicts, c, systems=systems, judges=judges) for c in CRITERIA)
        if len(judges) > 1
        else (),
        usage=tuple(usage),
    )


# -- the command -------------------------------------------------------------------------------


def _clients(judges: Sequence[Judge], llm: LLMConfig) -> dict[str, LLMClient]:
    """A client per judge, sharing one cache and one usage tracker (and so one budget)."""
    cache = None
    if llm.cache:
        cache = ResponseCache((llm.cache_dir or default_cache_dir()) / "responses.sqlite")
    tracker = UsageTracker(
        prices=dict(llm.prices), budget_usd=llm.budget_usd, budget_tokens=llm.budget_tokens
    )
    return {j.name: LLMClient(j.config, cache=cache, tracker=tracker) for j in judges}


async def _judge_all(
    judges: Sequence[Judge],
    llm: LLMConfig,
    tasks: Sequence[Task],
    answers: dict[str, dict[str, str]],
    section: CompareSection,
    setup: str,
    log: RecordLog[CompareVerdict],
    on_start: Callable[[], None],
) -> tuple[RunOutcome, UsageTracker]:
    clients = _clients(judges, llm)
    tracker = next(iter(clients.values())).tracker
    progress = Progress(
        TextColumn("compare"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=True,
        disable=not stderr.is_terminal,
    )
    try:
        for judge in judges:  # a dead endpoint is bad input before any question is asked
            try:
                await clients[judge.name].ping([judge.role])
            except LLMError as error:
                raise BadInputError(None, redact(f"judge {judge.name}: {error}")) from None
        on_start()
        with progress:
            bar = progress.add_task("", total=len(tasks))

            def done(verdict: CompareVerdict) -> None:
                log.append([verdict])
                progress.update(bar, advance=1)

            outcome = await run_tasks(clients, tasks, answers, section, setup, done)
    finally:
        for client in clients.values():
            await client.aclose()
    return outcome, tracker


def compare_config(
    config_file: Path | None,
    overrides: Sequence[str],
    judge: str | None,
    judges: str | None,
    llm_options: Sequence[Any],
) -> PaperGymConfig:
    """The command's configuration; --judge and --judges set compare.judges."""
    if judge is not None and judges is not None:
        raise BadInputError(None, "give --judge or --judges, not both")
    listed = [j.strip() for j in judges.split(",") if j.strip()] if judges is not None else None
    if listed is not None and not listed:
        raise BadInputError(None, "--judges is empty; give J1,J2,...")
    given = flags(
        judge=("compare.judges", "--judge", [judge] if judge is not None else None),
        judges=("compare.judges", "--judges", listed),
    )
    return resolve(config_file, overrides, [*given, *llm_options])


def _cell(estimate: Any) -> str:
    if estimate.value is None:
        return "–"
    return f"{estimate.value:.3f} [{estimate.low:.3f}, {estimate.high:.3f}]"


def print_summary(summary: CompareSummary, json_output: bool) -> None:
    """A table per criterion, then position bias, unparsed counts and agreement."""
    if json_output:
        print(json.dumps(summary.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    for result in summary.criteria:
        table = Table(
            title=f"{result.criterion}: {result.parsed} parsed of {result.verdicts} verdicts "
            f"({result.unparsed} unparsed, counted apart)",
            title_justify="left",
        )
        for column in ("system", "win [95% CI]", "tie", "loss", "wins", "ties", "losses"):
            table.add_column(column, no_wrap=column != "system")
        for rates in result.systems:
            table.add_row(
                rates.system,
                _cell(rates.win),
                _cell(rates.tie),
                _cell(rates.loss),
                str(rates.wins),
                str(rates.ties),
                str(rates.losses),
            )
        stdout.print(table)
        bias = result.position_bias
        stdout.print(
            f"  position bias: answer shown first won {_cell(bias.first)} of "
            f"{bias.decisive} decisive verdicts (unbiased: {bias.expected:.3f})"
        )
    for kappa in summary.agreement:
        value = "–" if kappa.kappa is None else f"{kappa.kappa:.3f}"
        stdout.print(
            f"agreement ({kappa.criterion}): Fleiss' κ {value} over {kappa.items} items × "
            f"{kappa.judges} judges ({kappa.excluded} items excluded: a judge's verdict unparsed)"
        )
    stdout.print(
        f"{summary.questions} questions × {len(summary.orderings)} orderings ({summary.design}) "
        f"× {len(summary.judges)} judge(s) = {summary.verdicts} verdicts; {summary.unparsed} "
        "unparsed"
    )


EVAL_DIRS_HELP = (
    "Folders written by `papergym eval -o` (their systems are compared together; all must be "
    "evaluated on the same data), and config overrides (compare.reference=true)."
)


@reports_errors
def compare(
    arguments: Annotated[
        list[str],
        typer.Argument(
            help=EVAL_DIRS_HELP, metavar="EVAL_DIR... [KEY=VALUE]...", show_default=False
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Output folder: verdicts.jsonl, summary.json, config.yaml. Running the same "
            "command again skips the verdicts already there.",
            show_default=False,
        ),
    ],
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="The judge: a role of the llm config (default: judge) or openai:MODEL@URL. "
            "Sets compare.judges.",
            show_default=False,
        ),
    ] = None,
    judges: Annotated[
        str | None,
        typer.Option(
            "--judges",
            help="Several judges, comma-separated (J1,J2): each asked every question in every "
            "order; their agreement is reported as Fleiss' κ. Sets compare.judges.",
            show_default=False,
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="The data the EVAL_DIRs were evaluated on, when it is no longer at the path "
            "their summary.json names (checked against their data_id).",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    llm_config: LLMConfigOption = None,
    base_url: BaseUrlOption = None,
    model: ModelOption = None,
    api_key_env: ApiKeyEnvOption = None,
    no_cache: NoCacheOption = False,
    cache_dir: CacheDirOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Compare the answers of several systems with an LLM judge: win, tie and loss rates with intervals.

    For each question the judge sees every system's answer, labelled A, B, C..., and picks the best overall, on method and on experiments (or a tie). Each question is shown in every order of the answers up to 3 systems, and in a balanced Latin square (Williams design) beyond, so each system holds each position equally often. Reported per system and criterion: win / tie / loss rates over the parsed verdicts with 95% intervals (bootstrap over questions); the position-bias rate (how often the answer shown first wins, against 1/n); with several judges, Fleiss' κ. A verdict the judge's answer could not be parsed for is counted apart, never as a loss. The reference answer is not shown unless compare.reference=true.

    Writes OUT/verdicts.jsonl (one per question × order × judge: the labels picked, the systems they map to, the reason), summary.json and config.yaml. Exit code 0 when done; 1 when some verdicts failed at the endpoint (run the same command again: finished verdicts are kept); 2 on bad input (EVAL_DIRs on different data, a broken answers file, no judge configured, an endpoint down), with nothing written.
    """
    paths, overrides = paths_and_overrides(arguments)
    if not paths:
        raise BadInputError(None, "no EVAL_DIR given (every argument was a key=value)")
    if out.exists() and not out.is_dir():
        raise BadInputError(out, "is a file; -o takes an output folder")
    resolved = compare_config(
        config,
        overrides,
        judge,
        judges,
        llm_flags(llm_config, base_url, model, api_key_env, no_cache, cache_dir),
    )
    section = resolved.compare
    judge_list = resolve_judges(section.judges, resolved.llm)
    folders = [read_eval_folder(path, section.sample) for path in paths]
    check_same_data(folders)
    systems = compared_systems(folders)
    questions = load_questions(folders[0].summary, data)
    answers = {name: texts for f in folders for name, texts in f.answers.items()}
    kind, orderings = orderings_of(systems)
    setup = setup_id(section)
    tasks = plan_tasks(questions, orderings, judge_list)
    log: RecordLog[CompareVerdict] = RecordLog(out / VERDICTS_FILE, CompareVerdict)
    done = log.read()
    check_resumable(done, {t.key(setup) for t in tasks}, log.path)
    finished = {v.key for v in done}
    todo = [t for t in tasks if t.key(setup) not in finished]

    def start() -> None:  # once every check passed: bad input leaves nothing behind
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(out / CONFIG_FILE, config_yaml(resolved))

    outcome, tracker = asyncio.run(
        _judge_all(judge_list, resolved.llm, todo, answers, section, setup, log, start)
    )
    if outcome.failed:
        stderr.print(
            f"error: {len(outcome.failed)} of {len(tasks)} verdicts failed at the endpoint "
            f"(first: {outcome.failed[0]}); run the same command again to finish them "
            f"({len(done) + len(outcome.verdicts)} are kept in {log.path})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)
    keys = {t.key(setup) for t in tasks}
    unique = {v.key: v for v in reversed([*done, *outcome.verdicts]) if v.key in keys}
    summary = summarise(
        [unique[t.key(setup)] for t in tasks],
        folders=paths,
        data_id=folders[0].summary.data_id,
        systems=systems,
        judges=[j.name for j in judge_list],
        judge_models={j.name: j.model for j in judge_list},
        questions=[q.id for q in questions],
        kind=kind,
        orderings=orderings,
        section=section,
        usage=tracker.as_dict(),
    )
    write_text_atomic(out / SUMMARY_FILE, summary.model_dump_json(indent=2) + "\n")
    print_summary(summary, json_output)
