"""``papergym audit --usefulness`` as a function: :func:`run_usefulness`.

It measures every criterion of a folder's judged answers (:mod:`.usefulness`), applies the
keep/reweight/drop rule (:mod:`.usefulness_rule`) and, with an output folder, writes the report
and the instances with the rule applied. Reading the folders (an eval folder, a training run)
is done by the packages that write them (:mod:`papergym.eval.usefulness`,
:mod:`papergym.train.usefulness`), which sit above this one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import Field

from papergym.audit.settings import UsefulnessSection
from papergym.audit.usefulness import CriterionUsefulness, UsefulnessInput, measure_all
from papergym.audit.usefulness_rule import apply_recommendations, recommend
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.records import Record

USEFULNESS_REPORT_FILE = "usefulness_report.json"
RUBRIC_FILE = "instances.jsonl"
SIMILARITY = "token Jaccard of content-word stems (papergym.audit.overlap.content_stems)"


class UsefulnessReport(Record):
    """Everything ``audit --usefulness`` found; a table on the terminal, this with --json."""

    source: str
    kind: Literal["eval", "run"]
    groups: int = Field(description="Answer groups read (GRPO groups, or eval questions).")
    answers: int
    instances: str | None = Field(description="The instances file the rubric came from.")
    similarity: str = SIMILARITY
    leakage_measured: bool = Field(
        description="Whether any criterion carried leakage verdicts; if not, leakage was not "
        "measured (audit the instances with `papergym audit -o` and pass its instances.jsonl)."
    )
    counts: dict[str, int] = Field(description="Criteria per recommendation.")
    criteria: tuple[CriterionUsefulness, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    written: tuple[str, ...] = ()


def run_usefulness(
    data: UsefulnessInput, section: UsefulnessSection, out: Path | None = None
) -> UsefulnessReport:
    """Measure and judge every criterion of ``data``; with ``out``, write the report and the
    rubric file (the instances with the recommendations applied). Writing needs the instances:
    without them it is a :class:`~papergym.errors.BadInputError`, raised before anything is
    written."""
    if out is not None:
        if out.exists() and not out.is_dir():
            raise BadInputError(out, "output path exists and is not a folder")
        if data.instances is None:
            raise BadInputError(
                data.source,
                "its instances were not found, so no rubric file can be written; pass --instances",
            )
    decided = tuple(recommend(stats, section) for stats in measure_all(data))
    report = UsefulnessReport(
        source=str(data.source),
        kind=data.kind,
        groups=len(data.groups),
        answers=sum(len(g.answers) for g in data.groups),
        instances=str(data.instances_path) if data.instances_path else None,
        leakage_measured=any(c.leakage for c in data.criteria),
        counts=dict(Counter(d.recommendation for d in decided)),
        criteria=decided,
        notes=data.notes,
    )
    if out is None or data.instances is None:
        return report
    rubric, warnings = apply_recommendations(data.instances, decided)
    written = (str(out / USEFULNESS_REPORT_FILE), str(out / RUBRIC_FILE))
    report = report.model_copy(update={"warnings": tuple(warnings), "written": written})
    write_jsonl(out / RUBRIC_FILE, rubric)
    write_text_atomic(out / USEFULNESS_REPORT_FILE, report.model_dump_json(indent=2) + "\n")
    return report
