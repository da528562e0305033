"""``papergym compare``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.eval.compare import compare

app = single_app()
app.command("compare")(compare)
