"""``papergym build``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.recipes.command import build

app = single_app()
app.command("build")(build)
