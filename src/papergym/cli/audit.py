"""``papergym audit``."""

from __future__ import annotations

from papergym.audit.command import audit
from papergym.cli.groups import single_app

app = single_app()
app.command("audit")(audit)
