"""``papergym fake-llm``."""

from __future__ import annotations

from papergym.cli.groups import single_app
from papergym.fakellm.command import FAKE_LLM_EPILOG, fake_llm

app = single_app()
app.command("fake-llm", epilog=FAKE_LLM_EPILOG)(fake_llm)
