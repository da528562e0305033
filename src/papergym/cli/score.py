"""``papergym score``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.reward.command import score

app = single_app()
app.command("score")(score)
