"""``papergym serve-reward``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.reward.command import SERVE_REWARD_EPILOG, serve_reward

app = single_app()
app.command("serve-reward", epilog=SERVE_REWARD_EPILOG)(serve_reward)
