"""``papergym calibrate-reward``: fit the offline judge's weight and threshold, and write them as
a calibration file with their figures and provenance (see :mod:`papergym.reward.offline`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from papergym.cli.common import DebugOption, JsonOption, print_summary, reports_errors
from papergym.cli.groups import single_app
from papergym.reward.run import calibrate_offline_judge

app = single_app()


@app.command("calibrate-reward")
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
    summary = calibrate_offline_judge(instances, out, data)
    print_summary("Offline judge calibration", summary, json_output)
