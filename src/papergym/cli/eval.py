"""``papergym eval``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.eval.command import EVAL_EPILOG, eval_command

app = single_app()
app.command("eval", epilog=EVAL_EPILOG)(eval_command)
