"""The process's configuration, read by each package as the sections it needs: a command's whole
configuration, else the file ``$PAPERGYM_CONFIG`` names (a verl worker, OpenRLHF, a TRL script)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from papergym import processconfig
from papergym.errors import BadInputError
from papergym.review.runtime import ReviewSections
from papergym.reward.runtime import RewardSections
from papergym.reward.settings import RewardSection
from papergym.settings import PaperGymConfig


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    processconfig.set_shared(None)
    yield
    processconfig.set_shared(None)


def _config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("PAPERGYM_CONFIG", str(path))
    for name in ("PAPERGYM_REWARD_JUDGE", "PAPERGYM_REWARD_ALPHA", "PAPERGYM_LLM_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return path


def test_a_command_s_configuration_is_read_as_each_package_s_sections() -> None:
    config = PaperGymConfig(reward=RewardSection(alpha=0.25))
    processconfig.set_shared(config)
    reward = processconfig.sections(RewardSections)
    assert reward.reward is config.reward and reward.llm is config.llm
    assert processconfig.sections(ReviewSections).review is config.review
    assert processconfig.sections(RewardSections) is reward  # read once


def test_without_one_each_reads_its_sections_from_the_file_and_ignores_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config_file(
        tmp_path, monkeypatch, "reward: {alpha: 0.5}\nopsd: {steps: 3}\nreview: {reviewers: 2}\n"
    )
    assert processconfig.sections(RewardSections).reward.alpha == 0.5
    assert processconfig.sections(ReviewSections).review.reviewers == 2


def test_a_bad_key_inside_a_read_section_is_still_one_line_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config_file(tmp_path, monkeypatch, "reward: {alpah: 0.5}\n")
    with pytest.raises(BadInputError) as caught:
        processconfig.sections(RewardSections)
    message = str(caught.value)
    assert (
        str(path) in message and "reward.alpah: unknown key (did you mean reward.alpha?)" in message
    )


def test_setting_another_configuration_forgets_what_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _config_file(tmp_path, monkeypatch, "reward: {alpha: 0.5}\n")
    assert processconfig.sections(RewardSections).reward.alpha == 0.5
    processconfig.set_shared(PaperGymConfig(reward=RewardSection(alpha=0.9)))
    assert processconfig.sections(RewardSections).reward.alpha == 0.9
    processconfig.set_shared(None)
    assert processconfig.sections(RewardSections).reward.alpha == 0.5
