"""``papergym report``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.eval.report import report

app = single_app()
app.command("report")(report)
