"""``papergym judge``: measure a judge against human labels (``calibrate``), and fit the offline
judge's weight and threshold (``fit``: the same command as ``papergym calibrate-reward``)."""

from __future__ import annotations

from papergym.cli.calibrate_reward import calibrate_reward
from papergym.cli.groups import sub_app
from papergym.cli.judge.calibrate import judge_calibrate

app = sub_app(
    "judge",
    "Measure a rubric judge or a reviewer against human labels (calibrate: agreement, Cohen's "
    "kappa, self-consistency); fit the offline judge (fit, alias of calibrate-reward).",
)
app.command("calibrate")(judge_calibrate)
# one code path: `judge fit` is `calibrate-reward` under the group's name
app.command("fit")(calibrate_reward)
