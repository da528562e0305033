"""``papergym calibrate-reward``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.reward.calibrate import calibrate_reward

app = single_app()
app.command("calibrate-reward")(calibrate_reward)
