"""The root command line lists its verbs without importing them, and its table of one-line
summaries says what each verb's own help says."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from papergym.cli import VERBS, PaperGymGroup


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: v.name)
def test_each_summary_is_the_verbs_own_first_sentence(verb: object) -> None:
    command = PaperGymGroup().get_command(None, verb.name)  # type: ignore[attr-defined]
    assert command is not None
    assert command.get_short_help_str(limit=10_000) == verb.summary  # type: ignore[attr-defined]


def test_root_help_imports_no_verb_and_no_configuration() -> None:
    code = (
        "import sys, json\n"
        "from papergym.cli import app\n"
        "try:\n"
        "    app(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('papergym'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded == ["papergym", "papergym.cli", "papergym.cli.groups"]
