"""``papergym calibrate-reward``: fit the offline judge's weight and threshold, and write them as
a calibration file with their figures and provenance (see :mod:`papergym.reward.offline`)."""

from __future__ import annotations

import datetime
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from papergym import __version__
from papergym.cli.common import DebugOption, JsonOption, print_summary, reports_errors
from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl, write_text_atomic
from papergym.records import Instance


def one_per_paper(instances: list[Instance]) -> tuple[list[Instance], int]:
    """The first instance of each paper, and how many were left out.

    Negatives pair a criterion with *other* papers' references; two instances of one paper
    (two recipes) would count a paper's own reference as a negative.
    """
    seen: dict[str, Instance] = {}
    for instance in instances:
        seen.setdefault(instance.paper_id, instance)
    return list(seen.values()), len(instances) - len(seen)


def describe(instances: list[Instance], name: str) -> str:
    """The data, in words, for the provenance: counts, builders, recipes and the file's name
    (never its path: the file may ship to other machines)."""

    def counted(values: list[str]) -> str:
        return ", ".join(f"{k} ×{n}" for k, n in sorted(Counter(values).items()))

    return (
        f"{len(instances)} instances, one per paper, from {name} "
        f"(builder: {counted([i.builder for i in instances])}; "
        f"recipe: {counted([i.recipe for i in instances])})"
    )


@reports_errors
def calibrate_reward(
    instances: Annotated[
        Path,
        typer.Argument(
            help="instances.jsonl from `papergym build` (the extractive builder: see below).",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="The calibration file to write (JSON). Use it with the config key "
            "reward.calibration=FILE.",
            show_default=False,
        ),
    ],
    data: Annotated[
        str | None,
        typer.Option(
            "--data",
            help="What the instances are, in words, for the file's provenance. Default: their "
            "count, builders, recipes and the file's name (never a path).",
            show_default=False,
        ),
    ] = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Calibrate the offline judge: choose its lexical weight and threshold on built instances.

    Each specific criterion is scored against its own instance's reference answer (a positive)
    and every other paper's (negatives); for each lexical weight 0, 0.1, ..., 1 the threshold
    with the best balanced accuracy is found, and the weight with the best balanced accuracy,
    then AUC, then margin wins. One instance per paper is used (the first). The file holds the
    weight, threshold, figures and provenance (this command, the data, the date, the papergym
    version); the judge uses the one shipped in the package unless reward.calibration names
    another. Build the instances with --builder extractive, as the shipped file was: its
    figures are then comparable.
    """
    from papergym.reward.offline import CalibrationProvenance, calibrate, calibration_file

    if out.is_dir():
        raise BadInputError(out, "is a folder; -o takes the path of the calibration file")
    loaded, repeated = one_per_paper(read_jsonl(instances, Instance))
    if len(loaded) < 2:
        raise BadInputError(instances, "calibration needs instances of at least two papers")
    if not any(instance.rubric.specific for instance in loaded):
        raise BadInputError(instances, "no instance has specific criteria to calibrate on")
    report = calibrate(loaded)
    provenance = CalibrationProvenance(
        command=f"papergym calibrate-reward {instances.name} -o {out.name}",
        data=data if data is not None else describe(loaded, instances.name),
        date=datetime.datetime.now(datetime.UTC).date(),
        papergym_version=__version__,
        note=f"{repeated} more instances of papers already used were left out" if repeated else "",
    )
    write_text_atomic(out, calibration_file(report, provenance))
    summary = {
        "lexical_weight": report.lexical_weight,
        "threshold": report.threshold,
        "balanced_accuracy": report.balanced_accuracy,
        "auc": report.auc,
        "margin": report.margin,
        "instances": report.instances,
        "positives": report.positives,
        "negatives": report.negatives,
        "left_out": repeated,
        "written": str(out),
    }
    print_summary("Offline judge calibration", summary, json_output)
