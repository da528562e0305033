"""``papergym export``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.export.command import export

app = single_app()
app.command("export")(export)
