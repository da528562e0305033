"""A build folder made with the old stage set (``field`` before the research goal) is refused,
never resumed with the new set: its papers' stages would mix two sets."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from papergym.errors import BadInputError
from papergym.recipes.output import SETTINGS_FILE, check_output, settings_for, start_output


def test_a_folder_built_before_the_goal_stage_is_refused_naming_the_stage_sets(
    tmp_path: Path,
) -> None:
    out = tmp_path / "env"
    settings = settings_for("papergym", "extractive", None)
    start_output(out, settings)
    recorded = yaml.safe_load((out / SETTINGS_FILE).read_text(encoding="utf-8"))
    assert recorded["stages"] == "research_goal, background, solution, experiment"
    assert check_output(out, settings)  # the same stage set resumes

    del recorded["stages"]  # what a build.yaml of a release before the goal stage holds
    (out / SETTINGS_FILE).write_text(yaml.safe_dump(recorded), encoding="utf-8")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(BadInputError) as caught:
        check_output(out, settings)
    message = str(caught.value)
    assert "stages: field, background, solution, experiment → research_goal, background" in message
    assert "rebuild in a new folder" in message and "\n" not in message
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing written
