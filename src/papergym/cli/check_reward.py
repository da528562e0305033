"""``papergym check-reward``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.reward.command import check_reward

app = single_app()
app.command("check-reward")(check_reward)
